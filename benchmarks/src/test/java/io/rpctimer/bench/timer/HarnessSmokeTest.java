package io.rpctimer.bench.timer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.bench.Json;
import io.rpctimer.bench.MachineInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Checks that every benchmark's and harness's setup, operation and teardown work for every implementation, at
 * tiny sizes, so that a broken benchmark shows in {@code mvn verify} and not 20 minutes into a run. Measures
 * nothing.
 */
@Timeout(30)
class HarnessSmokeTest {

    private static long savedSettleMillis;

    @BeforeAll
    static void fastSettle() {
        savedSettleMillis = BenchConfig.settleMillis;
        BenchConfig.settleMillis = 20;
    }

    @AfterAll
    static void restoreSettle() {
        BenchConfig.settleMillis = savedSettleMillis;
    }

    @ParameterizedTest
    @EnumSource(TimerImpl.class)
    void adapterSchedulesCancelsAndFires(TimerImpl impl) throws InterruptedException {
        CountDownLatch shared = new CountDownLatch(100);
        CountDownLatch own = new CountDownLatch(1);
        try (BenchTimer timer = impl.create(shared::countDown)) {
            timer.start();
            timer.load(() -> {
                for (int i = 0; i < 100; i++) {
                    assertTrue(timer.scheduleAndCancel(BenchConfig.CALL_TIMEOUT_NANOS));
                    timer.scheduleShared(TimeUnit.MILLISECONDS.toNanos(i % 20));
                }
                timer.schedule(own::countDown, TimeUnit.MILLISECONDS.toNanos(5));
            });
            assertTrue(shared.await(5, TimeUnit.SECONDS), impl.label + ": shared task did not run 100 times");
            assertTrue(own.await(5, TimeUnit.SECONDS), impl.label + ": own task did not run");
            assertEquals(timer.workerThreadName(), IdleTickCpuHarness.findThread(timer.workerThreadName()).getName());
        }
    }

    @Test
    void jmhStatesSetUpRunAndTearDown() throws InterruptedException {
        for (TimerImpl impl : List.of(TimerImpl.RPC_TIMER, TimerImpl.NETTY, TimerImpl.DUBBO, TimerImpl.KAFKA,
                TimerImpl.JDK_STPE)) {
            ScheduleCancelBenchmark sc = new ScheduleCancelBenchmark();
            sc.impl = impl.label;
            sc.pending = 1_000;
            sc.setUp();
            assertTrue(sc.oneThread());
            assertTrue(sc.twoThreads());
            sc.tearDown();
        }
        AgronaScheduleCancelBenchmark agrona = new AgronaScheduleCancelBenchmark();
        agrona.pending = 1_000;
        agrona.setUp();
        assertTrue(agrona.oneThread());
        for (TimerImpl impl : TimerImpl.MAIN) {
            FireAllBenchmark fire = new FireAllBenchmark();
            fire.impl = impl.label;
            fire.timers = 1_000;
            fire.setUp();
            fire.newLatch();
            fire.fireAll();
            fire.tearDown();
        }
    }

    @Test
    void harnessesMeasureTinySizes() {
        // the memory harness only differs by how it schedules: on the caller (all but one) or on Agrona's driver
        for (TimerImpl impl : List.of(TimerImpl.RPC_TIMER, TimerImpl.AGRONA)) {
            Map<String, Object> memory = PendingMemoryHarness.measure(impl, 10_000);
            assertTrue(Double.isFinite((double) memory.get("bytesPerTimer")), impl.label + ": " + memory);
        }
        for (TimerImpl impl : TimerImpl.MAIN) {
            Map<String, Object> idle = IdleTickCpuHarness.measure(impl, 50, 1_000);
            assertTrue((double) idle.get("pendingCpuMsPerSec") >= 0, impl.label + ": " + idle);
        }
        assertTrue((double) IdleTickCpuHarness.measureControl(50).get("emptyCpuMsPerSec") >= 0);
        for (TimerImpl impl : TimerImpl.values()) {
            Map<String, Object> lateness = LatenessHarness.measure(impl, 50, 30, 0, 1);
            assertEquals(50, lateness.get("samples"));
            // Kafka keeps whole-millisecond deadlines from a truncated clock: it may run a timer up to 1 ms early
            assertTrue((double) lateness.get("minMs") >= -1, impl.label + " ran a timer early: " + lateness);
        }
    }

