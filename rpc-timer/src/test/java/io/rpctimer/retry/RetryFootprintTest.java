package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.wheel.WheelTimer;
import java.lang.management.ManagementFactory;
import java.net.ConnectException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a pending retry costs the heap beyond its arguments, with 100,000 pending on a real wheel: the
 * call's state, its {@code retry.id}, its wheel timeout and its place in the reference's set. Measured from the
 * heap after full collections, so tagged {@code stress} and kept apart from the logic tests.
 */
@Tag("stress")
@org.junit.jupiter.api.Timeout(120)
class RetryFootprintTest {

    private static final int CALLS = 100_000;

    @Test
    void pendingRetry_costsAtMost300BytesBeyondItsArguments() {
        WheelTimer timer = WheelTimer.builder().build();
        try {
            RetryPolicy policy = RetryPolicy.builder().firstDelay(1, TimeUnit.HOURS).maxDelay(2, TimeUnit.HOURS)
                    .build();
            RetryLifecycle lifecycle = RetryLifecycle.builder("footprint").timer(timer).executor(Runnable::run)
                    .build();
            RetryReference<Object> ref = lifecycle.reference("k", (c, a) -> new CompletableFuture<AttemptResult>())
                    .policies(m -> policy).limits(2 * CALLS, OverflowPolicy.REJECT).build();
            Object arguments = new Object(); // one shared payload: the arguments are not what is measured
            ref.admit("greet", "warm-up", arguments, null, "127.0.0.1:20880", new ConnectException("warm-up"), false);
            long before = usedHeapBytes();
            for (int i = 0; i < CALLS; i++) {
                // each call fails with its own exception, stack trace included, as in an outage
                ref.admit("greet", "5f1c2a9e0b3d-" + i, arguments, null, "127.0.0.1:20880",
                        new ConnectException("Connection refused: /127.0.0.1:20880"), false);
            }
            long perCall = (usedHeapBytes() - before) / CALLS;
            assertEquals(CALLS + 1, ref.pending());
            System.out.println("a pending retry costs " + perCall + " bytes beyond its arguments");
            assertTrue(perCall <= 300, perCall + " bytes per pending retry");
        } finally {
            timer.stop();
        }
    }

    private static long usedHeapBytes() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
