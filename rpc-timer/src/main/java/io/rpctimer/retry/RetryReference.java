package io.rpctimer.retry;

import static io.rpctimer.retry.RetryCall.ENDED;
import static io.rpctimer.retry.RetryCall.IN_FLIGHT;
import static io.rpctimer.retry.RetryCall.SCHEDULED;
import static io.rpctimer.retry.RetryCall.WAITING;

import io.rpctimer.wheel.Timeout;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The retries of one reference (one service of one application): admits its failed calls, schedules them on the
 * wheel, lets them through its {@link RetryBudget}, has the glue's {@link AttemptSender} send each attempt, and
 * drives each call to exactly one outcome from the replies, recording it in the {@link RetryJournal} on the way.
 * Create one with {@link RetryLifecycle#reference}.
 *
 * <h3>Life of a call</h3>
 * <pre>
 *  admit ─┬─ retries=0 ───────────────────────────────────────────▶ ABANDONED (attempt 0)
 *         ├─ over the cap ─┬─ spill, journal takes it ─▶ PARKED ──(room frees: unpark)──▶ SCHEDULED
 *         │                └─ otherwise ──────────────────────────────────────────────▶ REJECTED
 *         └─ journal.append (if any), then ───────────────────────────────────────────▶ SCHEDULED
 *  SCHEDULED ─(due)▶ WAITING ─(token, FIFO)▶ IN_FLIGHT ─┬─ delivered ────────────────▶ DELIVERED (attempt k)
 *                                                        ├─ failed, policy stops ─────▶ ABANDONED (attempt k)
 *                                                        └─ failed, retries left: journal.update ─▶ SCHEDULED
 *                                                           (update says "not ours": ▶ HANDED_OVER)
 *  any state ─(destroy, application close, wheel stopped)─────────────────────────────▶ HANDED_OVER
 * </pre>
 * {@code journal.remove} runs at DELIVERED and ABANDONED; a HANDED_OVER call stays in the journal and resumes at
 * the next start ({@link #resume()}); without a journal it goes to the reference's {@link HandOverSink}.
 *
 * <h3>Journal failures</h3>
 * A journal that throws never costs a call: the call goes on in memory (its later progress is still offered to the
 * journal), the failure is counted in {@link LifecycleState#journalFailures()} and logged at WARN once each time the
 * journal goes from working to failing. Only a spill the journal refuses is REJECTED, since there is no room in
 * memory. A call whose payload could not be serialized (a null {@code journalPayload}) is retried in memory,
 * counted in {@link LifecycleState#unpersistable()} and logged once per method. A remove that fails leaves the entry
 * behind: a later start sends that call again, with the same {@code retry.id} (at least once, never lost).
 *
 * <h3>Caveats</h3>
 * The wheel does not order retries due in the same tick; the budget's queue keeps the order in which they reached
 * it. A reply that arrives after its call was handed over is ignored, so an attempt in flight at a stop may be sent
 * again at the next start (a duplicate with the same {@code retry.id}). Two parked calls with the same
 * {@code retry.id} share one outcome handle.
 *
 * <p><b>Threading:</b> thread-safe. {@link #admit} runs on the caller's thread and, with a journal, blocks it until
 * the call is durable. Due retries arrive on the wheel's executor; the budget gate, the {@code send} call, the reply
 * handling and every journal update, remove and unpark run on the reference's dispatch executor (never on the
 * wheel's worker; on the thread that completes the reply only when the executor refuses the hand-off). A call's
 * outcome handle completes on that executor, or on the thread that hands the call over.
 *
 * @param <P> the glue's in-memory form of a call
 */
public final class RetryReference<P> {

    private static final int UNPARK_BATCH = 256;
    /** After an unpark the journal refused, when to try again if no outcome comes first. */
    private static final long UNPARK_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    final RetryLifecycle lifecycle;
    private final String serviceKey;
    private final String service;
    private final Function<String, RetryPolicy> policies;
    private final AttemptSender<P> sender;
    private final PayloadDecoder<P> decoder;
    private final HandOverSink<P> handOverSink;
    private final Executor executor;
    private final BudgetGate gate;
    private final RetryJournal journal;
    final RetryCounters counters = new RetryCounters();

    private final PendingCalls<P> calls = new PendingCalls<>();
    private final AtomicInteger pending = new AtomicInteger();
    private final Set<String> unpersistableMethods = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, CompletableFuture<CallOutcome>> parkedWatchers = new ConcurrentHashMap<>();
    /** Calls this instance parked and has not unparked: they count as pending of this instance. */
    private final AtomicLong parked = new AtomicLong();
    private final AtomicLong parkSeq = new AtomicLong();
    private final AtomicBoolean unparking = new AtomicBoolean();
    private volatile boolean journalMayHoldParked;
    private volatile int maxPending;
    private volatile OverflowPolicy overflow;
    private volatile boolean closed;

    private RetryReference(Builder<P> b) {
        this.lifecycle = b.lifecycle;
        this.serviceKey = b.serviceKey;
        this.service = b.service == null ? b.serviceKey : b.service;
        this.policies = b.policies;
        this.sender = b.sender;
        this.decoder = b.decoder;
        this.handOverSink = b.handOverSink;
        this.executor = b.executor == null ? lifecycle.executor() : b.executor;
        this.journal = lifecycle.journal();
        this.maxPending = b.maxPending;
        this.overflow = b.overflow;
        this.gate = new BudgetGate(b.budget, lifecycle.timer(), c -> dispatch(cast(c)));
    }

    /**
     * Takes a call whose first attempt failed with a failure the policy retries. With a journal, the call is durable
     * when this returns, so return the empty result to the caller only after it.
     *
     * @param method         the method name; selects the {@link RetryPolicy}
     * @param retryId        the call's {@code retry.id}
     * @param payload        the glue's in-memory form of the call, handed back to {@link AttemptSender#send}
     * @param journalPayload the call serialized for the journal, or null if it could not be (then it is retried in
     *                       memory only); ignored without a journal
     * @param provider       the provider of the failed attempt, or null if none was selected
     * @param failure        what it failed with; not kept (only {@link FailureText})
     * @param watchOutcome   whether the caller wants the outcome handle ({@link Admission#outcome()})
     * @return what was done; {@link Admission#callerFails()} says whether the caller must get an exception
     */
    public Admission admit(String method, String retryId, P payload, byte[] journalPayload, String provider,
                           Throwable failure, boolean watchOutcome) {
        RetryPolicy policy = policies.apply(method);
        long now = lifecycle.nowMillis();
        RetryCall<P> call = new RetryCall<>(this, policy, retryId, method, payload, now,
                watchOutcome ? new CompletableFuture<>() : null);
        call.progress(0, FailureText.shared(provider), FailureText.of(failure));
        lifecycle.callFailed(this);
        if (policy.retries() == 0) { // Dubbo's meaning: no retry; the failure is still an outcome someone sees
            finish(call, RetryEvent.Type.ABANDONED, 0, provider, failure);
            return new Admission(Admission.Kind.ENDED, false, null, call.handle);
        }
        long delayNanos = policy.backoffNanos(1, ThreadLocalRandom.current().nextDouble(-1.0, 1.0));
        if (pending.incrementAndGet() > maxPending) {
            pending.decrementAndGet();
            return overflow(call, journalPayload, delayNanos, failure);
        }
        call.journaled = append(call, journalPayload, delayNanos, false);
        calls.add(call);
        lifecycle.emit(RetryEvent.Type.SCHEDULED, call, 1, provider, delayNanos, failure, call.lastFailure());
        if (closed) {
            handOver(call);
            return new Admission(Admission.Kind.ENDED, false, null, call.handle);
        }
        arm(call, delayNanos);
        return new Admission(Admission.Kind.SCHEDULED, false, null, call.handle);
    }

    private Admission overflow(RetryCall<P> call, byte[] journalPayload, long delayNanos, Throwable failure) {
        OverflowPolicy policy = overflow;
        String reason = maxPending + " retries already pending (failbacktasks=" + maxPending + ")";
        if (policy == OverflowPolicy.SPILL && journal != null) {
            if (call.handle != null) { // before the append: an unpark may take the entry as soon as it is written
                parkedWatchers.put(call.retryId(), call.handle);
            }
            if (append(call, journalPayload, delayNanos, true)) {
                parked.incrementAndGet();
                parkSeq.incrementAndGet();
                journalMayHoldParked = true;
                lifecycle.emit(RetryEvent.Type.SCHEDULED, call, 1, call.lastProvider(), delayNanos, failure,
                        call.lastFailure());
                return new Admission(Admission.Kind.PARKED, false, null, call.handle);
            }
            parkedWatchers.remove(call.retryId(), call.handle);
            reason += "; the journal could not park it";
        }
        // the event says why the call was refused, with what it failed with as the cause
        finish(call, RetryEvent.Type.REJECTED, 0, call.lastProvider(), new RejectedExecutionException(reason
                + "; the call failed with " + FailureText.of(failure), failure));
        return new Admission(Admission.Kind.REJECTED, policy != OverflowPolicy.LOG, reason, call.handle);
    }

    /** @return whether the journal holds the call now */
    private boolean append(RetryCall<P> call, byte[] journalPayload, long delayNanos, boolean park) {
        if (journal == null) {
            return false;
        }
        if (journalPayload == null) {
            lifecycle.unpersistable(this, call.method(), unpersistableMethods.add(call.method()));
            return false;
        }
        long now = call.createdEpochMillis();
        RetryJournalEntry entry = new RetryJournalEntry(call.retryId(), lifecycle.application(), serviceKey,
                call.method(), journalPayload, 1, now + TimeUnit.NANOSECONDS.toMillis(delayNanos),
                call.lastProvider(), call.lastFailure(), now);
        try {
            journal.append(entry, park);
            lifecycle.journalWorked();
            return true;
        } catch (RetryJournalException | RuntimeException e) {
            lifecycle.journalFailed("append retry.id=" + call.retryId(), e);
            return false;
        }
    }

    /** Puts the call's next retry on the wheel; a stopped wheel means the application is closing: hand over. */
    private void arm(RetryCall<P> call, long delayNanos) {
        try {
            Timeout t = lifecycle.timer().newTimeout(call, delayNanos, TimeUnit.NANOSECONDS);
            call.timeout = t;
            if (call.state() == ENDED) {
                t.cancel();
            }
        } catch (IllegalStateException | RejectedExecutionException e) {
            handOver(call);
        }
    }

    /** The wheel's executor: the call's retry is due (the call is WAITING). */
    void due(RetryCall<P> call) {
        if (closed) {
            handOver(call);
            return;
        }
        gate.offer(call);
    }

    /** The budget let the call through: send the attempt on the dispatch executor. */
    private void dispatch(RetryCall<P> call) {
        if (!call.move(WAITING, IN_FLIGHT)) {
            return;
        }
        int attempt = call.attempt() + 1;
        call.attempt(attempt);
        try {
            executor.execute(() -> send(call, attempt));
        } catch (RejectedExecutionException e) {
            // on the wheel's executor: a failed attempt, rescheduled in memory only; the journal keeps the previous
            // due time, which is earlier, and a journal write here would hold a thread every timeout needs
            onReply(call, attempt, AttemptResult.failed(null, e, true), false);
        }
    }

    private void send(RetryCall<P> call, int attempt) {
        CompletionStage<AttemptResult> reply;
        try {
            reply = sender.send(call, attempt);
            if (reply == null) {
                throw new NullPointerException("AttemptSender " + sender + " returned null");
            }
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedStage(e);
        }
        reply.whenComplete((result, failure) -> {
            AttemptResult r = failure != null ? AttemptResult.failed(null, unwrap(failure), true)
                    : result != null ? result
                    : AttemptResult.failed(null, new NullPointerException("null AttemptResult"), true);
            try {
                executor.execute(() -> onReply(call, attempt, r));
            } catch (RejectedExecutionException e) {
                onReply(call, attempt, r);
            }
        });
    }

    /** The dispatch executor: the reply to {@code attempt} drives the call's next step. */
    private void onReply(RetryCall<P> call, int attempt, AttemptResult result) {
        onReply(call, attempt, result, true);
    }

    /** @param mayWriteJournal false where a blocking journal write must not run (a thread other than the lanes') */
    private void onReply(RetryCall<P> call, int attempt, AttemptResult result, boolean mayWriteJournal) {
        if (call.state() != IN_FLIGHT || call.attempt() != attempt) {
            return; // handed over meanwhile
        }
        if (result.isDelivered()) {
            finish(call, RetryEvent.Type.DELIVERED, attempt, result.provider(), null);
            return;
        }
        Throwable failure = result.failure();
        call.progress(attempt, FailureText.shared(result.provider()), FailureText.of(failure));
        lifecycle.emit(RetryEvent.Type.FAILED, call, attempt, result.provider(), 0, failure, call.lastFailure());
        if (closed) {
            handOver(call);
            return;
        }
        long delayNanos = call.policy.nextDelayNanos(attempt + 1, failure, result.rpcFailure());
        if (delayNanos == RetryPolicy.STOP) {
            finish(call, RetryEvent.Type.ABANDONED, attempt, result.provider(), failure);
        } else {
            reschedule(call, attempt + 1, delayNanos, failure, mayWriteJournal);
        }
    }

    private void reschedule(RetryCall<P> call, int next, long delayNanos, Throwable failure,
                            boolean mayWriteJournal) {
        lifecycle.emit(RetryEvent.Type.SCHEDULED, call, next, call.lastProvider(), delayNanos, failure,
                call.lastFailure());
        if (call.journaled && mayWriteJournal && !recordProgress(call, next, delayNanos)) {
            // another instance adopted the entry (this one was taken for dead): it delivers the call now
            finish(call, RetryEvent.Type.HANDED_OVER, next, call.lastProvider(), null);
            return;
        }
        if (call.move(IN_FLIGHT, SCHEDULED)) {
            arm(call, delayNanos);
        }
    }

    /** @return false if the journal says another instance owns the call */
    private boolean recordProgress(RetryCall<P> call, int next, long delayNanos) {
        long due = lifecycle.nowMillis() + TimeUnit.NANOSECONDS.toMillis(delayNanos);
        try {
            boolean owned = journal.update(call.retryId(), next, due, call.lastProvider(), call.lastFailure());
            lifecycle.journalWorked();
            return owned;
        } catch (RetryJournalException | RuntimeException e) {
            lifecycle.journalFailed("update retry.id=" + call.retryId(), e);
            return true;
        }
    }

    /** Ends the call as HANDED_OVER, with the retry that was pending. */
    private void handOver(RetryCall<P> call) {
        int pendingAttempt = call.state() == IN_FLIGHT ? call.attempt() : call.attempt() + 1;
        finish(call, RetryEvent.Type.HANDED_OVER, pendingAttempt, call.lastProvider(), null);
    }

    /** Ends the call with {@code type}, once: whoever gets here first wins, the others do nothing. */
    private void finish(RetryCall<P> call, RetryEvent.Type type, int attempt, String provider, Throwable failure) {
        if (!call.end()) {
            return;
        }
        Timeout t = call.timeout;
        if (t != null) {
            t.cancel();
        }
        boolean wasPending = calls.remove(call);
        if (wasPending) {
            pending.decrementAndGet();
        }
        Throwable reported = failure;
        if (type == RetryEvent.Type.HANDED_OVER) {
            reported = keepHandedOver(call);
        } else if (call.journaled) {
            removeFromJournal(call);
        }
        String text = failure == null ? call.lastFailure() : FailureText.of(failure);
        lifecycle.emit(type, call, attempt, provider, 0, reported, text);
        if (call.handle != null) {
            call.handle.complete(new CallOutcome(type.outcome(), call.retryId(), attempt, provider, text,
                    lifecycle.nowMillis()));
        }
        if (wasPending) {
            maybeUnpark();
        }
    }

    /** @return the sink's failure, if a call the journal does not hold could not be handed to the sink */
    private Throwable keepHandedOver(RetryCall<P> call) {
        if (call.journaled || handOverSink == null) {
            return null;
        }
        try {
            handOverSink.handOver(call);
            return null;
        } catch (Exception e) {
            return e;
        }
    }

    private void removeFromJournal(RetryCall<P> call) {
        try {
            journal.remove(call.retryId());
            lifecycle.journalWorked();
        } catch (RetryJournalException | RuntimeException e) {
            lifecycle.journalFailed("remove retry.id=" + call.retryId(), e);
        }
    }

    // ------------------------------------------------------------------ resume and unpark

    /**
     * Claims this reference's entries from the journal (its own from an earlier run, and those of instances that are
     * gone) as many as there is room for under the cap, and schedules each at its due time with its remaining
     * retries and its original {@code retry.id}. The rest stays parked and comes as room frees. Call it once, when
     * the reference starts. An entry whose payload cannot be decoded is skipped with one error naming it.
     *
     * @return the calls scheduled
     */
    public int resume() {
        if (journal == null || closed) {
            return 0;
        }
        int room = Math.max(0, maxPending - pending.get());
        List<RetryJournalEntry> entries;
        try {
            entries = journal.claim(lifecycle.application(), serviceKey, room);
            lifecycle.journalWorked();
        } catch (RetryJournalException | RuntimeException e) {
            lifecycle.journalFailed("claim " + serviceKey, e);
            return 0;
        }
        if (entries.size() >= room) {
            journalMayHoldParked = true;
        }
        int scheduled = 0;
        for (RetryJournalEntry entry : entries) {
            scheduled += schedule(entry, false) ? 1 : 0;
        }
        return scheduled;
    }

    private void maybeUnpark() {
        if (journal == null || !journalMayHoldParked || closed || pending.get() >= maxPending
                || !unparking.compareAndSet(false, true)) {
            return;
        }
        try {
            executor.execute(this::unpark);
        } catch (RejectedExecutionException e) {
            unparking.set(false); // the next outcome tries again
        }
    }

    private void unpark() {
        try {
            int room;
            while (!closed && (room = maxPending - pending.get()) > 0) {
                int ask = Math.min(room, UNPARK_BATCH);
                long seq = parkSeq.get();
                List<RetryJournalEntry> entries = journal.unpark(lifecycle.application(), serviceKey, ask);
                lifecycle.journalWorked();
                entries.forEach(e -> schedule(e, true));
                if (entries.size() < ask) {
                    if (parkSeq.get() == seq) {
                        journalMayHoldParked = false;
                    }
                    break;
                }
            }
        } catch (RetryJournalException | RuntimeException e) {
            lifecycle.journalFailed("unpark " + serviceKey, e);
            retryUnparkLater();
        } finally {
            unparking.set(false);
        }
    }

    /** Parked calls must not wait for the next start because the journal failed at the last outcome. */
    private void retryUnparkLater() {
        try {
            lifecycle.timer().newTimeout(t -> maybeUnpark(), UNPARK_RETRY_NANOS, TimeUnit.NANOSECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            // the wheel stopped: the application is closing, and parked calls stay for the next start anyway
        }
    }

    /** Puts a journal entry on the wheel. @return false if its payload could not be decoded */
    private boolean schedule(RetryJournalEntry entry, boolean unparked) {
        P payload;
        try {
            payload = decoder.decode(entry);
        } catch (Exception e) {
            lifecycle.unreadable(serviceKey, entry.retryId(), e);
            return false;
        }
        CompletableFuture<CallOutcome> handle = unparked ? parkedWatchers.remove(entry.retryId()) : null;
        if (!unparked || parked.getAndUpdate(n -> n > 0 ? n - 1 : 0) == 0) {
            lifecycle.resumed(this);
        }
        RetryCall<P> call = new RetryCall<>(this, policies.apply(entry.method()), entry.retryId(), entry.method(),
                payload, entry.createdEpochMillis(), handle);
        call.journaled = true;
        call.progress(entry.attempt() - 1, FailureText.shared(entry.lastProvider()),
                FailureText.shared(entry.lastFailure()));
        pending.incrementAndGet();
        calls.add(call);
        long delayNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, entry.dueEpochMillis() - lifecycle.nowMillis()));
        lifecycle.emit(RetryEvent.Type.SCHEDULED, call, entry.attempt(), call.lastProvider(), delayNanos, null,
                call.lastFailure());
        if (closed) {
            handOver(call);
        } else {
            arm(call, delayNanos);
        }
        return true;
    }

    // ------------------------------------------------------------------ stop, success, state

    /**
     * The reference is destroyed (or its application closes): every pending call is HANDED_OVER now. With a journal
     * the calls stay in it and resume at the next start; calls parked by this instance stay parked and are counted
     * handed over. Later admits hand the call over at once. Idempotent.
     */
    public void destroy() {
        closed = true;
        for (RetryCall<P> call : calls.snapshot()) {
            handOver(call);
        }
        gate.clear();
        long stillParked = parked.getAndSet(0);
        lifecycle.parkedHandedOver(this, stillParked);
        parkedWatchers.forEach((id, handle) -> handle.complete(new CallOutcome(RetryOutcome.HANDED_OVER, id, 1, null,
                null, lifecycle.nowMillis())));
        parkedWatchers.clear();
        lifecycle.forget(this);
    }

    /** A call of this reference succeeded on its first attempt: a deposit in the {@link RetryBudget}. Cheap. */
    public void onSuccess() {
        gate.budget().onSuccess();
    }

    /**
     * Changes the cap and the overflow policy for new failures (dynamic configuration).
     *
     * @throws IllegalArgumentException if {@code maxPending < 1}
     */
    public void limits(int maxPending, OverflowPolicy overflow) {
        if (maxPending < 1) {
            throw new IllegalArgumentException("maxPending: " + maxPending + " (expected: >= 1)");
        }
        if (overflow == null) {
            throw new NullPointerException("overflow: null");
        }
        this.maxPending = maxPending;
        this.overflow = overflow;
        maybeUnpark();
    }

    public String serviceKey() {
        return serviceKey;
    }

    /** @return the service interface name, as events name it */
    public String service() {
        return service;
    }

    /** @return calls with a retry pending in memory now */
    public int pending() {
        return pending.get();
    }

    /** @return the reference's state for operators */
    public ReferenceState state() {
        long oldest = Long.MAX_VALUE;
        for (RetryCall<P> call : calls.snapshot()) {
            oldest = Math.min(oldest, call.createdEpochMillis());
        }
        long age = oldest == Long.MAX_VALUE ? 0 : Math.max(0, lifecycle.nowMillis() - oldest);
        return new ReferenceState(serviceKey, pending.get(), gate.waiting(), parked.get(), age, gate.waits(),
                gate.describe(), counters.snapshot());
    }

    @SuppressWarnings("unchecked")
    private RetryCall<P> cast(RetryCall<?> call) {
        return (RetryCall<P>) call;
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    @Override
    public String toString() {
        return "RetryReference(" + lifecycle.application() + "/" + serviceKey + ", " + pending.get() + " pending)";
    }

    // ------------------------------------------------------------------ glue hooks and builder

    /**
     * Turns a journal entry's payload back into the glue's form of the call, at resume and unpark.
     *
     * @param <P> the glue's in-memory form of a call
     */
    @FunctionalInterface
    public interface PayloadDecoder<P> {
        /** @throws Exception if the payload is torn or corrupt: the entry is skipped with one error naming it */
        P decode(RetryJournalEntry entry) throws Exception;
    }

    /**
     * Keeps a call handed over at a stop that the journal does not hold (no journal, or a journal failure, or an
     * unserializable payload), e.g. in a {@link RetryStore}. Runs on the thread that hands the call over.
     *
     * @param <P> the glue's in-memory form of a call
     */
    @FunctionalInterface
    public interface HandOverSink<P> {
        /** @throws Exception if it could not: the call is still HANDED_OVER, its event carries the exception */
        void handOver(FailedCall<P> call) throws Exception;
    }

    /**
     * Builds a {@link RetryReference}; obtained from {@link RetryLifecycle#reference}.
     *
     * <p><b>Threading:</b> not thread-safe; use from one thread.
     *
     * @param <P> the glue's in-memory form of a call
     */
    public static final class Builder<P> {
        private final RetryLifecycle lifecycle;
        private final String serviceKey;
        private final AttemptSender<P> sender;
        private String service;
        private Function<String, RetryPolicy> policies = m -> RetryPolicy.defaults();
        private int maxPending = RetryPolicy.DEFAULT_MAX_PENDING;
        private OverflowPolicy overflow = OverflowPolicy.REJECT;
        private RetryBudget budget = RetryBudget.unlimited();
        private Executor executor;
        private PayloadDecoder<P> decoder;
        private HandOverSink<P> handOverSink;

        Builder(RetryLifecycle lifecycle, String serviceKey, AttemptSender<P> sender) {
            this.lifecycle = lifecycle;
            this.serviceKey = requireNonNull(serviceKey, "serviceKey");
            this.sender = requireNonNull(sender, "sender");
        }

        /** @param service the service interface name events carry (default: the service key) */
        public Builder<P> service(String service) {
            this.service = service;
            return this;
        }

        /** @param policies the policy of each method (by name); called at every admit, so it may change over time */
        public Builder<P> policies(Function<String, RetryPolicy> policies) {
            this.policies = requireNonNull(policies, "policies");
            return this;
        }

        /**
         * @param maxPending calls with a retry pending in memory at most ({@code failbacktasks}), {@code >= 1}
         * @param overflow   what happens to a failed call past it
         * @throws IllegalArgumentException if {@code maxPending < 1}
         */
        public Builder<P> limits(int maxPending, OverflowPolicy overflow) {
            if (maxPending < 1) {
                throw new IllegalArgumentException("maxPending: " + maxPending + " (expected: >= 1)");
            }
            this.maxPending = maxPending;
            this.overflow = requireNonNull(overflow, "overflow");
            return this;
        }

        /** @param budget the reference's retry budget (default: {@link RetryBudget#unlimited()}) */
        public Builder<P> budget(RetryBudget budget) {
            this.budget = requireNonNull(budget, "budget");
            return this;
        }

        /** @param executor where this reference's attempts are dispatched (default: the lifecycle's executor) */
        public Builder<P> executor(Executor executor) {
            this.executor = requireNonNull(executor, "executor");
            return this;
        }

        /** @param decoder turns journal entries back into calls; required when the lifecycle has a journal */
        public Builder<P> decoder(PayloadDecoder<P> decoder) {
            this.decoder = requireNonNull(decoder, "decoder");
            return this;
        }

        /** @param handOverSink keeps handed-over calls the journal does not hold (default: none) */
        public Builder<P> handOverSink(HandOverSink<P> handOverSink) {
            this.handOverSink = requireNonNull(handOverSink, "handOverSink");
            return this;
        }

        /**
         * @throws IllegalArgumentException if the lifecycle has a journal and no decoder was given
         * @throws IllegalStateException    if the lifecycle is closed
         */
        public RetryReference<P> build() {
            if (lifecycle.journal() != null && decoder == null) {
                throw new IllegalArgumentException("decoder: null (expected: a PayloadDecoder when the lifecycle "
                        + "has a journal)");
            }
            RetryReference<P> reference = new RetryReference<>(this);
            lifecycle.register(reference);
            return reference;
        }

        private static <T> T requireNonNull(T value, String name) {
            if (value == null) {
                throw new NullPointerException(name + ": null");
            }
            return value;
        }
    }
}
