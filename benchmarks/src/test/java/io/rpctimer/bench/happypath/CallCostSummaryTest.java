package io.rpctimer.bench.happypath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CallCostSummaryTest {

    private static final List<String[]> PAIRS = List.of(new String[] {"wheel", "failback"},
            new String[] {"timeoutcheck", "wheel"});

    @Test
    void theRatioIsTheMedianOfEachRoundsOwnRatio_withTheFirstRoundsLeftOut() {
        CallCostSummary s = new CallCostSummary(2);
        s.add(new CallCostSummary.Phase(0, 1, "async", "failback", 100, 1000)); // warm-up round: left out
        s.add(new CallCostSummary.Phase(0, 1, "async", "wheel", 500, 9000));
        double[] failback = {30, 40, 20, 50, 35};
        double[] wheel = {31.5, 40.4, 21.6, 50.5, 35.7}; // ratios 1.05, 1.01, 1.08, 1.01, 1.02
        for (int r = 0; r < failback.length; r++) {
            s.add(new CallCostSummary.Phase(0, r + 2, "async", "failback", failback[r], 1000));
            s.add(new CallCostSummary.Phase(0, r + 2, "async", "wheel", wheel[r], 1010));
        }
        List<CallCostSummary.Verdict> v = s.verdicts(PAIRS);
        assertEquals(1, v.size(), "no round had timeoutcheck: no verdict for it");
        CallCostSummary.Verdict w = v.get(0);
        assertEquals(5, w.rounds());
        assertEquals(1.02, w.cpuRatio(), 1e-9);
        assertEquals(35.7, w.cpuMicros(), 1e-9);
        assertEquals(1.01, w.bytesRatio(), 1e-9);
        assertTrue(w.cpuLow() >= 1.01 - 1e-9 && w.cpuLow() <= w.cpuRatio(), "low " + w.cpuLow());
        assertTrue(w.cpuHigh() <= 1.08 + 1e-9 && w.cpuHigh() >= w.cpuRatio(), "high " + w.cpuHigh());
        String table = CallCostSummary.markdown(v, 1.03);
        assertTrue(table.contains("| async | wheel | failback | 5 | 35.70 | 1.020× |"), table);
        assertTrue(table.contains("met, inside the noise"), table);
    }

    @Test
    void modesAreJudgedApart_andTheSameRunGivesTheSameInterval() {
        CallCostSummary s = new CallCostSummary(1);
        for (int r = 1; r <= 8; r++) {
            s.add(new CallCostSummary.Phase(0, r, "sync", "failback", 40 + r, 1000));
            s.add(new CallCostSummary.Phase(0, r, "sync", "wheel", 40 + r, 1000));
            s.add(new CallCostSummary.Phase(0, r, "async", "wheel", 30, 1000));
            s.add(new CallCostSummary.Phase(0, r, "async", "timeoutcheck", 36, 1000));
        }
        List<CallCostSummary.Verdict> v = s.verdicts(PAIRS);
        assertEquals(2, v.size());
        assertEquals("sync", v.get(0).mode());
        assertEquals(1.0, v.get(0).cpuRatio(), 1e-9);
        assertEquals(1.0, v.get(0).cpuHigh(), 1e-9);
        assertEquals("async", v.get(1).mode());
        assertEquals(1.2, v.get(1).cpuRatio(), 1e-9);
        assertTrue(CallCostSummary.markdown(v, 1.03).contains("missed, clear"));
        assertEquals(v, s.verdicts(PAIRS));
    }

    @Test
    void theIntervalResamplesTheRuns_whenOneRunsConfigurationsDifferForItsWholeLife() {
        CallCostSummary s = new CallCostSummary(1);
        double[] ratioOfRun = {1.00, 1.00, 1.10};
        for (int run = 0; run < ratioOfRun.length; run++) {
            for (int r = 1; r <= 10; r++) {
                s.add(new CallCostSummary.Phase(run, r, "async", "failback", 50, 1000));
                s.add(new CallCostSummary.Phase(run, r, "async", "wheel", 50 * ratioOfRun[run], 1000));
            }
        }

        CallCostSummary.Verdict v = s.verdicts(PAIRS).get(0);

        assertEquals(3, v.runs());
        assertEquals(30, v.rounds());
        assertEquals(1.00, v.cpuRatio(), 1e-9);
        assertEquals(List.of(1.00, 1.00, 1.10), v.runRatios().stream().map(r -> Math.round(r * 100) / 100.0).toList());
        // a third of the runs costs 10% more: drawing two of it out of three happens in about a quarter of the
        // resamples, which a draw of rounds alone (10 out of 30) would not show
        assertEquals(1.10, v.cpuHigh(), 1e-9);
        assertEquals(1.00, v.cpuLow(), 1e-9);
        String perRun = CallCostSummary.runRatios(List.of(v));
        assertTrue(perRun.contains("| async | wheel | failback | 3 | 1.000× | 1.100× | 1.000, 1.000, 1.100 |"), perRun);
    }

    @Test
    void aFirstRoundBelowOneIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new CallCostSummary(0));
        assertEquals("firstRound: 0 (expected: >= 1)", e.getMessage());
    }
}
