package io.rpctimer.demo.provider.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

@Timeout(10)
class FaultInjectorTest {
    private final AtomicReference<Double> draw = new AtomicReference<>(0.5);
    private final FaultInjector faults = new FaultInjector(draw::get);

    @Test
    void noFaults_answersAtOnce() {
        ServiceFault f = faults.nextServiceFault();
        assertFalse(f.rejects());
        assertNull(f.rejectReason());
        assertEquals(Duration.ZERO, f.delay());
        assertTrue(f.delayElapsed().isDone());
        assertEquals(Optional.empty(), faults.nextRpcError());
        assertTrue(faults.settings().isNone());
        assertEquals("none", faults.settings().toString());
    }

    @Test
    void failRate_rejectsWhenTheDrawIsBelowTheRate() {
        faults.failRate(0.3);
        draw.set(0.29);
        assertEquals("fail 30%", faults.nextServiceFault().rejectReason());
        draw.set(0.3);
        assertFalse(faults.nextServiceFault().rejects());
    }

    @Test
    void rateOneAlwaysFails_rateZeroNever() {
        faults.failRate(1);
        faults.errorRate(0);
        draw.set(0.9999);
        assertTrue(faults.nextServiceFault().rejects());
        assertEquals(Optional.empty(), faults.nextRpcError());
        draw.set(0.0);
        faults.failRate(0);
        assertFalse(faults.nextServiceFault().rejects());
    }

    @Test
    void errorRate_failsAtTheRpcLevel() {
        faults.errorRate(0.5);
        draw.set(0.1);
        assertEquals(Optional.of("error 50%"), faults.nextRpcError());
        draw.set(0.7);
        assertEquals(Optional.empty(), faults.nextRpcError());
    }

    @Test
    void failNext_isUsedUpBeforeTheRate() {
        faults.failNext(2);
        draw.set(0.99);
        assertEquals("fail next, 1 left", faults.nextServiceFault().rejectReason());
        assertEquals(1, faults.settings().failNext());
        assertEquals("fail next, 0 left", faults.nextServiceFault().rejectReason());
        assertFalse(faults.nextServiceFault().rejects());
        assertEquals(0, faults.settings().failNext());
    }

    @Test
    void errorNext_isIndependentOfFailNext() {
        faults.errorNext(1);
        faults.failNext(1);
        assertEquals(Optional.of("error next, 0 left"), faults.nextRpcError());
        assertEquals(Optional.empty(), faults.nextRpcError());
        assertTrue(faults.nextServiceFault().rejects());
        assertTrue(faults.settings().isNone());
    }

    @Test
    void failNext_countIsNeverUsedTwice_underContention() throws Exception {
        int threads = 8;
        int perThread = 5_000;
        faults.failNext(10_000);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> rejected = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                rejected.add(pool.submit(() -> {
                    start.await();
                    int n = 0;
                    for (int i = 0; i < perThread; i++) {
                        n += faults.nextServiceFault().rejects() ? 1 : 0;
                    }
                    return n;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : rejected) {
                total += f.get(5, TimeUnit.SECONDS);
            }
            assertEquals(10_000, total);
            assertEquals(0, faults.settings().failNext());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void latencyAndHang_addUp() {
        faults.latency(Duration.ofMillis(200));
        faults.hang(Duration.ofSeconds(10));
        assertEquals(Duration.ofMillis(10_200), faults.nextServiceFault().delay());
        assertEquals("latency 200 ms, hang 10 s", faults.settings().toString());
        faults.clear();
    }

    @Test
    void latency_delayElapsesByItself() throws Exception {
        faults.latency(Duration.ofMillis(20));
        ServiceFault f = faults.nextServiceFault();
        assertNull(f.delayElapsed().get(5, TimeUnit.SECONDS));
        assertEquals(0, faults.waitingCalls());
    }

    @Test
    void clear_releasesHangingCalls_andRemovesEveryFault() throws Exception {
        faults.hang(Duration.ofMinutes(10));
        faults.failRate(0.5);
        ServiceFault hanging = faults.nextServiceFault();
        assertFalse(hanging.delayElapsed().isDone());
        assertEquals(1, faults.waitingCalls());

        faults.clear();

        hanging.delayElapsed().get(1, TimeUnit.SECONDS);
        assertEquals(0, faults.waitingCalls());
        assertSame(FaultSettings.NONE, faults.settings());
        assertTrue(faults.nextServiceFault().delayElapsed().isDone());
    }

    @Test
    void releaseWaiting_endsDelays_butKeepsTheSettings() throws Exception {
        faults.hang(Duration.ofMinutes(10));
        ServiceFault hanging = faults.nextServiceFault();
        faults.releaseWaiting();
        hanging.delayElapsed().get(1, TimeUnit.SECONDS);
        assertEquals(Duration.ofMinutes(10), faults.settings().hang());
        faults.clear();
    }

    @Test
    void clearDuringADecision_stillReleasesThatCall() throws Exception {
        AtomicReference<FaultInjector> self = new AtomicReference<>();
        FaultInjector racing = new FaultInjector(() -> {
            self.get().clear(); // clear() lands after the settings were read, before the delay registers
            return 0.9;
        });
        self.set(racing);
        racing.hang(Duration.ofMinutes(10));
        racing.failRate(0.5); // makes the decision draw, which runs clear()
        ServiceFault f = racing.nextServiceFault();
        assertEquals(Duration.ofMinutes(10), f.delay(), "decided with the old settings");
        f.delayElapsed().get(1, TimeUnit.SECONDS);
        assertEquals(0, racing.waitingCalls());
    }

    @Test
    void badArguments_nameTheParameterAndTheValue() {
        assertMessage("failRate: 1.5 (expected: 0..1)", () -> faults.failRate(1.5));
        assertMessage("errorRate: -0.1 (expected: 0..1)", () -> faults.errorRate(-0.1));
        assertMessage("failRate: NaN (expected: 0..1)", () -> faults.failRate(Double.NaN));
        assertMessage("failNext: -1 (expected: >= 0)", () -> faults.failNext(-1));
        assertMessage("errorNext: -2 (expected: >= 0)", () -> faults.errorNext(-2));
        assertMessage("latency: null (expected: 0..10 min)", () -> faults.latency(null));
        assertMessage("latency: -1 ms (expected: 0..10 min)", () -> faults.latency(Duration.ofMillis(-1)));
        assertMessage("hang: 660000 ms (expected: 0..10 min)", () -> faults.hang(Duration.ofMinutes(11)));
        assertMessage("random: null (expected: a DoubleSupplier)", () -> new FaultInjector(null));
        assertTrue(faults.settings().isNone(), "nothing changed");
    }

    @Test
    void settings_printEveryFault() {
        faults.failRate(0.125);
        faults.failNext(3);
        faults.errorRate(1);
        faults.errorNext(2);
        faults.latency(Duration.ofMillis(1500));
        assertEquals("fail next 3, fail 12.5%, error next 2, error 100%, latency 1.5 s", faults.settings().toString());
    }

    private static void assertMessage(String expected, Runnable r) {
        assertEquals(expected, assertThrows(IllegalArgumentException.class, r::run).getMessage());
    }
}