    @Test
    void cpuHarnessAccountsEveryMeasuredWindow() throws InterruptedException {
        Map<String, Object> r = ScheduleCancelCpuHarness.measure(TimerImpl.RPC_TIMER, 2, 1_000, 1, 2, 50);
        assertEquals(2, r.get("windows"));
        assertTrue((double) r.get("opsPerUs") > 0, r.toString());
        assertTrue((double) r.get("producerNsPerOp") > 0, r.toString());
        assertTrue((double) r.get("workerNsPerOp") >= 0, r.toString());
        // the worker wakes about once per 10 ms tick; /proc may be missing (-1), never negative otherwise
        assertTrue((double) r.get("workerVoluntaryPerSec") >= -1, r.toString());
    }

    @Test
    void jvmFlagsKeepNettysUnsafeOnNewJdks() {
        // Netty 4.2 turns Unsafe off by itself on JDK 24+ unless this flag is given; the other timers keep it
        assertEquals(Runtime.version().feature() >= 24, BenchConfig.jvmFlags()
                .contains("--sun-misc-unsafe-memory-access=allow"));
        assertTrue(Files.isExecutable(Path.of(BenchConfig.javaBinary())));
    }

    @Test
    void harnessResultLineRoundTrips() {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("impl", "jdk-stpe-2");
        values.put("p99Ms", 12.5);
        Map<String, String> parsed = HarnessIo.parse(HarnessIo.format(values));
        assertEquals("jdk-stpe-2", parsed.get("impl"));
        assertEquals(12.5, Double.parseDouble(parsed.get("p99Ms")));
    }

    @Test
    void reportAndChartAreWrittenFromResults(@TempDir Path dir) throws Exception {
        Map<String, Object> results = syntheticResults();
        ResultsReport.analyse(results);
        String md = ResultsReport.markdown(results, "chart.png");
        assertTrue(md.contains("| rpc-timer | 20.0 ± 1.00"), md);
        assertTrue(md.contains("| netty | 1.50% | 1.50% | 1.50% | 1.50% |"), md);
        assertTrue(Json.write(results).contains("\"targets\""));
        ResultsChart.write(results, dir.resolve("chart.png"));
        assertTrue(Files.size(dir.resolve("chart.png")) > 10_000);
    }

    @Test
    void reportShowsEveryForkAndJudgesTheSlowestFork() {
        Map<String, Object> results = syntheticResults();
        // one fork of rpc-timer, 2 threads with 1M pending, in a slow mode: 4 ops/µs, and one that speeds up part-way;
        // the mean (20) still clears 1.5x Netty's 5 and stays within 20% of empty
        Map<String, Object> cell = ResultsReport.find(results, "scheduleCancel", "rpc-timer", 2, 1_000_000);
        cell.put("iterationOpsPerUs", List.of(List.of(4.0, 4.0), List.of(4.0, 36.0), List.of(36.0, 36.0)));
        ResultsReport.analyse(results);
        String md = ResultsReport.markdown(results, "chart.png");
        assertTrue(md.contains("| rpc-timer | 2 threads, 1M pending | 4.00, 20.0, 36.0 | 4.00–36.0 |"
                + " 4.00 4.00 / 4.00 36.0 / 36.0 36.0 |"), md);
        assertTrue(md.contains("| 20.0 ± 1.00 (forks 4.00–36.0) |"), md);
        assertEquals(List.of(false, false), verdicts(results, "2 threads, 1M pending", "2 threads"),
                "a slow fork fails both every-fork targets");
        assertEquals(List.of(true, true), verdicts(results, "1 thread, 1M pending", "1 thread"),
                "cells whose forks all agree meet them");
    }

