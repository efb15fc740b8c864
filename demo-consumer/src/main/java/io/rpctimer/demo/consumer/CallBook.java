package io.rpctimer.demo.consumer;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.retry.RetryOutcome;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The account of every call a consumer sent, joined from three sources: what the caller got back
 * ({@link #callerGot}), the {@code wheelfailback} outcome of a call that failed its first attempt ({@link #onEvent},
 * keyed by {@code retry.id}, which the demo sets to the call id), and what providers completed
 * ({@link #providerCompleted}). From these, {@link #report} says for each call whether it was delivered (first try,
 * or on retry k), abandoned, rejected, handed over, failed back to its caller — or lost: failed back and never heard
 * of again.
 *
 * <p>Two ways to account for failed-back calls: by the outcome events of {@code wheelfailback}
 * ({@link Accounting#EVENTS}), or, for a cluster that sends none (Dubbo's own {@code failback}), by provider
 * completions alone ({@link Accounting#COMPLETIONS}).
 *
 * <p><b>Threading:</b> thread-safe; callers, Dubbo threads and provider threads report concurrently.
 */
public final class CallBook implements RetryListener {

    /** How failed-back calls are accounted for. */
    public enum Accounting {
        /** By {@code wheelfailback}'s outcome events: a call with no outcome is lost. */
        EVENTS,
        /** By provider completions only: a failed-back call no provider completed is lost. */
        COMPLETIONS
    }

    private final String service;
    private final Accounting accounting;
    private final Map<String, Entry> calls = new ConcurrentHashMap<>();
    private final AtomicLong lastSentNanos = new AtomicLong();
    private final AtomicLong lastSettledNanos = new AtomicLong();

    /**
     * @param service    the service interface name whose retry events count
     * @param accounting how failed-back calls are accounted for
     */
    public CallBook(String service, Accounting accounting) {
        this.service = service;
        this.accounting = accounting;
    }

    /** Records a call as it is sent. */
    public void sent(String callId) {
        calls.put(callId, new Entry());
        lastSentNanos.set(System.nanoTime());
    }

    /** Records what the caller got. */
    public void callerGot(String callId, CallerSaw saw) {
        Entry e = calls.get(callId);
        if (e != null) {
            e.callerSaw = saw;
        }
    }

    @Override
    public void onEvent(RetryEvent event) {
        if (!event.isOutcome() || !service.equals(event.service())) {
            return;
        }
        Entry e = calls.get(event.retryId());
        if (e != null && e.outcome == null) {
            e.outcomeAttempt = event.attempt();
            e.outcome = event.type().outcome();
            lastSettledNanos.set(System.nanoTime());
        }
    }

    /**
     * Records that a provider completed the call.
     *
     * @param attempt the {@code retry.attempt} the provider saw (0 for the original call or when absent)
     */
    public void providerCompleted(String callId, int attempt) {
        Entry e = calls.get(callId);
        if (e != null) {
            if (e.completions.getAndIncrement() == 0) {
                e.firstCompletedAttempt = attempt;
            }
            lastSettledNanos.set(System.nanoTime());
        }
    }

    /** @return the id of every call sent */
    public List<String> callIds() {
        return List.copyOf(calls.keySet());
    }

    /** @return the calls whose caller got an exception: rejected, or a failure not retried */
    public Set<String> toldCaller() {
        Set<String> told = new HashSet<>();
        calls.forEach((id, e) -> {
            if (e.callerSaw == CallerSaw.ERROR || e.callerSaw == CallerSaw.REJECTED) {
                told.add(id);
            }
        });
        return told;
    }

    /** @return calls sent */
    public int size() {
        return calls.size();
    }

    /** @return calls whose fate is still open: failed back, or not yet returned to their caller */
    public long unsettled() {
        return calls.values().stream().filter(e -> fate(e) == Fate.OPEN).count();
    }

    /** @return the account now; calls still open count as {@code pending} */
    public Report report(String cluster) {
        return report(cluster, false);
    }

    /**
     * @param finished true once the consumer has shut down: a call still open is then lost
     * @return the account
     */
    public Report report(String cluster, boolean finished) {
        long firstTry = 0;
        long abandoned = 0;
        long rejected = 0;
        long rejectedTold = 0;
        long handedOver = 0;
        long callerErrors = 0;
        long open = 0;
        long duplicates = 0;
        SortedMap<Integer, Long> onRetry = new TreeMap<>();
        List<String> lostIds = new ArrayList<>();
        for (Map.Entry<String, Entry> c : calls.entrySet()) {
            Entry e = c.getValue();
            duplicates += Math.max(0, e.completions.get() - 1);
            switch (fate(e)) {
                case FIRST_TRY -> firstTry++;
                case ON_RETRY -> onRetry.merge(retryAttempt(e), 1L, Long::sum);
                case ABANDONED -> abandoned++;
                case REJECTED -> {
                    rejected++;
                    rejectedTold += e.callerSaw == CallerSaw.REJECTED ? 1 : 0;
                }
                case HANDED_OVER -> handedOver++;
                case CALLER_ERROR -> callerErrors++;
                case OPEN -> {
                    open++;
                    if (finished && lostIds.size() < 20) {
                        lostIds.add(c.getKey());
                    }
                }
            }
        }
        long last = lastSettledNanos.get();
        long drainMillis = last == 0 ? 0 : Math.max(0, (last - lastSentNanos.get()) / 1_000_000);
        return new Report(cluster, accounting, calls.size(), firstTry, onRetry, abandoned, rejected, rejectedTold,
                handedOver, callerErrors, finished ? 0 : open, finished ? open : 0, duplicates, drainMillis,
                List.copyOf(lostIds));
    }

    private int retryAttempt(Entry e) {
        return e.outcome == RetryOutcome.DELIVERED ? e.outcomeAttempt : Math.max(1, e.firstCompletedAttempt);
    }

    private enum Fate { FIRST_TRY, ON_RETRY, ABANDONED, REJECTED, HANDED_OVER, CALLER_ERROR, OPEN }

    private Fate fate(Entry e) {
        RetryOutcome outcome = e.outcome;
        if (outcome != null) {
            return switch (outcome) {
                case DELIVERED -> Fate.ON_RETRY;
                case ABANDONED -> Fate.ABANDONED;
                case REJECTED -> Fate.REJECTED;
                case HANDED_OVER -> Fate.HANDED_OVER;
            };
        }
        CallerSaw saw = e.callerSaw;
        if (saw == CallerSaw.REPLY) {
            return Fate.FIRST_TRY;
        }
        if (saw == CallerSaw.ERROR) {
            return Fate.CALLER_ERROR;
        }
        if (saw == CallerSaw.REJECTED) {
            return Fate.REJECTED;
        }
        if (saw == CallerSaw.FAILED_BACK && accounting == Accounting.COMPLETIONS && e.completions.get() > 0) {
            return Fate.ON_RETRY;
        }
        return Fate.OPEN;
    }

    /** One call's account; each field written by one source. */
    private static final class Entry {
        volatile CallerSaw callerSaw;
        volatile RetryOutcome outcome;
        volatile int outcomeAttempt;
        volatile int firstCompletedAttempt;
        final AtomicInteger completions = new AtomicInteger();
    }
}
