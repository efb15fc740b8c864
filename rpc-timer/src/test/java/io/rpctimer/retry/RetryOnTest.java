package io.rpctimer.retry;

import static io.rpctimer.retry.RetryPolicyTest.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.junit.jupiter.api.Test;

class RetryOnTest {

    private static final Throwable BUSINESS = new IllegalStateException("out of stock");

    @Test
    void rpcRetriesRpcFailuresOnly() {
        assertTrue(RetryOn.rpc().retries(new IOException(), true));
        assertFalse(RetryOn.rpc().retries(BUSINESS, false));
    }

    @Test
    void allRetriesEverything() {
        assertTrue(RetryOn.all().retries(BUSINESS, false));
        assertTrue(RetryOn.all().retries(new IOException(), true));
    }

    @Test
    void classNamesMatchSubclassesAndCauses() {
        RetryOn on = RetryOn.parse("java.io.IOException, java.util.concurrent.TimeoutException");
        assertTrue(on.retries(new FileNotFoundException(), false), "subclass");
        assertTrue(on.retries(new UncheckedIOException(new IOException()), false), "cause");
        assertFalse(on.retries(BUSINESS, false));
        assertTrue(on.retries(BUSINESS, true), "rpc failures are always retried");
        assertEquals("java.io.IOException,java.util.concurrent.TimeoutException", on.toString());
    }

    @Test
    void parseKnowsTheKeywords() {
        assertSame(RetryOn.rpc(), RetryOn.parse("rpc"));
        assertSame(RetryOn.all(), RetryOn.parse(" ALL "));
        assertEquals(RetryOn.exceptions(List.of("a.B")), RetryOn.parse("a.B"));
    }

    @Test
    void blankSpecsAreRejected() {
        assertMessage(IllegalArgumentException.class, "retryOn: '' (expected: rpc, all, or class names)",
                () -> RetryOn.parse(""));
        assertMessage(IllegalArgumentException.class, "retryOn: 'a.B,,c.D' (expected: rpc, all, or class names)",
                () -> RetryOn.parse("a.B,,c.D"));
        assertMessage(IllegalArgumentException.class, "retryOn: 'null' (expected: rpc, all, or class names)",
                () -> RetryOn.parse(null));
        assertMessage(IllegalArgumentException.class, "retryOn: [] (expected: at least one class name)",
                () -> RetryOn.exceptions(List.of()));
    }

    /** A cause chain with a cycle (a -> b -> a) is walked once, not forever. */
    @Test
    @org.junit.jupiter.api.Timeout(value = 10, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
    void causeCycleEndsTheWalk() {
        IllegalStateException a = new IllegalStateException("a");
        IllegalArgumentException b = new IllegalArgumentException("b", a);
        a.initCause(b);
        assertFalse(RetryOn.parse("java.io.IOException").retries(a, false));
        assertTrue(RetryOn.parse("java.lang.IllegalArgumentException").retries(a, false));
    }
}