    @SuppressWarnings("unchecked")
    private static List<Boolean> verdicts(Map<String, Object> results, String nettyCell, String pendingCell) {
        List<Boolean> met = new ArrayList<>();
        for (Map<String, Object> t : (List<Map<String, Object>>) results.get("targets")) {
            String name = (String) t.get("target");
            if ((name.contains("Netty in every fork") && t.get("cell").equals(nettyCell))
                    || (name.contains("slower than empty in every fork") && t.get("cell").equals(pendingCell))) {
                met.add((Boolean) t.get("met"));
            }
        }
        return met;
    }

    @Test
    void reportOfCaseOneAloneHasItsTablesAndNoChart() {
        Map<String, Object> results = syntheticResults();
        List.of("fireAll", "memory", "lateness", "idleCpu").forEach(results::remove);
        ResultsReport.analyse(results);
        String md = ResultsReport.markdown(results, null);
        assertTrue(md.contains("| rpc-timer | 1 thread, empty | 20.0, 20.0 | 20.0–20.0 |"), md);
        assertFalse(md.contains("!["), md);
    }

    @Test
    void casesPropertyPicksCasesInRunOrderAndNamesAnUnknownOne() {
        assertEquals(TimerBenchRunner.CASES, TimerBenchRunner.cases(null));
        assertEquals(List.of("scheduleCancel", "idleCpu"), TimerBenchRunner.cases("idleCpu, scheduleCancel"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TimerBenchRunner.cases("scheduleCancel,fireall"));
        assertTrue(e.getMessage().startsWith("bench.cases: fireall (expected some of"), e.getMessage());
    }

    private static Map<String, Object> syntheticResults() {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("mode", "test");
        r.put("machine", MachineInfo.collect());
        r.put("settings", Map.of());
        r.put("durationMinutes", 1.0);
        List<Map<String, Object>> sc = new ArrayList<>();
        for (TimerImpl impl : TimerImpl.MAIN) {
            for (int threads : ResultsReport.THREADS) {
                for (int pending : ResultsReport.PENDING) {
                    if (impl != TimerImpl.AGRONA || threads == 1) {
                        double ops = impl == TimerImpl.RPC_TIMER ? 20.0 : 5.0;
                        sc.add(row(impl, "threads", threads, "pending", pending,
                                "opsPerUs", ops, "opsPerUsError", 1.0,
                                "allocBytesPerOp", 40.0, "gcTimePercent", 1.5, "foreignCores", 0.01,
                                "iterationOpsPerUs", List.of(List.of(ops, ops), List.of(ops, ops))));
                    }
                }
            }
        }
        r.put("scheduleCancel", sc);
        List<Map<String, Object>> fire = new ArrayList<>();
        List<Map<String, Object>> memory = new ArrayList<>();
        List<Map<String, Object>> lateness = new ArrayList<>();
        List<Map<String, Object>> idle = new ArrayList<>();
        for (TimerImpl impl : TimerImpl.MAIN) {
            fire.add(row(impl, "medianMs", 210.0, "minMs", 205.0, "maxMs", 220.0));
            memory.add(row(impl, "bytesPerTimer", 44.0));
            lateness.add(row(impl, "p50Ms", 5.0, "p99Ms", 10.0, "maxMs", 11.0));
            idle.add(row(impl, "thread", "w", "emptyCpuMsPerSec", 0.1, "pendingCpuMsPerSec", 0.2));
        }
        r.put("fireAll", fire);
        r.put("memory", memory);
        r.put("lateness", lateness);
        r.put("idleCpu", idle);
        return r;
    }

    private static Map<String, Object> row(TimerImpl impl, Object... kv) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("impl", impl.label);
        for (int i = 0; i < kv.length; i += 2) {
            row.put((String) kv[i], kv[i + 1]);
        }
        return row;
    }
}
