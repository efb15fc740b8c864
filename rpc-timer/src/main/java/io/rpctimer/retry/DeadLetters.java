package io.rpctimer.retry;

import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The dead letters of one application, and what an operator does with them: the one API behind the QoS command, an
 * Actuator endpoint or a page ({@link RetryLifecycle#deadLetters()}). Plain JDK types, paged results, and errors that
 * name the argument and its value.
 *
 * <h3>What is kept</h3>
 * A call that ends {@code ABANDONED} after at least one retry becomes a dead letter: its call (arguments and
 * attachments), {@code retry.id}, service, method, retries sent, first and last failure times, the last failure's text
 * and class, and the last provider. With a journal that keeps dead letters (the JDBC and embedded journals), it moves
 * from the pending calls to the dead letters in one transaction, and only while this instance still holds the call;
 * in a fleet on a shared database every instance sees the same dead letters. Without one, they are kept in memory
 * and lost at restart. A call the journal did not hold (its append failed, or its arguments could not be serialized)
 * is not kept: counted in {@link DeadLetterStats#notKept()}, logged once. Calls with {@code retries=0} never become
 * dead letters. A newer dead letter of the same key (a reused business key) replaces the older one. Bounds:
 * {@link DeadLetterPolicy}.
 *
 * <h3>Replay</h3>
 * {@link #replay} makes dead letters pending calls again, with their original {@code retry.id} (so a provider's
 * {@code retrydedup} runs each once) and a fresh retry schedule: the first retry of the k-th one is due k / rate
 * seconds after the replay starts, or at once without a rate; every retry then passes its reference's retry budget,
 * so a replay is never faster than the budget allows. With a journal, a replayed dead letter moves back into the
 * journal's pending calls (owned by this instance) in one transaction that only one replay ever wins, two operators
 * or two instances at once included; the reference's unpark and claim put it on the wheel, and each send is fenced
 * as any other. A replay needs a live reference of the call's service on this instance: its call is decoded with
 * that reference's serialization.
 *
 * <h3>Failures</h3>
 * An operation that finds the store down throws {@link RetryJournalException} naming the store, having changed
 * nothing (a replay that fails part-way says how many it replayed first; those are pending calls, the rest stay dead
 * letters). A purge deletes dead letters only, never a pending call.
 *
 * <p><b>Threading:</b> thread-safe. {@link #list}, {@link #show}, {@link #replay}, {@link #purge} and {@link #trim}
 * block the calling thread on the store (a journal bounds each statement by its claim timeout); {@link #stats} never
 * does. A journal's dead letters are trimmed on the lifecycle's executor every trim period.
 */
public final class DeadLetters {

    private static final System.Logger LOG = System.getLogger(DeadLetters.class.getName());
    /** The largest page {@link #list} returns. */
    public static final int MAX_PAGE_SIZE = 1_000;
    /** The fastest replay pace, in replays per second. */
    public static final double MAX_PER_SECOND = 100_000;

    private final String application;
    private final GuardedJournal journal;
    private final DeadLetterStore store;
    /** The store, when it is the one in memory; null when the journal keeps the dead letters. */
    private final MemoryDeadLetters memory;
    private final DeadLetterPolicy policy;
    private final RetryLifecycle lifecycle;
    private final LongSupplier clockMillis;
    /** Dead letters of the application: exact in memory; for a journal, the last trim's count moved by our changes. */
    private final AtomicLong dead = new AtomicLong();
    private final LongAdder buried = new LongAdder();
    private final LongAdder notKept = new LongAdder();
    private final LongAdder replayed = new LongAdder();
    private final LongAdder purged = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder expired = new LongAdder();
    private final AtomicBoolean notKeptLogged = new AtomicBoolean();
    private final AtomicBoolean trimFailing = new AtomicBoolean();
    private volatile Timeout trimTimeout;
    private volatile boolean closed;

    DeadLetters(RetryLifecycle lifecycle, GuardedJournal journal, DeadLetterPolicy policy, LongSupplier clockMillis) {
        this.application = lifecycle.application();
        this.lifecycle = lifecycle;
        this.journal = journal;
        this.policy = policy;
        this.clockMillis = clockMillis;
        DeadLetterStore journals = journal.deadLetters();
        this.memory = journals == null ? new MemoryDeadLetters(clockMillis) : null;
        this.store = journals == null ? memory : journals;
    }

    // ------------------------------------------------------------------ the operator's API

    /**
     * @param filter   which dead letters
     * @param page     the page, 1-based
     * @param pageSize dead letters per page, 1 to {@value #MAX_PAGE_SIZE}
     * @return the page, newest first, with how many match in all
     * @throws IllegalArgumentException naming {@code page} or {@code pageSize}, if out of range
     * @throws RetryJournalException    if the store failed
     */
    public DeadLetterPage list(DeadLetterFilter filter, int page, int pageSize) throws RetryJournalException {
        requireFilter(filter);
        if (page < 1) {
            throw new IllegalArgumentException("page: " + page + " (expected: >= 1)");
        }
        if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
            throw new IllegalArgumentException("pageSize: " + pageSize + " (expected: 1 to " + MAX_PAGE_SIZE + ")");
        }
        trimMemory();
        return store.list(application, filter, page, pageSize);
    }

    /**
     * @param retryId a dead letter's {@code retry.id}
     * @return its dead letters (one, unless a business key names calls of two services or methods), each with the
     *     steps this instance recorded of it
     * @throws NoSuchDeadLetterException if no dead letter has it
     * @throws RetryJournalException     if the store failed
     */
    public List<DeadLetterDetail> show(String retryId) throws RetryJournalException {
        trimMemory();
        DeadLetterPage found = store.list(application, DeadLetterFilter.retryId(retryId), 1, MAX_PAGE_SIZE);
        if (found.letters().isEmpty()) {
            throw new NoSuchDeadLetterException(application, retryId);
        }
        List<DeadLetterDetail> details = new ArrayList<>();
        for (DeadLetter l : found.letters()) {
            details.add(new DeadLetterDetail(l, lifecycle.history(retryId).stream()
                    .filter(s -> s.serviceKey().equals(l.serviceKey()) && s.method().equals(l.method())).toList()));
        }
        return details;
    }

    /**
     * Replays the matching dead letters paced only by each reference's retry budget.
     *
     * @see #replay(DeadLetterFilter, double)
     */
    public ReplayResult replay(DeadLetterFilter filter) throws RetryJournalException {
        requireFilter(filter);
        trimMemory();
        return new DeadLetterReplay(this, filter, 0).run();
    }

    /**
     * Replays the matching dead letters, oldest first, at most {@code perSecond} a second (and within each
     * reference's retry budget). See the class comment.
     *
     * @param filter    which dead letters; {@link DeadLetterFilter#all()} for every one
     * @param perSecond the pace, replays per second, {@code > 0} and {@code <=} {@value #MAX_PER_SECOND}
     * @return what was replayed, and why the others were not
     * @throws IllegalArgumentException   naming {@code perSecond}, if out of range
     * @throws NoSuchDeadLetterException  if the filter names a {@code retry.id} no dead letter has
     * @throws IllegalStateException      if the filter names a {@code retry.id} whose service has no live reference
     *                                    on this instance
     * @throws RetryJournalException      if the store failed
     */
    public ReplayResult replay(DeadLetterFilter filter, double perSecond) throws RetryJournalException {
        requireFilter(filter);
        if (!(perSecond > 0 && perSecond <= MAX_PER_SECOND)) {
            throw new IllegalArgumentException("perSecond: " + perSecond + " (expected: > 0 and <= "
                    + (long) MAX_PER_SECOND + " replays per second)");
        }
        trimMemory();
        return new DeadLetterReplay(this, filter, perSecond).run();
    }

    /**
     * Deletes the matching dead letters (never a pending call), in one atomic step.
     *
     * @param filter which dead letters; {@link DeadLetterFilter#all()} for every one, {@code olderThan} for the old
     * @return how many were deleted
     * @throws NoSuchDeadLetterException if the filter names a {@code retry.id} and nothing matched
     * @throws RetryJournalException     if the store failed; then nothing was deleted
     */
    public long purge(DeadLetterFilter filter) throws RetryJournalException {
        requireFilter(filter);
        trimMemory();
        long n = store.purge(application, filter);
        if (n == 0 && filter.retryId() != null) {
            throw new NoSuchDeadLetterException(application, filter.retryId());
        }
        purged.add(n);
        dead.addAndGet(-n);
        return n;
    }

    /**
     * Applies the bounds now: drops the dead letters past the retention, then the oldest past the maximum, and
     * counts what is left. Runs by itself every trim period for a journal; a store in memory trims as it grows.
     *
     * @throws RetryJournalException if the store failed
     */
    public DeadLetterStore.Trimmed trim() throws RetryJournalException {
        DeadLetterStore.Trimmed t = store.trim(application, policy.retention().toMillis(), policy.max());
        dead.set(t.remaining());
        bounded(t);
        return t;
    }

    /** @return the counts, without asking the store */
    public DeadLetterStats stats() {
        long n = memory != null ? memory.size() : Math.max(0, dead.get());
        return new DeadLetterStats(n, buried.sum(), notKept.sum(), replayed.sum(), purged.sum(), dropped.sum(),
                expired.sum(), store.durable());
    }

    /** @return whether the dead letters survive a restart (false: kept in memory, lost at restart) */
    public boolean durable() {
        return store.durable();
    }

    /** @return where they are kept, for operators; no secret */
    public String describe() {
        return store.describe();
    }

    public DeadLetterPolicy policy() {
        return policy;
    }

    public String application() {
        return application;
    }

    // ------------------------------------------------------------------ for the lifecycle

    /**
     * A call ended ABANDONED after {@code attempt >= 1} retries: it becomes a dead letter, or is removed from the
     * journal if none is kept.
     */
    void abandoned(RetryCall<?> call, int attempt, String provider, Throwable failure, String failureText) {
        Abandonment how = Abandonment.of(attempt, provider, failure, failureText);
        if (memory != null || !policy.keeps()) {
            if (call.journaled != RetryCall.Journaled.NO) {
                journal.remove(call.key(), RetryEvent.Type.ABANDONED);
            }
            if (memory != null && policy.keeps()) {
                keepInMemory(call, how);
            }
        } else if (call.journaled == RetryCall.Journaled.NO) {
            notKept(call.key(), "the journal does not hold it (its append failed, or its arguments could not be"
                    + " serialized)");
        } else {
            journal.bury(call.key(), how).thenAccept(b -> {
                switch (b) {
                    case BURIED -> {
                        buried.increment();
                        dead.incrementAndGet();
                    }
                    case FAILED -> notKept(call.key(), "the journal failed to move it (see journalFailures); it stays"
                            + " among the pending calls, and a later start sends it again");
                    case ELSEWHERE -> { } // another instance adopted the call: it goes on there
                }
            });
        }
    }

    private void keepInMemory(RetryCall<?> call, Abandonment how) {
        DeadLetter letter = new DeadLetter(application, call.serviceKey(), call.method(), call.retryId(),
                how.attempts(), call.createdEpochMillis(), clockMillis.getAsLong(), how.lastFailure(),
                how.failureClass(), how.lastProvider(), -1);
        buried.increment();
        bounded(memory.add(letter, call.payload(), policy.retention().toMillis(), policy.max()));
    }

    /** Dead letters in memory past the retention go before anyone reads them: no timer trims them. */
    private void trimMemory() {
        if (memory != null) {
            bounded(memory.trim(application, policy.retention().toMillis(), policy.max()));
        }
    }

    private void notKept(CallKey key, String why) {
        notKept.increment();
        if (notKeptLogged.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "wheelfailback {0} was abandoned and is not kept as a dead letter: {1} (logged"
                    + " once; see notKept in the dead letters'' stats)", key, why);
        }
    }

    private void bounded(DeadLetterStore.Trimmed t) {
        expired.add(t.expired());
        dropped.add(t.dropped());
        if (t.dropped() > 0) {
            LOG.log(Level.WARNING, "wheelfailback dead letters of {0}: dropped the {1} oldest past failback.dead.max"
                    + "={2}", application, t.dropped(), policy.max());
        }
        if (t.expired() > 0) {
            LOG.log(Level.INFO, "wheelfailback dead letters of {0}: dropped {1} older than failback.dead.retention"
                    + "={2}", application, t.expired(), DurationText.format(policy.retention()));
        }
    }

    /** Starts the periodic trim of a journal's dead letters on {@code timer}, run on {@code executor}. */
    void start(Timer timer, Executor executor) {
        if (store.durable() && !policy.trimPeriod().isZero()) {
            scheduleTrim(timer, executor, 1); // at once: the count is known from the start
        }
    }

    private void scheduleTrim(Timer timer, Executor executor, long delayMillis) {
        if (closed) {
            return;
        }
        try {
            trimTimeout = timer.newTimeout(t -> {
                try {
                    executor.execute(() -> trimAndReschedule(timer, executor));
                } catch (RejectedExecutionException full) {
                    scheduleTrim(timer, executor, policy.trimPeriod().toMillis());
                }
            }, delayMillis, TimeUnit.MILLISECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            // the wheel stopped: the application is closing
        }
    }

    private void trimAndReschedule(Timer timer, Executor executor) {
        try {
            trim();
            if (trimFailing.compareAndSet(true, false)) {
                LOG.log(Level.INFO, "wheelfailback dead letters of {0}: trimmed again", application);
            }
        } catch (RetryJournalException | RuntimeException e) {
            if (trimFailing.compareAndSet(false, true)) {
                LOG.log(Level.WARNING, "wheelfailback dead letters of " + application + ": trim failed; tried again"
                        + " every " + DurationText.format(policy.trimPeriod()), e);
            }
        } finally {
            scheduleTrim(timer, executor, policy.trimPeriod().toMillis());
        }
    }

    /** Stops the periodic trim. */
    void close() {
        closed = true;
        Timeout t = trimTimeout;
        if (t != null) {
            t.cancel();
        }
    }

    // ------------------------------------------------------------------ for the replay

    DeadLetterStore store() {
        return store;
    }

    RetryLifecycle lifecycle() {
        return lifecycle;
    }

    long nowMillis() {
        return clockMillis.getAsLong();
    }

    void replayed(long n) {
        replayed.add(n);
        dead.addAndGet(-n);
    }

    private static void requireFilter(DeadLetterFilter filter) {
        if (filter == null) {
            throw new IllegalArgumentException("filter: null (expected: a DeadLetterFilter; all() for every one)");
        }
    }

    @Override
    public String toString() {
        return "DeadLetters(" + application + ", " + stats().dead() + " in " + describe() + ")";
    }
}
