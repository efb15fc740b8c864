package io.rpctimer.retry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The calls of one {@link RetryReference} with a retry pending in memory, as an intrusive set: each call carries its
 * own two links ({@link RetryCall#prevPending}, {@link RetryCall#nextPending}). A pending call costs those 8 bytes
 * here instead of a {@code ConcurrentHashMap} node and its share of the table (about 43 bytes, from the mass-failure
 * run's class histograms), which matters with 100,000 calls pending. The set is split into stripes, chosen by the
 * call's identity hash, so that failures on many threads do not meet on one lock.
 *
 * <p><b>Threading:</b> thread-safe. {@link #add} and {@link #remove} lock one stripe for a few field writes;
 * {@link #snapshot} copies one stripe at a time under its lock, so it sees every call added before it started and not
 * removed until it ended, and may or may not see the others (as a {@code ConcurrentHashMap}'s iterator does). A
 * call's links are read and written only under its stripe's lock.
 */
final class PendingCalls<P> {

    /** One stripe: a circular doubly linked list around a sentinel that is not a call of the set. */
    private static final class Stripe {
        final RetryCall<?> head = RetryCall.sentinel();

        Stripe() {
            head.prevPending = head;
            head.nextPending = head;
        }
    }

    private final Stripe[] stripes;

    PendingCalls() {
        int n = 4;
        while (n < 4 * Runtime.getRuntime().availableProcessors() && n < 64) {
            n <<= 1;
        }
        stripes = new Stripe[n];
        for (int i = 0; i < stripes.length; i++) {
            stripes[i] = new Stripe();
        }
    }

    private Stripe stripe(RetryCall<?> call) {
        int h = System.identityHashCode(call);
        return stripes[(h ^ (h >>> 16)) & (stripes.length - 1)];
    }

    /** Adds {@code call}, which must not be in any set. */
    void add(RetryCall<P> call) {
        Stripe s = stripe(call);
        synchronized (s) {
            RetryCall<?> last = s.head.prevPending;
            call.prevPending = last;
            call.nextPending = s.head;
            last.nextPending = call;
            s.head.prevPending = call;
        }
    }

    /** @return true if {@code call} was in the set (and is not any more) */
    boolean remove(RetryCall<P> call) {
        Stripe s = stripe(call);
        synchronized (s) {
            RetryCall<?> prev = call.prevPending;
            if (prev == null) {
                return false;
            }
            RetryCall<?> next = call.nextPending;
            prev.nextPending = next;
            next.prevPending = prev;
            call.prevPending = null;
            call.nextPending = null;
            return true;
        }
    }

    /** @return the calls in the set, stripe by stripe (see the class comment for what a concurrent change does) */
    @SuppressWarnings("unchecked")
    List<RetryCall<P>> snapshot() {
        List<RetryCall<P>> out = new ArrayList<>();
        for (Stripe s : stripes) {
            synchronized (s) {
                for (RetryCall<?> c = s.head.nextPending; c != s.head; c = c.nextPending) {
                    out.add((RetryCall<P>) c);
                }
            }
        }
        return out;
    }

    /** @return the calls in the set by their journal key, as {@link #snapshot} sees them */
    Map<CallKey, RetryCall<P>> byKey() {
        Map<CallKey, RetryCall<P>> out = new HashMap<>();
        for (RetryCall<P> c : snapshot()) {
            out.put(c.key(), c);
        }
        return out;
    }
}
