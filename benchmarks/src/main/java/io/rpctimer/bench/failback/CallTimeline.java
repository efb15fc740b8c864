package io.rpctimer.bench.failback;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.provider.ledger.CallListener;
import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * When each step of each call happened, on one clock ({@code System.nanoTime()}): the send and what the caller got
 * (from the sender), every attempt a provider finished (as a provider ledger listener: when it arrived, when it ended,
 * how), and every {@code wheelfailback} retry event (as a {@link RetryListener}). The accounting of outcomes is
 * {@code DemoConsumer}'s; this class adds the times, the same way for both clusters: a call's first arrival at a
 * provider is its original attempt, every later arrival a retry.
 *
 * <p><b>Threading:</b> thread-safe: callers, Dubbo's threads, the wheel's executor and provider threads record
 * concurrently; {@link #analyse} reads once the run has stopped.
 */
final class CallTimeline implements RetryListener {

    private final String service;
    private final Map<String, Call> calls = new ConcurrentHashMap<>();

    /** @param service the service interface name whose retry events count */
    CallTimeline(String service) {
        this.service = service;
    }

    /** An attempt as a provider saw it end: nanoTime of arrival and end, the outcome, the retry.attempt attachment. */
    private record Arrival(long receivedNanos, long endedNanos, CallOutcome outcome, int attempt) {
    }

    /** One call's steps; each field written by one source. */
    private static final class Call {
        volatile long sentNanos;
        volatile long returnedNanos;
        volatile CallerSaw saw;
        volatile RetryEvent.Type outcome;
        volatile int outcomeAttempt;
        /** guarded by itself. */
        final List<Arrival> arrivals = new ArrayList<>(2);
        /** retry attempt -> [scheduled at, drawn delay, sent at] (wheelfailback events); guarded by itself. */
        final Map<Integer, long[]> retries = new TreeMap<>();
    }

    void sent(String callId) {
        Call c = new Call();
        c.sentNanos = System.nanoTime();
        calls.put(callId, c);
    }

    void callerGot(String callId, CallerSaw saw) {
        Call c = calls.get(callId);
        if (c != null) {
            c.returnedNanos = System.nanoTime();
            c.saw = saw;
        }
    }

    @Override
    public void onEvent(RetryEvent e) {
        long now = System.nanoTime();
        Call c = service.equals(e.service()) ? calls.get(e.retryId()) : null;
        if (c == null) {
            return;
        }
        synchronized (c.retries) {
            if (e.type() == RetryEvent.Type.SCHEDULED) {
                long[] r = c.retries.computeIfAbsent(e.attempt(), k -> new long[] {-1, -1, -1});
                r[0] = now;
                r[1] = TimeUnit.MILLISECONDS.toNanos(e.delayMillis());
            } else if (e.type() == RetryEvent.Type.SENT) {
                c.retries.computeIfAbsent(e.attempt(), k -> new long[] {-1, -1, -1})[2] = now;
            }
        }
        if (e.isOutcome() && c.outcome == null) {
            c.outcomeAttempt = e.attempt();
            c.outcome = e.type();
        }
    }

    /** @return a listener for a provider's ledger, recording every attempt of a sent call as it ends */
    CallListener providerListener() {
        return (call, outcome, elapsed, detail) -> {
            Call c = call.callId() == null ? null : calls.get(call.callId());
            if (c != null) {
                Arrival a = new Arrival(call.receivedNanos(), System.nanoTime(), outcome, call.attempt());
                synchronized (c.arrivals) {
                    c.arrivals.add(a);
                }
            }
        };
    }

    /**
     * The times of a finished run.
     *
     * @param lastSendNanos           when the last call was sent
     * @param deliveredByRetry        calls a retry completed at a provider
     * @param neverCompleted          calls no provider ever completed
     * @param drainMillis             from the last send to the last first-completion of a retry (0 if none after it)
     * @param lastDeliveringRetry     wheelfailback: the retry number of that last delivery; 0 if unknown
     * @param scheduleAllowsMillis    wheelfailback: from the last send to the latest time its schedule allows for
     *                                those deliveries: each delivering retry's due time (drawn delay, jitter
     *                                included) + one tick + that retry's own time from sent to completed; NaN for Dubbo
     * @param worstRetryLatenessMillis wheelfailback: the worst (retry sent - its due time) over every retry; NaN for
     *                                Dubbo
     * @param drawnDelays             wheelfailback: per retry number, the range of the delays drawn, in seconds
     */
    record Times(long lastSendNanos, long deliveredByRetry, long neverCompleted, double drainMillis,
                 int lastDeliveringRetry, double scheduleAllowsMillis, double worstRetryLatenessMillis,
                 Map<Integer, String> drawnDelays) {
    }

    /**
     * @param events    true for wheelfailback (retry events recorded), false for Dubbo's failback
     * @param tickNanos the failback timer's tick, allowed once on top of the due time
     */
    Times analyse(boolean events, long tickNanos) {
        long lastSend = calls.values().stream().mapToLong(c -> c.sentNanos).max().orElse(0);
        long byRetry = 0;
        long never = 0;
        long lastDelivery = Long.MIN_VALUE;
        int lastRetry = 0;
        long allowed = Long.MIN_VALUE;
        long worstLateness = Long.MIN_VALUE;
        Map<Integer, long[]> delayRange = new TreeMap<>();
        for (Call c : calls.values()) {
            List<Arrival> arrivals;
            synchronized (c.arrivals) {
                arrivals = new ArrayList<>(c.arrivals);
            }
            arrivals.sort(Comparator.comparingLong(Arrival::receivedNanos));
            if (arrivals.stream().noneMatch(a -> a.outcome == CallOutcome.COMPLETED)) {
                never++;
            }
            Arrival delivering = arrivals.stream().skip(1).filter(a -> a.outcome == CallOutcome.COMPLETED)
                    .min(Comparator.comparingLong(Arrival::endedNanos)).orElse(null);
            Map<Integer, long[]> retries;
            synchronized (c.retries) {
                retries = new TreeMap<>(c.retries);
            }
            for (Map.Entry<Integer, long[]> e : retries.entrySet()) {
                long[] x = e.getValue();
                if (x[0] >= 0 && x[2] >= 0) {
                    worstLateness = Math.max(worstLateness, x[2] - (x[0] + x[1]));
                    long[] range = delayRange.computeIfAbsent(e.getKey(),
                            k -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE});
                    range[0] = Math.min(range[0], x[1]);
                    range[1] = Math.max(range[1], x[1]);
                }
            }
            if (delivering == null) {
                continue;
            }
            byRetry++;
            long at = delivering.endedNanos;
            if (at > lastDelivery) {
                lastDelivery = at;
                lastRetry = delivering.attempt;
            }
            long[] r = retries.get(delivering.attempt);
            if (events && r != null && r[0] >= 0 && r[2] >= 0) {
                allowed = Math.max(allowed, r[0] + r[1] + tickNanos + (at - r[2]));
            }
        }
        double drain = lastDelivery == Long.MIN_VALUE ? 0 : Math.max(0, lastDelivery - lastSend) / 1e6;
        double allows = !events ? Double.NaN : allowed == Long.MIN_VALUE ? 0 : Math.max(0, allowed - lastSend) / 1e6;
        double lateness = !events || worstLateness == Long.MIN_VALUE ? Double.NaN : worstLateness / 1e6;
        Map<Integer, String> ranges = new LinkedHashMap<>();
        delayRange.forEach((k, v) -> ranges.put(k, String.format(Locale.ROOT, "%.2f-%.2f s", v[0] / 1e9,
                v[1] / 1e9)));
        return new Times(lastSend, byRetry, never, drain, lastRetry, allows, lateness, ranges);
    }
}
