package io.rpctimer.bench.dedup;

/** The service {@link DedupBench} calls: returns its argument, so that the RPC is all there is to measure. */
public interface Echo {

    /** @return {@code text} */
    String echo(String text);
}
