package io.rpctimer.chaos;

import java.time.Duration;

/**
 * One fault of the chaos run's schedule: what, on which target, when (from the start of the fault phase) and for how
 * long.
 *
 * @param kind    what is done
 * @param target  {@code c1..cN} (a consumer slot), {@code p1}/{@code p2} (a provider) or {@code db}
 * @param at      when it begins, from the start of the fault phase
 * @param holds   how long it lasts: the pause, the down time, the hang or error window, the skewed run
 * @param skewMillis for {@link Kind#SKEW}: the offset of the restarted consumer's clock (negative: behind); else 0
 */
record Fault(Kind kind, String target, Duration at, Duration holds, long skewMillis) {

    /** The kinds of fault, and how each is injected. */
    enum Kind {
        /** {@code kill -STOP} a consumer for longer than its lease (and the adopters' claim period), then {@code -CONT}. */
        PAUSE,
        /** {@code kill -9} a consumer, start it again after {@code holds}. */
        KILL,
        /** SIGTERM a consumer (a graceful stop: pending calls are handed over), start it again at once. */
        DEPLOY,
        /** Stop PostgreSQL (journal and dedup store), start it again on the same data directory after {@code holds}. */
        DB_RESTART,
        /** Restart a consumer with its clock shifted by {@code skewMillis} (libfaketime), for {@code holds}. */
        SKEW,
        /** A provider fails every call at the RPC level for {@code holds}. */
        PROVIDER_ERRORS,
        /** A provider hangs every call for longer than the consumers' timeout, for {@code holds}. */
        PROVIDER_HANG;

        /** @return whether it targets a consumer slot */
        boolean onConsumer() {
            return this == PAUSE || this == KILL || this == DEPLOY || this == SKEW;
        }
    }

    /** @return when it ends, from the start of the fault phase */
    Duration end() {
        return at.plus(holds);
    }

    @Override
    public String toString() {
        return String.format("+%6.1fs %-15s %-3s for %5.1fs%s", at.toMillis() / 1000.0, kind, target,
                holds.toMillis() / 1000.0, kind == Kind.SKEW ? String.format(" (clock %+d ms)", skewMillis) : "");
    }
}
