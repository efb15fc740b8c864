package io.rpctimer.demo.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.RetryEvent;
import java.util.List;
import org.junit.jupiter.api.Test;

class CallBookTest {

    private static final String SERVICE = "com.example.Svc";

    private static RetryEvent outcome(RetryEvent.Type type, String id, int attempt) {
        return new RetryEvent(type, id, SERVICE, "send", attempt, "127.0.0.1:1", 0, null, 0);
    }

    @Test
    void everyCallLandsInExactlyOneBucket() {
        CallBook book = new CallBook(SERVICE, CallBook.Accounting.EVENTS);
        for (String id : List.of("a", "b", "c", "d", "e", "f", "g", "h")) {
            book.sent(id);
        }
        book.callerGot("a", CallerSaw.REPLY);
        book.callerGot("b", CallerSaw.FAILED_BACK);
        book.onEvent(outcome(RetryEvent.Type.DELIVERED, "b", 2));
        book.callerGot("c", CallerSaw.FAILED_BACK);
        book.onEvent(outcome(RetryEvent.Type.ABANDONED, "c", 3));
        book.callerGot("d", CallerSaw.REJECTED);
        book.onEvent(outcome(RetryEvent.Type.REJECTED, "d", 0));
        book.callerGot("e", CallerSaw.FAILED_BACK);
        book.onEvent(outcome(RetryEvent.Type.HANDED_OVER, "e", 1));
        book.callerGot("f", CallerSaw.ERROR);
        book.callerGot("g", CallerSaw.FAILED_BACK); // never heard of again
        book.onEvent(new RetryEvent(RetryEvent.Type.SCHEDULED, "h", SERVICE, "send", 1, null, 5, null, 0));
        book.callerGot("h", CallerSaw.FAILED_BACK);
        book.onEvent(outcome(RetryEvent.Type.DELIVERED, "h", 1));
        book.onEvent(outcome(RetryEvent.Type.DELIVERED, "unknown", 1)); // not ours: ignored
        book.providerCompleted("h", 0);
        book.providerCompleted("h", 1); // the original completed after all: a duplicate

        Report running = book.report("wheelfailback");
        assertEquals(1, running.pending());
        assertEquals(0, running.lost());
        assertTrue(running.addsUp());

        Report r = book.report("wheelfailback", true);
        assertEquals(8, r.sent());
        assertEquals(1, r.deliveredFirstTry());
        assertEquals(java.util.Map.of(1, 1L, 2, 1L), r.deliveredOnRetry());
        assertEquals(1, r.abandoned());
        assertEquals(1, r.rejected());
        assertEquals(1, r.rejectedCallerTold());
        assertEquals(1, r.handedOver());
        assertEquals(1, r.callerErrors());
        assertEquals(1, r.lost());
        assertEquals(List.of("g"), r.lostCallIds());
        assertEquals(1, r.duplicates());
        assertTrue(r.addsUp());
    }

    @Test
    void withoutEventsProviderCompletionsDecide() {
        CallBook book = new CallBook(SERVICE, CallBook.Accounting.COMPLETIONS);
        book.sent("a");
        book.sent("b");
        book.callerGot("a", CallerSaw.FAILED_BACK);
        book.callerGot("b", CallerSaw.FAILED_BACK);
        book.providerCompleted("a", 0); // Dubbo's failback sends no retry.attempt
        Report r = book.report("failback", true);
        assertEquals(java.util.Map.of(1, 1L), r.deliveredOnRetry());
        assertEquals(1, r.lost());
        assertTrue(r.addsUp());
    }
}
