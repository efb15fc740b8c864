package io.rpctimer.bench.happypath;

import java.util.List;
import java.util.Locale;

/**
 * How the callers call in one phase: sync (threads block in {@code send}) or async ({@code sendAsync}, futures
 * complete on Dubbo's threads); closed loop at saturation (a fixed number of calls in flight, the next sent when one
 * answers) or open loop at a fixed rate (call {@code i} is due at {@code start + i / rate}, and its latency is taken
 * from that intended time, so a stalled caller cannot hide the calls it failed to send: no coordinated omission).
 *
 * @param sync        sync or async callers
 * @param concurrency closed loop: calls in flight (caller threads for sync); open loop: sync caller threads
 * @param perSecond   open loop: the rate; 0 for closed loop
 *
 * <p><b>Threading:</b> immutable; thread-safe.
 */
record Workload(boolean sync, int concurrency, int perSecond) {

    Workload {
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency: " + concurrency + " (expected: >= 1)");
        }
        if (perSecond < 0) {
            throw new IllegalArgumentException("perSecond: " + perSecond + " (expected: >= 0, 0 = closed loop)");
        }
    }

    /** Sync open-loop callers: enough threads that a slow call does not delay the next slot. */
    static final int OPEN_LOOP_SYNC_THREADS = 32;

    /**
     * @return the four workloads: sync and async at saturation ({@code threads} sync callers, {@code outstanding}
     *     async calls in flight), then sync and async at {@code perSecond}
     */
    static List<Workload> standard(int threads, int outstanding, int perSecond) {
        return List.of(new Workload(true, threads, 0), new Workload(false, outstanding, 0),
                new Workload(true, OPEN_LOOP_SYNC_THREADS, perSecond), new Workload(false, 1, perSecond));
    }

    boolean closedLoop() {
        return perSecond == 0;
    }

    /** @return e.g. {@code sync, saturation, 8 threads} or {@code async, 2000/s} */
    String label() {
        String callers = sync ? "sync" : "async";
        if (closedLoop()) {
            return String.format(Locale.ROOT, "%s, saturation, %d %s", callers, concurrency,
                    sync ? "threads" : "in flight");
        }
        return String.format(Locale.ROOT, "%s, %d/s", callers, perSecond);
    }
}
