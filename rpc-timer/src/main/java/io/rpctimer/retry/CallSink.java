package io.rpctimer.retry;

/**
 * Where a {@link RetryReference} reports what happens to its calls: the {@link RetryLifecycle} counts each report,
 * records it for {@link RetryLifecycle#history}, tells the listeners, and logs what an operator must see. The
 * reference's only way back to its lifecycle.
 *
 * <p><b>Threading:</b> implementations are thread-safe; each method runs on the thread of the step.
 */
interface CallSink {

    /**
     * One more failed call of this instance: its first attempt failed, or ({@code resumed}) it came from the
     * journal (an earlier run's, another instance's). Every such call ends in exactly one outcome step.
     */
    void failed(RetryReference<?> reference, boolean resumed);

    /** One step of one call; an outcome type ends it. {@code custody} is where a HANDED_OVER call went, else null. */
    void step(RetryEvent.Type type, RetryCall<?> call, int attempt, String provider, long delayNanos,
              Throwable failure, String failureText, RetryEvent.Custody custody);

    /** {@code n} calls the reference parked in the journal stay there at its end: each is HANDED_OVER. */
    void parkedHandedOver(RetryReference<?> reference, long n);

    /** A failed call of {@code method} could not be serialized for the journal: it is retried in memory only. */
    void unpersistable(RetryReference<?> reference, String method, boolean firstOfMethod);

    /** A journal entry could not be decoded (torn or corrupt payload): skipped, left in the journal. */
    void unreadable(RetryReference<?> reference, String retryId, Exception e);

    /** The reference ended ({@link RetryReference#destroy()}): it reports nothing more. */
    void destroyed(RetryReference<?> reference);
}
