package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The token bucket on a fake clock: rate, deposits, cap, expiry of old successes, argument checks. */
class TokenBucketBudgetTest {

    private final AtomicLong nanos = new AtomicLong(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(5)); // wraps mid-test

    private RetryBudget bucket(double ratio, double minPerSecond) {
        return RetryBudget.tokenBucket(ratio, minPerSecond, 10, TimeUnit.SECONDS, nanos::get);
    }

    private int drain(RetryBudget b) {
        int n = 0;
        while (b.tryAcquire()) {
            n++;
        }
        return n;
    }

    private void advanceMillis(long ms) {
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Test
    void minimumRate_oneTokenAtStart_thenMinPerSecond_cappedAtOneSecondOfIt() {
        RetryBudget b = bucket(0, 10);
        assertEquals(1, drain(b));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(100), b.nanosUntilToken());
        advanceMillis(99);
        assertFalse(b.tryAcquire());
        advanceMillis(1);
        assertEquals(1, drain(b));
        advanceMillis(60_000);
        assertEquals(10, drain(b), "a long idle time saves at most max(1, minPerSecond) tokens");
    }

    @Test
    void successesDeposit_ratioTokensEach_andOnlyRecentOnesCount() {
        RetryBudget b = bucket(0.2, 0);
        assertEquals(1, drain(b));
        for (int i = 0; i < 50; i++) {
            b.onSuccess();
        }
        assertEquals(10, drain(b), "20% of 50 successes");
        assertEquals(RetryBudget.NEVER, b.nanosUntilToken(), "no minimum rate: only successes bring tokens");
        for (int i = 0; i < 500; i++) {
            b.onSuccess();
        }
        assertEquals(0, b.nanosUntilToken(), "100 tokens now");
        advanceMillis(25_000); // more than two windows: those successes are no longer recent
        assertEquals(1, drain(b), "the cap fell back to the reserve of one token");
    }

    @Test
    void successesNobodyLookedAtForLong_countAsSpreadOverThatTime() {
        RetryBudget b = bucket(0.2, 0);
        drain(b);
        for (int i = 0; i < 500; i++) {
            b.onSuccess(); // a healthy hour with no retry: the budget is not looked at
        }
        advanceMillis(25_000);
        assertEquals(40, drain(b), "20% of the 10 s window's share (200) of 500 successes over 25 s");
    }

    @Test
    void depositsAndTime_bothCount_capIsRatioTimesRecentSuccessesPlusReserve() {
        RetryBudget b = bucket(0.5, 2);
        drain(b);
        for (int i = 0; i < 10; i++) {
            b.onSuccess();
        }
        advanceMillis(500); // +1 from time, +5 from successes
        assertEquals(6, drain(b));
        advanceMillis(100_000);
        assertTrue(b.describe().startsWith("token bucket: 2.0 tokens"), b.describe());
    }

    @Test
    void badArguments_nameTheValue() {
        assertEquals("ratio: -1.0 (expected: >= 0)", assertThrows(IllegalArgumentException.class,
                () -> bucket(-1, 1)).getMessage());
        assertEquals("minPerSecond: NaN (expected: >= 0)", assertThrows(IllegalArgumentException.class,
                () -> bucket(0.1, Double.NaN)).getMessage());
        assertEquals("minPerSecond: 0 (expected: > 0 when ratio is 0)", assertThrows(IllegalArgumentException.class,
                () -> bucket(0, 0)).getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> RetryBudget.tokenBucket(0.1, 1, 0, TimeUnit.SECONDS, nanos::get));
    }

    @Test
    void unlimited_neverWaits() {
        RetryBudget b = RetryBudget.unlimited();
        for (int i = 0; i < 1000; i++) {
            assertTrue(b.tryAcquire());
        }
        assertEquals(0, b.nanosUntilToken());
    }
}
