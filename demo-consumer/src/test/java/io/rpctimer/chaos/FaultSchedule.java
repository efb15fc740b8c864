package io.rpctimer.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The chaos run's faults, drawn from a seed: the same seed and settings give the same schedule (the timing of what
 * the processes do under it differs from run to run; the schedule does not). Faults begin one after another, a few
 * seconds apart; each target (a consumer slot, a provider, the database) has one fault at a time, so a fault on a busy
 * target begins when the target's last one ends. The first consumer-side faults are the five kinds in a seeded order,
 * so even a short run injects each; the rest are drawn at random.
 *
 * <p><b>Threading:</b> immutable once drawn.
 */
final class FaultSchedule {

    private static final List<Fault.Kind> CONSUMER_SIDE = List.of(Fault.Kind.PAUSE, Fault.Kind.KILL,
            Fault.Kind.DEPLOY, Fault.Kind.DB_RESTART, Fault.Kind.SKEW);

    /**
     * The settings a schedule is drawn with.
     *
     * @param phase     faults begin within this
     * @param consumers consumer slots c1..cN
     * @param lease     the journal's lease
     * @param claimPeriod how often a live consumer claims the entries of expired leases
     * @param skewMillis the size of the clock skew (its sign is drawn)
     */
    record Settings(Duration phase, int consumers, Duration lease, Duration claimPeriod, long skewMillis) {
    }

    private final List<Fault> faults;

    private FaultSchedule(List<Fault> faults) {
        this.faults = List.copyOf(faults);
    }

    /** Draws the schedule of {@code seed}. */
    static FaultSchedule draw(long seed, Settings s) {
        Random r = new Random(seed);
        List<Fault.Kind> firsts = new ArrayList<>(CONSUMER_SIDE);
        Collections.shuffle(firsts, r);
        Map<String, Duration> busyUntil = new HashMap<>();
        List<Fault> out = new ArrayList<>();
        Duration cursor = Duration.ZERO;
        int n = 0;
        while (cursor.compareTo(s.phase()) < 0) {
            Fault.Kind kind = n < firsts.size() ? firsts.get(n) : n % 3 == 2 ? providerKind(r)
                    : CONSUMER_SIDE.get(r.nextInt(CONSUMER_SIDE.size()));
            // each of the first five goes to the consumer free soonest, so that none waits past the phase
            String target = n < firsts.size() && kind.onConsumer() ? soonestFree(busyUntil, s.consumers())
                    : target(kind, r, s.consumers());
            Duration at = max(cursor, busyUntil.getOrDefault(target, Duration.ZERO));
            cursor = cursor.plusMillis(3_000 + r.nextInt(5_000));
            n++;
            if (at.compareTo(s.phase()) >= 0) {
                continue; // the target is busy past the phase: draw another
            }
            Fault f = new Fault(kind, target, at, holds(kind, r, s), kind == Fault.Kind.SKEW
                    ? (r.nextBoolean() ? 1 : -1) * s.skewMillis() : 0);
            out.add(f);
            busyUntil.put(target, f.end().plusSeconds(2));
            if (n % 2 == 0) { // the providers misbehave alongside: every other step adds a provider fault
                Fault.Kind pk = providerKind(r);
                String pt = target(pk, r, s.consumers());
                Duration pat = max(cursor, busyUntil.getOrDefault(pt, Duration.ZERO));
                if (pat.compareTo(s.phase()) < 0) {
                    Fault p = new Fault(pk, pt, pat, holds(pk, r, s), 0);
                    out.add(p);
                    busyUntil.put(pt, p.end().plusSeconds(2));
                }
            }
        }
        out.sort((a, b) -> a.at().compareTo(b.at()));
        return new FaultSchedule(out);
    }

    private static Fault.Kind providerKind(Random r) {
        return r.nextBoolean() ? Fault.Kind.PROVIDER_ERRORS : Fault.Kind.PROVIDER_HANG;
    }

    private static String target(Fault.Kind kind, Random r, int consumers) {
        if (kind.onConsumer()) {
            return "c" + (1 + r.nextInt(consumers));
        }
        return kind == Fault.Kind.DB_RESTART ? "db" : "p" + (1 + r.nextInt(2));
    }

    private static String soonestFree(Map<String, Duration> busyUntil, int consumers) {
        String best = "c1";
        for (int i = 2; i <= consumers; i++) {
            String c = "c" + i;
            if (busyUntil.getOrDefault(c, Duration.ZERO).compareTo(busyUntil.getOrDefault(best, Duration.ZERO)) < 0) {
                best = c;
            }
        }
        return best;
    }

    private static Duration holds(Fault.Kind kind, Random r, Settings s) {
        return switch (kind) {
            // past the lease and the next claim of a survivor, so that a survivor has adopted when it wakes
            case PAUSE -> s.lease().plus(s.claimPeriod()).plusMillis(3_000 + r.nextInt(4_000));
            case KILL -> Duration.ofMillis(1_000 + r.nextInt(4_000));
            case DEPLOY -> Duration.ZERO;
            case DB_RESTART -> Duration.ofMillis(2_000 + r.nextInt(4_000));
            case SKEW -> s.lease().plus(s.claimPeriod()).plusMillis(r.nextInt(10_000));
            case PROVIDER_ERRORS, PROVIDER_HANG -> Duration.ofMillis(4_000 + r.nextInt(6_000));
        };
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /** @return the faults, by when they begin */
    List<Fault> faults() {
        return faults;
    }

    /** @return when the last fault ends, from the start of the fault phase */
    Duration end() {
        return faults.stream().map(Fault::end).max(Duration::compareTo).orElse(Duration.ZERO);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        faults.forEach(f -> b.append("  ").append(f).append('\n'));
        return b.toString();
    }
}
