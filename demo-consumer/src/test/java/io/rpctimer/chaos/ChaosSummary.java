package io.rpctimer.chaos;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The chaos run's summary, as text for a reader and for {@code summary.txt}: the settings and the replay command, the
 * faults injected by kind, the instances, the calls and what their callers were told, how the accepted calls ended,
 * the violations with examples, the other findings, and each live instance's counters.
 *
 * <p><b>Threading:</b> immutable once built.
 */
final class ChaosSummary {

    private final StringBuilder b = new StringBuilder();

    ChaosSummary(ChaosSettings s, FaultSchedule schedule, List<FaultRunner.Injected> injected,
                 List<ChaosFleet.Incarnation> incarnations, Map<String, Map<String, Long>> stats, FleetCheck check,
                 boolean drained, long drainMillis, long wallMillis) {
        line("FleetChaosIT seed=%d: %d consumers, %d ops/s each, faults for %.1f min, lease %d ms, skew %d ms,"
                + " base error rate %.2f", s.seed(), s.consumers(), s.callsPerSecond(), s.phase().toMillis() / 60_000.0,
                s.lease().toMillis(), s.skewMillis(), s.baseErrorRate());
        line("replay: %s", s.replayCommand());
        line("wall clock %.1f s; drain (load stopped to journal empty) %.1f s%s", wallMillis / 1000.0,
                drainMillis / 1000.0, drained ? "" : " - NOT DRAINED: rows or pending calls left");
        faults(injected);
        instances(incarnations);
        counts("calls and what their callers were told", check.told());
        counts("accepted calls (told REPLY or FAILED_BACK), how they ended", check.ended());
        findings(check);
        line("");
        line("counters of the instances alive at the end (failed = delivered + abandoned + rejected + handedOver"
                + " + pending):");
        stats.forEach((instance, m) -> line("  %-6s %s", instance, m));
        line("");
        line("VERDICT: %s", check.violations().isEmpty() ? "no violation" : "VIOLATIONS " + check.violations());
    }

    private void faults(List<FaultRunner.Injected> injected) {
        line("");
        line("%-18s %6s %9s %7s", "faults injected", "count", "total s", "failed");
        Map<Fault.Kind, long[]> byKind = new TreeMap<>();
        for (FaultRunner.Injected i : injected) {
            long[] k = byKind.computeIfAbsent(i.fault().kind(), x -> new long[3]);
            k[0]++;
            k[1] += i.endedMillis() - i.beganMillis();
            k[2] += i.failure() == null ? 0 : 1;
        }
        byKind.forEach((kind, k) -> line("  %-16s %6d %9.1f %7d", kind, k[0], k[1] / 1000.0, k[2]));
        line("  as injected (from the start of the fault phase):");
        injected.stream().sorted((a, c) -> Long.compare(a.beganMillis(), c.beganMillis())).forEach(i ->
                line("    %s; began +%.1fs, ended +%.1fs%s", i.fault(), i.beganMillis() / 1000.0,
                        i.endedMillis() / 1000.0, i.failure() == null ? "" : "; FAILED: " + i.failure()));
    }

    private void instances(List<ChaosFleet.Incarnation> incarnations) {
        line("");
        line("instances (each start of a slot is one; clock = its clock minus the test's at its start):");
        for (ChaosFleet.Incarnation i : incarnations) {
            line("  %-6s ended %-8s clock %+6d ms%s", i.instance(), i.ended() == null ? "-" : i.ended(),
                    i.measuredSkewMillis(), i.skewMillis() == 0 ? "" : " (skewed " + i.skewMillis() + " ms)");
        }
    }

    private void counts(String title, Map<String, Long> counts) {
        line("");
        line("%s: %d", title, counts.values().stream().mapToLong(Long::longValue).sum());
        counts.forEach((k, v) -> line("  %-62s %7d", k, v));
    }

    private void findings(FleetCheck check) {
        line("");
        line("violations:");
        check.findings().forEach((name, f) -> {
            if (FleetCheck.VIOLATIONS.contains(name)) {
                finding(name, f);
            }
        });
        line("other findings:");
        check.findings().forEach((name, f) -> {
            if (!FleetCheck.VIOLATIONS.contains(name)) {
                finding(name, f);
            }
        });
    }

    private void finding(String name, FleetCheck.Finding f) {
        line("  %-52s %7d", name, f.count);
        f.examples.forEach(e -> line("      e.g. %s", e));
    }

    private void line(String format, Object... args) {
        b.append(String.format(format, args)).append('\n');
    }

    String text() {
        return b.toString();
    }
}
