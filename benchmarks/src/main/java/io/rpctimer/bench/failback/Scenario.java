package io.rpctimer.bench.failback;

import io.rpctimer.bench.failback.LoadSender.Callers;
import io.rpctimer.demo.provider.DemoProvider;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The four scenarios of the comparison, each with its sizes for a quick and a full run. Times of fault
 * steps are milliseconds from the first call's slot. Two providers, {@code p1} and {@code p2}; the consumer's
 * timeout is 1 s in every scenario.
 *
 * <p><b>Threading:</b> immutable.
 */
enum Scenario {

    /** (a) One of two providers hangs longer than the timeout for a while. */
    A("a", "one hangs", "one of two providers hangs past the timeout for a while") {
        @Override
        Plan plan(boolean full) {
            int calls = full ? 200 : 100;
            long until = full ? 8_000 : 4_000;
            return new Plan(Callers.SYNC, calls, 20, List.of(
                    new Step(0, "p1 holds every new call 3 s", ps -> ps.get(0).faults().hang(Duration.ofSeconds(3))),
                    new Step(until, "p1 answers at once again (calls it holds finish their 3 s)",
                            ps -> ps.get(0).faults().hang(Duration.ZERO))),
                    String.format(Locale.ROOT, "p1 holds every call 3 s (timeout 1 s) from 0 to %d s; p2 healthy",
                            until / 1000));
        }
    },

    /** (b) Both providers hang for 20 s. */
    B("b", "both hang", "both providers hang") {
        @Override
        Plan plan(boolean full) {
            int calls = full ? 100 : 120;
            long from = 2_000;
            long until = full ? 22_000 : 10_000;
            return new Plan(Callers.SYNC, calls, full ? 4 : 8, List.of(
                    new Step(from, "p1 and p2 hold every new call until released", ps -> ps.forEach(
                            p -> p.faults().hang(Duration.ofMinutes(2)))),
                    new Step(until, "p1 and p2 release the calls they hold and answer at once again",
                            ps -> ps.forEach(p -> p.faults().clear()))),
                    String.format(Locale.ROOT, "p1 and p2 hold every call from %d s to %d s (%d s; timeout 1 s), "
                            + "then release them all", from / 1000, until / 1000, (until - from) / 1000));
        }
    },

    /** (c) Both providers fail every call at the RPC level for 8 s while 300 calls go out. */
    C("c", "both fail", "both providers fail every call") {
        @Override
        Plan plan(boolean full) {
            int calls = full ? 300 : 200;
            long until = full ? 8_000 : 5_000;
            double rate = calls * 1000.0 / until;
            return new Plan(Callers.SYNC, calls, rate, List.of(
                    new Step(0, "p1 and p2 fail every call at the RPC level",
                            ps -> ps.forEach(p -> p.faults().errorRate(1.0))),
                    new Step(until, "p1 and p2 healthy again", ps -> ps.forEach(p -> p.faults().errorRate(0)))),
                    String.format(Locale.ROOT, "p1 and p2 fail every call at the RPC level from 0 to %d s, while all "
                            + "%d calls go out", until / 1000, calls));
        }
    },

    /** (d) Async callers with a failing provider. */
    D("d", "async", "async callers, one provider failing") {
        @Override
        Plan plan(boolean full) {
            int calls = full ? 200 : 100;
            return new Plan(Callers.ASYNC, calls, 20, List.of(
                    new Step(0, "p1 fails every call at the RPC level", ps -> ps.get(0).faults().errorRate(1.0))),
                    "p1 fails every call at the RPC level for the whole run; p2 healthy; CompletableFuture callers");
        }
    };

    final String id;
    /** A word or two, for the chart's axis. */
    final String label;
    final String title;

    Scenario(String id, String label, String title) {
        this.id = id;
        this.label = label;
        this.title = title;
    }

    /**
     * @param full the full run's sizes, else the quick run's
     * @return what to send and which faults to inject when
     */
    abstract Plan plan(boolean full);

    /**
     * @param ids comma-separated scenario ids, e.g. {@code a,c}, or {@code all}
     * @throws IllegalArgumentException naming the parameter and the value
     */
    static List<Scenario> parse(String ids) {
        if (ids == null || ids.isBlank()) {
            throw new IllegalArgumentException("scenarios: '" + ids + "' (expected: all, or ids such as a,c)");
        }
        if (ids.equals("all")) {
            return List.of(values());
        }
        List<Scenario> out = new java.util.ArrayList<>();
        for (String id : ids.split(",")) {
            Scenario s = java.util.Arrays.stream(values()).filter(v -> v.id.equals(id.trim())).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("scenarios: '" + ids + "' (unknown id '" + id
                            + "'; expected: all, or some of a,b,c,d)"));
            if (!out.contains(s)) {
                out.add(s);
            }
        }
        return out;
    }

    /**
     * What one scenario does.
     *
     * @param callers   sync or async callers
     * @param calls     calls sent
     * @param perSecond send rate, calls per second
     * @param steps     fault steps, in time order
     * @param fault     the faults in one sentence
     */
    record Plan(Callers callers, int calls, double perSecond, List<Step> steps, String fault) {

        /** @return how long sending takes, in ms */
        long sendMillis() {
            return Math.round((calls - 1) * 1000.0 / perSecond);
        }

        /** @return the load in a few words, e.g. "200 sync calls at 20/s (10.0 s)" */
        String load() {
            return String.format(Locale.ROOT, "%d %s calls at %s/s (%.1f s)", calls,
                    callers == Callers.SYNC ? "sync" : "async",
                    perSecond == Math.rint(perSecond) ? String.valueOf((long) perSecond)
                            : String.format(Locale.ROOT, "%.1f", perSecond), calls / perSecond);
        }
    }

    /**
     * One fault step.
     *
     * @param atMillis ms from the first call's slot
     * @param what     what happens, in words
     * @param action   applied to the providers [p1, p2]
     */
    record Step(long atMillis, String what, Consumer<List<DemoProvider>> action) {
    }
}
