package io.rpctimer.bench.massfailure;

import io.rpctimer.demo.provider.ledger.CallListener;
import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.demo.provider.ledger.CallRecord;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the providers saw of the mass-failure run's calls, kept in fixed arrays indexed by the call's number (call
 * ids are {@code mf-<n>}), so that counting allocates nothing per call and does not grow the heap being measured:
 * how many attempts of each call arrived and completed, the calls delivered (completed at least once) and when the
 * last was, and, per second since the run's origin, the retries that arrived (an arrival of a call already seen).
 *
 * <p><b>Threading:</b> thread-safe: {@link #onCallEnded} runs on the providers' server threads; the figures may be
 * read from any thread.
 */
final class ProviderTally implements CallListener {

    static final String PREFIX = "mf-";
    /** Seconds of per-second retry counts kept; later arrivals count in the last second. */
    static final int SECONDS = 3_600;

    private final long originNanos;
    private final AtomicIntegerArray arrivals;
    private final AtomicIntegerArray completions;
    private final AtomicLongArray retriesPerSecond = new AtomicLongArray(SECONDS);
    private final LongAdder delivered = new LongAdder();
    private final LongAdder foreign = new LongAdder();
    private final AtomicLong lastDeliveryNanos = new AtomicLong(Long.MIN_VALUE);

    ProviderTally(int calls, long originNanos) {
        this.arrivals = new AtomicIntegerArray(calls);
        this.completions = new AtomicIntegerArray(calls);
        this.originNanos = originNanos;
    }

    static String callId(int n) {
        return PREFIX + n;
    }

    @Override
    public void onCallEnded(CallRecord call, CallOutcome outcome, Duration elapsed, String detail) {
        int n = index(call.callId());
        if (n < 0) {
            foreign.increment();
            return;
        }
        long now = System.nanoTime();
        if (arrivals.getAndIncrement(n) > 0) {
            int second = (int) Math.min(SECONDS - 1, Math.max(0, (now - originNanos) / 1_000_000_000L));
            retriesPerSecond.incrementAndGet(second);
        }
        if (outcome == CallOutcome.COMPLETED && completions.getAndIncrement(n) == 0) {
            delivered.increment();
            lastDeliveryNanos.accumulateAndGet(now, Math::max);
        }
    }

    private int index(String callId) {
        if (callId == null || !callId.startsWith(PREFIX)) {
            return -1;
        }
        try {
            int n = Integer.parseInt(callId, PREFIX.length(), callId.length(), 10);
            return n >= 0 && n < arrivals.length() ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** @return calls completed at least once */
    long delivered() {
        return delivered.sum();
    }

    /** @return completions beyond the first of each call: duplicates */
    long duplicates() {
        long extra = 0;
        for (int i = 0; i < completions.length(); i++) {
            extra += Math.max(0, completions.get(i) - 1);
        }
        return extra;
    }

    /** @return attempts that arrived, all calls */
    long arrivals() {
        long sum = 0;
        for (int i = 0; i < arrivals.length(); i++) {
            sum += arrivals.get(i);
        }
        return sum;
    }

    /** @return calls the run did not send (another id, or none) that reached the providers */
    long foreignCalls() {
        return foreign.sum();
    }

    /** @return {@code System.nanoTime()} of the last first completion, or MIN_VALUE if none */
    long lastDeliveryNanos() {
        return lastDeliveryNanos.get();
    }

    /** @return the highest count of retries that arrived at the providers within one second */
    long peakRetriesPerSecond() {
        long peak = 0;
        for (int i = 0; i < SECONDS; i++) {
            peak = Math.max(peak, retriesPerSecond.get(i));
        }
        return peak;
    }

    /** @return retries that arrived per second since the origin, up to the last non-zero second */
    long[] retriesPerSecond() {
        int last = -1;
        for (int i = 0; i < SECONDS; i++) {
            if (retriesPerSecond.get(i) > 0) {
                last = i;
            }
        }
        long[] out = new long[last + 1];
        for (int i = 0; i <= last; i++) {
            out[i] = retriesPerSecond.get(i);
        }
        return out;
    }
}
