package io.rpctimer.bench.happypath;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class CallCostPoolTest {

    private static final List<String> RUN = List.of(
            "30000 calls a phase after 30000 warm-up calls; sync: 8 threads, async: 64 in flight",
            "round mode  config                      B/call  threadCPU us/call  processCPU us/call  GC us/call",
            "    1 async failback                      41564              64.10               67.67       0.00",
            "    1 async wheelfailback                 42219              66.99               72.33       0.00",
            "    2 async failback                      41570              63.18               63.67       0.00",
            "        DubboClientHandler-thread-#                     2826 B      9.64 us",
            "    2 async wheelfailback                 42215              63.04               63.33       0.00",
            "[main] WARN org.apache.dubbo.rpc.protocol.dubbo.ReferenceCountExchangeClient -  [DUBBO] 1 2 3",
            "| async | wheelfailback | failback | 16 | 60.02 | 1.036× | 1.001–1.085× | missed, inside the noise |");

    @Test
    void readsEachPhaseLineFromTheFirstRoundOn_asPhasesOfTheRunNamed() {
        List<CallCostSummary.Phase> phases = CallCostPool.phases(RUN, 2, 1);

        assertEquals(List.of(new CallCostSummary.Phase(1, 2, "async", "failback", 63.18, 41570),
                new CallCostSummary.Phase(1, 2, "async", "wheelfailback", 63.04, 42215)), phases);
    }

    @Test
    void twoRunsPool_intoOneVerdictOverTheirRounds() {
        CallCostSummary s = new CallCostSummary(1);
        CallCostPool.phases(RUN, 1, 0).forEach(s::add);
        CallCostPool.phases(RUN, 1, 1).forEach(s::add);

        List<CallCostSummary.Verdict> v = s.verdicts(CallCost.PAIRS);

        assertEquals(1, v.size());
        assertEquals(2, v.get(0).runs());
        assertEquals(4, v.get(0).rounds());
        assertEquals((66.99 / 64.10 + 63.04 / 63.18) / 2, v.get(0).cpuRatio(), 1e-9);
    }
}
