package io.rpctimer.demo.provider.ledger;

/**
 * One call as a demo provider received it.
 *
 * <p>Immutable, so thread-safe.
 */
public final class CallRecord {
    /** {@link #attempt()} of a call without a {@code retry.attempt} attachment: an original call. */
    public static final int NO_ATTEMPT = 0;
    /** {@link #attempt()} of a call whose {@code retry.attempt} attachment is not a number >= 0. */
    public static final int UNPARSABLE_ATTEMPT = -1;

    private final long sequence;
    private final String method;
    private final String callId;
    private final String retryId;
    private final int attempt;
    private final long receivedNanos;
    final Object ledgerState; // the CallLedger state this call is counted in

    CallRecord(long sequence, String method, String callId, String retryId, int attempt, long receivedNanos,
            Object ledgerState) {
        this.sequence = sequence;
        this.method = method;
        this.callId = callId;
        this.retryId = retryId;
        this.attempt = attempt;
        this.receivedNanos = receivedNanos;
        this.ledgerState = ledgerState;
    }

    /**
     * Parses a {@code retry.attempt} attachment.
     *
     * @param attachment the attachment's value, or null if absent
     * @return {@link #NO_ATTEMPT} if null, the number if it is an integer >= 0, else {@link #UNPARSABLE_ATTEMPT}
     */
    public static int parseAttempt(String attachment) {
        if (attachment == null) {
            return NO_ATTEMPT;
        }
        try {
            int attempt = Integer.parseInt(attachment.trim());
            return attempt >= 0 ? attempt : UNPARSABLE_ATTEMPT;
        } catch (NumberFormatException e) {
            return UNPARSABLE_ATTEMPT;
        }
    }

    /** @return 1, 2, 3... in the order this provider received its calls (since the last reset) */
    public long sequence() {
        return sequence;
    }

    /** @return the method name, e.g. {@code send} */
    public String method() {
        return method;
    }

    /** @return the call's {@code callId} argument, or null */
    public String callId() {
        return callId;
    }

    /** @return the {@code retry.id} attachment, or null if absent */
    public String retryId() {
        return retryId;
    }

    /** @return the {@code retry.attempt} attachment: {@link #NO_ATTEMPT}, 1..n, or {@link #UNPARSABLE_ATTEMPT} */
    public int attempt() {
        return attempt;
    }

    /** @return {@link System#nanoTime()} when the call was received */
    public long receivedNanos() {
        return receivedNanos;
    }

    @Override
    public String toString() {
        return "#" + sequence + " " + method + " " + callId + (retryId == null ? "" : " retry " + retryId)
                + (attempt == NO_ATTEMPT ? "" : " attempt " + attempt);
    }
}
