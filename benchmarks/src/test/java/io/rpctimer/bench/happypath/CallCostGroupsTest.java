package io.rpctimer.bench.happypath;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class CallCostGroupsTest {

    private static final List<String> RUN = List.of(
            "round mode  config                      B/call  threadCPU us/call  processCPU us/call  GC us/call",
            "    1 async failback                      41564              64.10               67.67       0.00",
            "        callcost-caller                                17003 B     99.00 us",
            "    2 async failback                      41570              63.18               63.67       0.00",
            "        callcost-caller                                17003 B     10.00 us",
            "        NettyClientWorker-#-#                            755 B      9.00 us",
            "    2 async wheelfailback                 42215              63.04               63.33       0.00",
            "        callcost-caller                                17391 B     10.50 us",
            "        NettyClientWorker-#-#                            755 B      9.25 us",
            "        DubboClientHandler-thread-#                     2853 B      0.10 us",
            "    3 async failback                      41570              63.18               63.67       0.00",
            "        callcost-caller                                17003 B     10.00 us",
            "    3 async wheelfailback                 42215              63.04               63.33       0.00",
            "        callcost-caller                                17391 B     10.30 us");

    @Test
    void eachGroupsDelta_isTheMedianOverRoundsOfTheSameRound_aMissingGroupCountingZero() {
        CallCostGroups groups = new CallCostGroups(2);
        groups.add(RUN, 0);

        List<CallCostGroups.Delta> d = groups.deltas(List.<String[]>of(new String[] {"wheelfailback", "failback"}));

        assertEquals(List.of("callcost-caller", "NettyClientWorker-#-#", "DubboClientHandler-thread-#"),
                d.stream().map(CallCostGroups.Delta::group).toList(), "by decreasing |delta|");
        assertEquals(0.4, d.get(0).delta(), 1e-9, "median of 0.5 and 0.3; round 1 left out");
        assertEquals(10.0, d.get(0).referenceMicros(), 1e-9);
        assertEquals(2, d.get(0).rounds());
        assertEquals(0.125, d.get(1).delta(), 1e-9, "0.25 and 0 (round 3 lists no such group)");
        assertEquals(0.05, d.get(2).delta(), 1e-9);
        assertEquals("async", d.get(0).mode());
    }

    @Test
    void runsWithoutGroupLines_giveNoRows() {
        CallCostGroups groups = new CallCostGroups(1);
        groups.add(RUN.stream().filter(l -> !l.startsWith("        ")).toList(), 0);

        assertEquals(List.of(), groups.deltas(CallCost.PAIRS));
    }
}
