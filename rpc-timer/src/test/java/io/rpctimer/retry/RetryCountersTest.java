package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RetryCountersTest {

    @Test
    void everyFailedCallIsPendingUntilItsOutcome() {
        RetryCounters c = new RetryCounters();
        for (int i = 0; i < 5; i++) {
            c.callFailed();
        }
        c.record(RetryEvent.Type.SCHEDULED);
        c.record(RetryEvent.Type.SENT);
        c.record(RetryEvent.Type.FAILED);
        c.record(RetryEvent.Type.DELIVERED);
        c.record(RetryEvent.Type.ABANDONED);
        c.record(RetryEvent.Type.REJECTED);
        c.record(RetryEvent.Type.HANDED_OVER);
        RetryStats s = c.snapshot();
        assertEquals(5, s.failedCalls());
        assertEquals(1, s.pending());
        assertEquals(4, s.ended());
        assertEquals(s.failedCalls(), s.ended() + s.pending());
        assertEquals(1, s.retriesSent());
        assertEquals(1, s.retriesFailed());
    }
}
