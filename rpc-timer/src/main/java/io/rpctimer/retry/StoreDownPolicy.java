package io.rpctimer.retry;

/**
 * What happens to a failed call whose journal append the store refused (its database down, its disk full): the
 * call cannot be made durable before its caller hears back. A call whose append may have been written (a timeout
 * after the write started, a lost acknowledgement) is not refused: it goes on, and is never {@link #REJECT}ed.
 *
 * <p><b>Threading:</b> immutable.
 */
public enum StoreDownPolicy {
    /**
     * The call's outcome is {@link RetryOutcome#REJECTED}, and its caller gets an exception naming the store (the
     * default): a caller told that the call was taken can count on it surviving a crash of this process.
     */
    REJECT,
    /**
     * The caller gets the empty failback result and the call is retried from memory, journaled at its next attempt
     * once the store works again (a graceful stop waits for the store to append it); a crash of this process before
     * then loses the call, as Dubbo's own failback would.
     */
    MEMORY
}
