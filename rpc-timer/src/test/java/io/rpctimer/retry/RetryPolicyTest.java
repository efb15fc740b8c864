package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class RetryPolicyTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final Throwable RPC_FAILURE = new IOException("connection refused");

    @Test
    void defaultsAreDubbosFailbackPlusBackoff() {
        RetryPolicy p = RetryPolicy.defaults();
        assertEquals(3, p.retries());
        assertEquals(5_000, p.firstDelayMillis());
        assertEquals(2.0, p.multiplier());
        assertEquals(60_000, p.maxDelayMillis());
        assertEquals(0.2, p.jitter());
        assertEquals(RetryOn.rpc(), p.retryOn());
        assertEquals(100, p.maxPending());
        assertEquals(OverflowPolicy.REJECT, p.overflow());
    }

    @Test
    void backoffDoublesUpToTheCap() {
        RetryPolicy p = RetryPolicy.defaults();
        long[] expectedSeconds = {5, 10, 20, 40, 60, 60};
        for (int retry = 1; retry <= expectedSeconds.length; retry++) {
            assertEquals(expectedSeconds[retry - 1] * SECOND, p.backoffNanos(retry, 0.0), "retry " + retry);
        }
        assertEquals(60 * SECOND, p.backoffNanos(Integer.MAX_VALUE, 1.0), "huge exponents saturate at the cap");
    }

    @Test
    void jitterSpreadsEachDelayWithinItsBounds() {
        RetryPolicy p = RetryPolicy.builder().retries(2).build();
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < 10_000; i++) {
            long d = p.nextDelayNanos(1, RPC_FAILURE, true);
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        assertTrue(min >= 4 * SECOND && max < 6 * SECOND, "5 s ± 20%: [" + min + ", " + max + "]");
        assertTrue(min < 4.2 * SECOND && max > 5.8 * SECOND, "jitter does not spread: [" + min + ", " + max + "]");
        assertEquals(4 * SECOND, p.backoffNanos(1, -1.0));
        assertEquals(6 * SECOND, p.backoffNanos(1, 1.0));
    }

    @Test
    void capHoldsAfterJitter() {
        RetryPolicy p = RetryPolicy.builder().retries(20).build();
        for (int i = 0; i < 1_000; i++) {
            assertTrue(p.nextDelayNanos(20, RPC_FAILURE, true) <= 60 * SECOND);
        }
    }

    @Test
    void noJitterMeansExactDelays() {
        RetryPolicy p = RetryPolicy.builder().jitter(0).firstDelay(100, TimeUnit.MILLISECONDS).multiplier(1.5)
                .build();
        assertEquals(TimeUnit.MILLISECONDS.toNanos(150), p.nextDelayNanos(2, RPC_FAILURE, true));
    }

    @Test
    void delayIsAtLeastOneMillisecond() {
        RetryPolicy p = RetryPolicy.builder().firstDelay(1, TimeUnit.NANOSECONDS).maxDelay(1, TimeUnit.SECONDS)
                .jitter(1).build();
        assertEquals(TimeUnit.MILLISECONDS.toNanos(1), p.backoffNanos(1, -1.0));
    }

    @Test
    void stopsWhenTheBudgetIsSpent() {
        RetryPolicy p = RetryPolicy.defaults();
        assertTrue(p.nextDelayNanos(3, RPC_FAILURE, true) > 0);
        assertEquals(RetryPolicy.STOP, p.nextDelayNanos(4, RPC_FAILURE, true));
        assertEquals(RetryPolicy.STOP, p.nextDelayNanos(0, RPC_FAILURE, true));
    }

    @Test
    void zeroRetriesMeansNoRetry() {
        RetryPolicy p = RetryPolicy.builder().retries(0).build();
        assertEquals(RetryPolicy.STOP, p.nextDelayNanos(1, RPC_FAILURE, true));
    }

    @Test
    void businessExceptionsStopUnlessTheRetryOnPolicyNamesThem() {
        Throwable business = new IllegalStateException("out of stock");
        assertEquals(RetryPolicy.STOP, RetryPolicy.defaults().nextDelayNanos(1, business, false));
        RetryPolicy all = RetryPolicy.builder().retryOn(RetryOn.all()).build();
        assertTrue(all.nextDelayNanos(1, business, false) > 0);
    }

    @Test
    void badValuesAreRejectedNamingParameterAndValue() {
        RetryPolicy.Builder b = RetryPolicy.builder();
        assertMessage(IllegalArgumentException.class, "retries: -1 (expected: >= 0)", () -> b.retries(-1));
        assertMessage(IllegalArgumentException.class, "firstDelay: 0 (expected: > 0)",
                () -> b.firstDelay(0, TimeUnit.MILLISECONDS));
        assertMessage(NullPointerException.class, "unit: null (expected: a TimeUnit)", () -> b.firstDelay(1, null));
        assertMessage(IllegalArgumentException.class, "multiplier: 0.5 (expected: >= 1.0 and finite)",
                () -> b.multiplier(0.5));
        assertMessage(IllegalArgumentException.class, "multiplier: NaN (expected: >= 1.0 and finite)",
                () -> b.multiplier(Double.NaN));
        assertMessage(IllegalArgumentException.class, "multiplier: Infinity (expected: >= 1.0 and finite)",
                () -> b.multiplier(Double.POSITIVE_INFINITY));
        assertMessage(IllegalArgumentException.class, "maxDelay: -3 (expected: > 0)",
                () -> b.maxDelay(-3, TimeUnit.SECONDS));
        assertMessage(IllegalArgumentException.class, "jitter: 1.5 (expected: in [0, 1])", () -> b.jitter(1.5));
        assertMessage(IllegalArgumentException.class, "jitter: -0.1 (expected: in [0, 1])", () -> b.jitter(-0.1));
        assertMessage(NullPointerException.class, "retryOn: null (expected: a RetryOn)", () -> b.retryOn(null));
        assertMessage(IllegalArgumentException.class, "maxPending: 0 (expected: > 0)", () -> b.maxPending(0));
        assertMessage(NullPointerException.class, "overflow: null (expected: REJECT or LOG)", () -> b.overflow(null));
    }

    @Test
    void maxDelayBelowFirstDelayIsRejectedAtBuild() {
        RetryPolicy.Builder b = RetryPolicy.builder().firstDelay(5, TimeUnit.SECONDS).maxDelay(1, TimeUnit.SECONDS);
        assertMessage(IllegalArgumentException.class, "maxDelay: 1000 ms (expected: >= firstDelay: 5000 ms)",
                b::build);
    }

    static void assertMessage(Class<? extends Throwable> type, String message, Executable call) {
        assertEquals(message, assertThrows(type, call).getMessage());
    }
}
