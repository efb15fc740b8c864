package io.rpctimer.retry;

import java.util.concurrent.CompletionStage;

/**
 * What {@link RetryReference#admit} did with a failed call, and the handle of the call's eventual outcome.
 *
 * <p><b>Threading:</b> immutable; the handle completes on whichever thread ends the call.
 */
public final class Admission {

    /** What became of the call at admission. */
    public enum Kind {
        /** A retry is on the wheel. */
        SCHEDULED,
        /** Past the pending cap with {@code overflow=spill}: kept in the journal, put on the wheel when room frees. */
        PARKED,
        /** Refused at the pending cap: the outcome is {@code REJECTED}. */
        REJECTED,
        /** Ended at once: {@code ABANDONED} ({@code retries=0}) or {@code HANDED_OVER} (the reference is closing). */
        ENDED
    }

    private final Kind kind;
    private final boolean callerFails;
    private final String reason;
    private final CompletionStage<CallOutcome> outcome;

    Admission(Kind kind, boolean callerFails, String reason, CompletionStage<CallOutcome> outcome) {
        this.kind = kind;
        this.callerFails = callerFails;
        this.reason = reason;
        this.outcome = outcome;
    }

    public Kind kind() {
        return kind;
    }

    /**
     * @return true if the caller must get an exception (REJECTED with {@code overflow=reject}, or a spill the journal
     *     refused); false if the caller gets the empty failback result
     */
    public boolean callerFails() {
        return callerFails;
    }

    /** @return why the call was rejected, for the caller's exception and the log; null unless REJECTED */
    public String reason() {
        return reason;
    }

    /**
     * @return the handle of the call's outcome, completed exactly once with it; null unless the call was admitted
     *     with {@code watchOutcome} (no handle is kept for calls nobody watches)
     */
    public CompletionStage<CallOutcome> outcome() {
        return outcome;
    }

    @Override
    public String toString() {
        return "Admission(" + kind + (reason == null ? "" : ": " + reason) + ')';
    }
}
