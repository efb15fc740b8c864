package io.rpctimer.spring.boot.actuate;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class JournalFailuresTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final JournalFailures failures = new JournalFailures(60_000, now::get);

    @Test
    void noFailure_isNeverRecent() {
        assertFalse(failures.recent("app", 0));
        now.addAndGet(1);
        assertFalse(failures.recent("app", 0));
    }

    @Test
    void failuresBeforeTheFirstRead_areRecentUntilTheWindowEnds() {
        assertTrue(failures.recent("app", 3));
        now.addAndGet(60_000);
        assertTrue(failures.recent("app", 3), "at the window's end");
        now.addAndGet(1);
        assertFalse(failures.recent("app", 3), "past it, with no new failure");
    }

    @Test
    void aNewFailure_opensTheWindowAgain_perApplication() {
        failures.recent("app", 1);
        failures.recent("other", 0);
        now.addAndGet(120_000);
        assertFalse(failures.recent("app", 1));
        assertTrue(failures.recent("app", 2));
        assertFalse(failures.recent("other", 0), "applications are apart");
    }

    @Test
    void aCounterThatRestarted_isNotAFailure() {
        failures.recent("app", 5);
        now.addAndGet(120_000);
        assertFalse(failures.recent("app", 0), "a new application of the same name starts at 0");
    }
}
