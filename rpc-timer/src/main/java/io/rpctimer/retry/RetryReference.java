package io.rpctimer.retry;

import static io.rpctimer.retry.RetryCall.ENDED;
import static io.rpctimer.retry.RetryCall.IN_FLIGHT;
import static io.rpctimer.retry.RetryCall.SCHEDULED;
import static io.rpctimer.retry.RetryCall.WAITING;

import io.rpctimer.retry.GuardedJournal.Appended;
import io.rpctimer.retry.RetryCall.Journaled;
import io.rpctimer.retry.RetryEvent.Custody;
import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The retries of one reference (one service of one application): admits its failed calls, schedules them on the
 * wheel, lets them through its {@link RetryBudget}, fences each attempt in the {@link RetryJournal}, has the glue's
 * {@link AttemptSender} send it, and drives each call to exactly one outcome from the replies. Create one with
 * {@link RetryLifecycle#reference}.
 *
 * <h3>Life of a call</h3>
 * <pre>
 *  admit ─┬─ retries=0 ───────────────────────────────────────────▶ ABANDONED (attempt 0)
 *         ├─ its key pending already (a reused business key) ─────▶ REJECTED, the caller told
 *         ├─ over the cap ─┬─ spill, journal takes it ─▶ PARKED ──(room frees: unpark)──▶ SCHEDULED
 *         │                └─ otherwise ──────────────────────────────────────────────▶ REJECTED
 *         └─ journal.append (if any), then ───────────────────────────────────────────▶ SCHEDULED
 *  SCHEDULED ─(due)▶ WAITING ─(token, FIFO)▶ IN_FLIGHT: fence ─┬─ owned: send ─┬─ delivered ─▶ DELIVERED (attempt k)
 *                                                               │               ├─ failed, stop ─▶ ABANDONED
 *                                                               │               └─ failed, retries left ─▶ SCHEDULED
 *                                                               ├─ another instance has it ──────▶ HANDED_OVER
 *                                                               └─ lease not held, journal write unsettled:
 *                                                                  back to SCHEDULED, the attempt not spent
 *  any state ─(destroy, application close, wheel stopped)─────────────────────────────▶ HANDED_OVER
 * </pre>
 * {@code journal.remove} runs at DELIVERED; a call ABANDONED after a retry becomes a dead letter ({@link DeadLetters}:
 * moved from the journal's pending calls to its dead letters, or kept in memory), from which an operator may replay it
 * ({@link #readmit}, or back into the journal and out again by an unpark); a HANDED_OVER call stays in the journal and
 * resumes at the next start, or with the instance that claims it ({@link #resume()}); without a journal it goes to
 * the reference's {@link HandOverSink}.
 *
 * <h3>Fencing</h3>
 * Right before each send of a journaled call, the journal's {@link RetryJournal#fence} checks in the database that
 * this instance still holds the call (with a valid lease, in a fleet) and records the attempt. A call another
 * instance adopted meanwhile (this one was paused, or cut off from the database, for longer than its lease) is
 * never sent from here: it ends HANDED_OVER, custody {@link Custody#ANOTHER_INSTANCE}. In a fleet, a send also waits
 * while the instance cannot show its lease is valid, or while the fence cannot be written.
 *
 * <h3>Journal failures</h3>
 * A journal that fails never costs a call: the call goes on in memory (see {@link LifecycleState#journalFailures()}).
 * Only a spill the journal is known to have refused is REJECTED. A write whose outcome is unknown is taken as
 * written: the call is removed at its outcome and never reported refused; its first fence waits for the write's
 * outcome. A call whose payload could not be serialized (a null {@code journalPayload}) is retried in memory,
 * counted in {@link LifecycleState#unpersistable()} and logged once per method. A remove that fails is tried again
 * (ten times in all, backing off from 1 s to 60 s) while the reference lives; one that never takes leaves the entry
 * behind: a later start sends that call again, with the same {@code retry.id} (at least once, never lost). The
 * appends, the removes and where a call handed over is kept are {@code CallJournaling}'s; the fences, claims and
 * releases are this class's.
 *
 * <h3>Caveats</h3>
 * The wheel does not order retries due in the same tick; the budget's queue keeps the order in which they reached
 * it. A reply that arrives after its call was handed over is ignored, so an attempt in flight at a stop may be sent
 * again by whoever resumes the call (a duplicate with the same {@code retry.id}, and another attempt number).
 *
 * <p><b>Threading:</b> thread-safe. {@link #admit} runs on the caller's thread and, with a journal, blocks it until
 * the call is durable (at most the journal's write timeout). Due retries arrive on the wheel's executor; the budget
 * gate, the fence, the {@code send} call, the reply handling and every unpark run on the reference's dispatch
 * executor (never on the wheel's worker; on the thread that completes a reply or a fence only when the executor
 * refuses the hand-off). A call's outcome handle completes on that executor, or on the thread that hands the call
 * over.
 *
 * @param <P> the glue's in-memory form of a call
 */
public final class RetryReference<P> {

    /** How long a send waits before it tries again, when the lease or a journal write's outcome is not settled. */
    static final long DEFER_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final String application;
    private final String serviceKey;
    private final String service;
    private final Function<String, RetryPolicy> policies;
    private final AttemptSender<P> sender;
    private final PayloadDecoder<P> decoder;
    private final java.util.function.BooleanSupplier alive;
    private final Executor executor;
    private final Timer timer;
    private final LongSupplier clockMillis;
    private final GuardedJournal journal;
    private final CallSink sink;
    private final DeadLetters deadLetters;
    private final BudgetGate gate;
    private final ParkedCalls parked;
    /** What this reference's calls are in the journal: appends, removes, where a call handed over is kept. */
    private final CallJournaling<P> journaling;
    /** Per-reference counts of what {@link #sink} reports; written by the lifecycle. */
    final RetryCounters counters = new RetryCounters();

    private final PendingCalls<P> calls = new PendingCalls<>();
    private final AtomicInteger pending = new AtomicInteger();
    /** The places under the cap, for the hand-outs of the journal: they take theirs before they ask. */
    private final CapPlaces places = new CapPlaces();
    private final LongAdder deferred = new LongAdder();
    private volatile int maxPending;
    private volatile OverflowPolicy overflow;
    private volatile boolean closed;

    private RetryReference(Builder<P> b, RetryLifecycle.Shared shared) {
        this.application = shared.application();
        this.serviceKey = b.serviceKey;
        this.service = b.service == null ? b.serviceKey : b.service;
        this.policies = b.policies;
        this.sender = b.sender;
        this.decoder = b.decoder;
        this.alive = b.alive;
        this.executor = b.executor == null ? shared.executor() : b.executor;
        this.timer = shared.timer();
        this.clockMillis = shared.clockMillis();
        this.journal = shared.journal();
        this.sink = shared.sink();
        this.deadLetters = shared.deadLetters();
        this.maxPending = b.maxPending;
        this.overflow = b.overflow;
        this.gate = new BudgetGate(b.budget, timer, c -> dispatch(cast(c)));
        this.journaling = new CallJournaling<>(this, application, journal, sink, timer, clockMillis, b.handOverSink,
                () -> closed);
        this.parked = new ParkedCalls(journal, serviceKey, executor, timer, places, () -> maxPending,
                this::scheduleAll);
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
     * @param failure        what it failed with; not kept (only its class and a short message)
     * @param watchOutcome   whether the caller wants the outcome handle ({@link Admission#outcome()})
     * @return what was done; {@link Admission#callerFails()} says whether the caller must get an exception
     */
    public Admission admit(String method, String retryId, P payload, byte[] journalPayload, String provider,
                           Throwable failure, boolean watchOutcome) {
        RetryPolicy policy = policies.apply(method);
        RetryCall<P> call = new RetryCall<>(this, policy, retryId, method, payload, clockMillis.getAsLong(),
                watchOutcome ? new CompletableFuture<>() : null);
        call.progress(0, FailureText.shared(provider), FailureText.of(failure));
        sink.failed(this, false);
        if (policy.retries() == 0) { // Dubbo's meaning: no retry; the failure is still an outcome someone sees
            finish(call, RetryEvent.Type.ABANDONED, 0, provider, failure, null);
            return new Admission(Admission.Kind.ENDED, false, null, call.handle);
        }
        long delayNanos = policy.backoffNanos(1, ThreadLocalRandom.current().nextDouble(-1.0, 1.0));
        if (pending.incrementAndGet() > maxPending) {
            pending.decrementAndGet();
            return overflow(call, journalPayload, delayNanos, failure);
        }
        Appended appended = journaling.append(call, journalPayload, delayNanos, false);
        if (appended.kind() == Appended.Kind.DUPLICATE) {
            pending.decrementAndGet();
            return refuse(call, failure, duplicate(call), true);
        }
        boolean storeRefused = appended.kind() == Appended.Kind.NOT_WRITTEN && journal.present()
                && journalPayload != null;
        if (storeRefused && policy.storeDown() == StoreDownPolicy.REJECT) {
            pending.decrementAndGet();
            return refuse(call, failure, "the retry journal refused it, so it would not survive a crash of this"
                    + " process (failback.store.down=reject)", true);
        }
        CallJournaling.journaled(call, appended);
        if (storeRefused) {
            call.unjournaled = journalPayload; // failback.store.down=memory: durable again once the journal works
        }
        calls.add(call);
        step(RetryEvent.Type.SCHEDULED, call, 1, provider, delayNanos, failure);
        if (closed || !alive.getAsBoolean()) {
            destroyIfGone();
            handOver(call, null);
            return new Admission(Admission.Kind.ENDED, false, null, call.handle);
        }
        arm(call, delayNanos);
        return new Admission(Admission.Kind.SCHEDULED, false, null, call.handle);
    }

    private Admission overflow(RetryCall<P> call, byte[] journalPayload, long delayNanos, Throwable failure) {
        OverflowPolicy policy = overflow;
        String reason = maxPending + " retries already pending (failbacktasks=" + maxPending + ")";
        if (policy == OverflowPolicy.SPILL && journal.present()) {
            CallKey key = call.key();
            parked.expect(key, call.handle); // before the append: an unpark may take the call once it is written
            Appended appended = journaling.append(call, journalPayload, delayNanos, true);
            switch (appended.kind()) {
                case WRITTEN, MAYBE -> {
                    parked.parked();
                    step(RetryEvent.Type.SCHEDULED, call, 1, call.lastProvider(), delayNanos, failure);
                    if (appended.kind() == Appended.Kind.MAYBE) {
                        appended.resolution().whenComplete((written, t) -> parkSettled(call, delayNanos, written));
                    }
                    return new Admission(Admission.Kind.PARKED, false, null, call.handle);
                }
                case DUPLICATE -> {
                    parked.notParked(key, call.handle);
                    return refuse(call, failure, duplicate(call), true);
                }
                default -> {
                    parked.notParked(key, call.handle);
                    reason += "; the journal could not park it";
                }
            }
        }
        return refuse(call, failure, reason, policy != OverflowPolicy.LOG);
    }

    /** A park whose write's outcome was unknown is settled: a call the journal does not hold goes on in memory. */
    private void parkSettled(RetryCall<P> call, long delayNanos, Boolean written) {
        if (Boolean.TRUE.equals(written)) {
            parked.parkedLater(); // an unpark that ran before the write took effect did not find it
            return;
        }
        if (written == null) {
            System.getLogger(RetryReference.class.getName()).log(System.Logger.Level.WARNING, "wheelfailback {0}"
                    + " was parked in the journal, and whether the write took effect cannot be found out: if it did"
                    + " not, the call is not retried", call.key());
            return;
        }
        parked.unparkedInMemory();
        parked.notParked(call.key(), call.handle);
        pending.incrementAndGet(); // over the cap by one: the caller was told the call is kept
        calls.add(call);
        if (closed) {
            handOver(call, null);
        } else {
            arm(call, delayNanos);
        }
    }

    private Admission refuse(RetryCall<P> call, Throwable failure, String reason, boolean callerFails) {
        // the event says why the call was refused, with what it failed with as the cause
        finish(call, RetryEvent.Type.REJECTED, 0, call.lastProvider(), new RejectedExecutionException(reason
                + "; the call failed with " + FailureText.of(failure), failure), null);
        return new Admission(Admission.Kind.REJECTED, callerFails, reason, call.handle);
    }

    private static String duplicate(RetryCall<?> call) {
        return "a call with retry.id=" + call.retryId() + " of " + call.method() + "() is pending already";
    }

    /** Puts the call's next retry on the wheel; a stopped wheel means the application is closing: hand over. */
    private void arm(RetryCall<P> call, long delayNanos) {
        try {
            Timeout t = timer.newTimeout(call, delayNanos, TimeUnit.NANOSECONDS);
            call.timeout = t;
            if (call.state() == ENDED) {
                t.cancel();
            }
        } catch (IllegalStateException | RejectedExecutionException e) {
            handOver(call, null);
        }
    }

    /** The wheel's executor: the call's retry is due (the call is WAITING). */
    void due(RetryCall<P> call) {
        if (closed || !alive.getAsBoolean()) {
            destroyIfGone();
            handOver(call, null);
            return;
        }
        gate.offer(call);
    }

    /** The glue's reference is gone while this one is open: it ends now, as {@link #destroy()} would. */
    private void destroyIfGone() {
        if (!closed && !alive.getAsBoolean()) {
            destroy();
        }
    }

    /** The budget let the call through: fence and send the attempt on the dispatch executor. */
    private void dispatch(RetryCall<P> call) {
        if (!call.move(WAITING, IN_FLIGHT)) {
            return;
        }
        int attempt = call.attempt() + 1;
        call.attempt(attempt);
        try {
            executor.execute(() -> fence(call, attempt));
        } catch (RejectedExecutionException e) {
            onReply(call, attempt, AttemptResult.failed(null, e, true)); // a failed attempt, rescheduled
        }
    }

    /** Whether this call may be sent now, in the journal's eyes: settles it, then sends or waits. */
    private void fence(RetryCall<P> call, int attempt) {
        if (!inFlight(call, attempt)) {
            return;
        }
        if (call.journaled == Journaled.NO) {
            journaling.rejournal(call, attempt);
        }
        if (call.journaled == Journaled.MAYBE && !CallJournaling.settle(call)) {
            defer(call, attempt); // its append may yet commit: no send before the journal knows
            return;
        }
        if (call.journaled == Journaled.NO) {
            send(call, attempt);
            return;
        }
        if (journal.fences() && !journal.leaseHeld()) {
            defer(call, attempt);
            return;
        }
        Long fencedAt = call.fencedAt();
        if (fencedAt != null && journal.stillValid(fencedAt)) {
            call.fencedAt(null);
            send(call, attempt); // the hand-out that scheduled the call fenced this retry
            return;
        }
        long nextDue = clockMillis.getAsLong()
                + TimeUnit.NANOSECONDS.toMillis(call.policy.backoffNanos(attempt + 1, 0));
        long askedNanos = System.nanoTime();
        journal.fence(call.key(), attempt, nextDue, call.lastProvider(), call.lastFailure())
                .thenAccept(verdict -> onExecutor(() -> fenced(call, attempt, verdict, askedNanos)));
    }

    /** @param askedNanos when the fence was asked for ({@link System#nanoTime()}): its verdict holds from then on */
    private void fenced(RetryCall<P> call, int attempt, GuardedJournal.Verdict verdict, long askedNanos) {
        if (!inFlight(call, attempt)) {
            return;
        }
        switch (verdict) {
            case OWNED -> {
                call.journaled = Journaled.YES;
                if (journal.fences() && (!journal.leaseHeld() || !journal.stillValid(askedNanos))) {
                    defer(call, attempt); // the lease lapsed, or this process stalled past the fence's margin
                } else {
                    send(call, attempt);
                }
            }
            case ADOPTED -> handOver(call, Custody.ANOTHER_INSTANCE);
            case GONE -> {
                if (call.journaled == Journaled.MAYBE) { // its append never took effect: an in-memory call
                    call.journaled = Journaled.NO;
                    send(call, attempt);
                } else {
                    handOver(call, Custody.ANOTHER_INSTANCE); // ended by the instance that adopted it
                }
            }
            case LEASE_EXPIRED -> defer(call, attempt);
            case FAILED -> {
                if (journal.fences()) {
                    defer(call, attempt);
                } else {
                    send(call, attempt);
                }
            }
        }
    }

    /** The attempt cannot go now: back on the wheel for a moment, the attempt not spent. */
    private void defer(RetryCall<P> call, int attempt) {
        deferred.increment();
        call.attempt(attempt - 1);
        if (call.move(IN_FLIGHT, SCHEDULED)) {
            arm(call, DEFER_NANOS);
        }
    }

    private boolean inFlight(RetryCall<P> call, int attempt) {
        return call.state() == IN_FLIGHT && call.attempt() == attempt;
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
            onExecutor(() -> onReply(call, attempt, r));
        });
    }

    /** Runs {@code step} on the dispatch executor, or here if it refuses (nothing in a step blocks). */
    private void onExecutor(Runnable step) {
        try {
            executor.execute(step);
        } catch (RejectedExecutionException e) {
            step.run();
        }
    }

    /** The dispatch executor: the reply to {@code attempt} drives the call's next step. */
    private void onReply(RetryCall<P> call, int attempt, AttemptResult result) {
        if (!inFlight(call, attempt)) {
            return; // handed over meanwhile
        }
        call.fencedAt(null); // the hand-out's fence was for this retry at most
        if (result.isDelivered()) {
            finish(call, RetryEvent.Type.DELIVERED, attempt, result.provider(), null, null);
            return;
        }
        Throwable failure = result.failure();
        call.progress(attempt, FailureText.shared(result.provider()), FailureText.of(failure));
        sink.step(RetryEvent.Type.FAILED, call, attempt, result.provider(), 0, failure, call.lastFailure(), null);
        if (closed) {
            handOver(call, null);
            return;
        }
        long delayNanos = call.policy.nextDelayNanos(attempt + 1, failure, result.rpcFailure());
        if (delayNanos == RetryPolicy.STOP) {
            finish(call, RetryEvent.Type.ABANDONED, attempt, result.provider(), failure, null);
            return;
        }
        step(RetryEvent.Type.SCHEDULED, call, attempt + 1, call.lastProvider(), delayNanos, failure);
        if (call.move(IN_FLIGHT, SCHEDULED)) {
            arm(call, delayNanos);
        }
    }

    private void step(RetryEvent.Type type, RetryCall<P> call, int attempt, String provider, long delayNanos,
                      Throwable failure) {
        sink.step(type, call, attempt, provider, delayNanos, failure, call.lastFailure(), null);
    }

    /** Reported by the glue through {@link FailedCall#sent}: the attempt in flight went to {@code provider}. */
    void sent(RetryCall<P> call, String provider) {
        sink.step(RetryEvent.Type.SENT, call, call.attempt(), provider, 0, null, null, null);
    }

    /**
     * Ends the call as HANDED_OVER, with the retry that was pending: the one place a call is handed over.
     *
     * @param custody where the call is, if known already (another instance has it); null: where this instance keeps
     *                it (the journal, or the hand-over sink)
     * @return where the call went, or null if it had ended already
     */
    private Custody handOver(RetryCall<P> call, Custody custody) {
        return finish(call, RetryEvent.Type.HANDED_OVER, pendingAttempt(call), call.lastProvider(), null, custody);
    }

    /** @return the retry a new owner of the call would send next: the one in flight, or the one after the last */
    static int pendingAttempt(RetryCall<?> call) {
        return call.state() == IN_FLIGHT ? call.attempt() : call.attempt() + 1;
    }

    /**
     * Ends the call with {@code type}, once: whoever gets here first wins, the others do nothing.
     *
     * @return for a hand-over, where the call went; null otherwise, or if the call had ended already
     */
    private Custody finish(RetryCall<P> call, RetryEvent.Type type, int attempt, String provider, Throwable failure,
                           Custody custody) {
        if (!call.end()) {
            return null;
        }
        boolean wasPending = unlist(call);
        Throwable reported = failure;
        if (type == RetryEvent.Type.HANDED_OVER && custody == null) {
            CallJournaling.Kept kept = journaling.keep(call, attempt);
            custody = kept.custody();
            reported = kept.failure();
        }
        String text = failure == null ? call.lastFailure() : FailureText.of(failure);
        if (type == RetryEvent.Type.ABANDONED && attempt > 0) {
            deadLetters.abandoned(call, attempt, provider, failure, text); // a dead letter, or removed
        } else if (type != RetryEvent.Type.HANDED_OVER && call.journaled != Journaled.NO) {
            journaling.remove(call.key(), type);
        }
        sink.step(type, call, attempt, provider, 0, reported, text, custody);
        if (call.handle != null) {
            call.handle.complete(new CallOutcome(type.outcome(), call.retryId(), attempt, provider, text,
                    clockMillis.getAsLong()));
        }
        if (wasPending) {
            parked.maybeUnpark();
        }
        return type == RetryEvent.Type.HANDED_OVER ? custody : null;
    }

    // ------------------------------------------------------------------ resume and unpark

    /**
     * Claims this reference's entries from the journal (its own from an earlier run, released ones, and those of
     * instances that are gone) as many as there is room for under the cap, and schedules each at its due time with
     * its remaining retries and its original {@code retry.id}. The rest stays parked and comes as room frees. Call it
     * when the reference starts, and then periodically to adopt the calls of instances that die later. An entry
     * whose payload cannot be decoded is skipped with one error naming it.
     *
     * @return the calls scheduled that are new to this reference (calls it had parked itself are not counted)
     */
    public int resume() {
        if (!journal.present() || closed) {
            return 0;
        }
        int room = places.take(Integer.MAX_VALUE);
        int resumed;
        try {
            GuardedJournal.Claimed claimed = journal.claim(serviceKey, room);
            if (claimed.failed()) {
                return 0;
            }
            if (claimed.entries().size() >= room) {
                parked.mayHoldMore();
            }
            resumed = scheduleAll(claimed);
        } finally {
            places.giveBack(room);
        }
        parked.maybeUnpark(); // places taken for calls the claim did not find are free again
        return resumed;
    }

    /**
     * Puts a batch of entries the journal handed out (by a claim or an unpark) on the wheel.
     *
     * <p>A call of this run may come back while a copy of it is still in memory: adopted away while this instance
     * was paused or cut off from the database, then adopted back from the instance that took it (which sent later
     * retries, and died). The copy in memory is stale: the journal's retry is further on, and as the row is this
     * run's again, the copy would pass its fence. So it is retired first, without an outcome of its own, and its
     * caller's handle goes to the call handed out.
     *
     * @return the calls scheduled that are new to this reference
     */
    private int scheduleAll(GuardedJournal.Claimed handedOut) {
        Long askedNanos = handedOut.askedNanos(); // one object for the batch: no field of its own in each call
        Map<CallKey, RetryCall<P>> inMemory = null;
        int resumed = 0;
        for (RetryJournalEntry entry : handedOut.entries()) {
            boolean ours = parked.takeBack(entry);
            CompletableFuture<CallOutcome> handle = ours ? parked.handle(entry.key()) : null;
            if (!ours) {
                if (inMemory == null) {
                    inMemory = calls.byKey();
                }
                RetryCall<P> stale = retire(inMemory.remove(entry.key()));
                if (stale != null) {
                    ours = true; // counted as a failed call when it was admitted
                    handle = stale.handle;
                    System.getLogger(RetryReference.class.getName()).log(System.Logger.Level.INFO,
                            "wheelfailback {0}: call {1} came back from the journal at retry {2} while a stale copy"
                                    + " of it was in memory; the copy is retired unsent",
                            serviceKey, entry.retryId(), entry.attempt());
                }
            }
            resumed += schedule(entry, ours, handle, askedNanos) ? 1 : 0;
        }
        return resumed;
    }

    /** @return {@code copy}, now ended without an outcome and no longer pending; null if none, or it ended already */
    private RetryCall<P> retire(RetryCall<P> copy) {
        if (copy == null || !copy.end()) {
            return null;
        }
        unlist(copy);
        return copy;
    }

    /** An ended call leaves the wheel and the pending calls. @return whether it was pending */
    private boolean unlist(RetryCall<P> call) {
        Timeout t = call.timeout;
        if (t != null) {
            t.cancel();
        }
        boolean wasPending = calls.remove(call);
        if (wasPending) {
            pending.decrementAndGet();
        }
        return wasPending;
    }

    /**
     * Puts an entry the journal handed out on the wheel.
     *
     * @param ours   whether this reference counted the call already (it parked it, or held a copy of it)
     * @param handle the caller's handle to the call's outcome, or null
     * @param askedNanos when the hand-out was asked for: a {@link RetryJournalEntry#fenced() fenced} entry's verdict
     *                   holds from then on
     * @return true if it is a call new to this reference; false if it is {@code ours}, or it is unreadable
     */
    private boolean schedule(RetryJournalEntry entry, boolean ours, CompletableFuture<CallOutcome> handle,
                             Long askedNanos) {
        P payload;
        try {
            payload = decoder.decode(entry);
        } catch (Exception e) {
            sink.unreadable(this, entry.retryId(), e);
            if (ours) { // counted as a failed call when parked: it ends here, left in the journal
                sink.parkedHandedOver(this, 1);
                if (handle != null) {
                    handle.complete(new CallOutcome(RetryOutcome.HANDED_OVER, entry.retryId(), entry.attempt(),
                            null, FailureText.of(e), clockMillis.getAsLong()));
                }
            }
            return false;
        }
        if (!ours) {
            sink.failed(this, true);
        }
        RetryCall<P> call = new RetryCall<>(this, policies.apply(entry.method()), entry.retryId(), entry.method(),
                payload, entry.createdEpochMillis(), handle);
        call.journaled = Journaled.YES;
        call.progress(entry.attempt() - 1, FailureText.shared(entry.lastProvider()),
                FailureText.shared(entry.lastFailure()));
        if (entry.fenced()) {
            call.fencedAt(askedNanos); // for retry entry.attempt(), the first this call dispatches
        }
        pending.incrementAndGet();
        calls.add(call);
        long delayNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0,
                entry.dueEpochMillis() - clockMillis.getAsLong()));
        step(RetryEvent.Type.SCHEDULED, call, entry.attempt(), call.lastProvider(), delayNanos, null);
        if (closed) {
            handOver(call, null);
        } else {
            arm(call, delayNanos);
        }
        return !ours;
    }

    // ------------------------------------------------------------------ replay of dead letters

    /** @return whether this reference takes calls: not destroyed, and its glue's reference still exists */
    public boolean live() {
        return !closed && alive.getAsBoolean();
    }

    /**
     * Ends this reference now, as {@link #destroy()} does, if its glue's reference is gone ({@link Builder#alive}
     * answers false), rather than at its next admit or due retry: for the glue's sweep, and for the glue's own
     * destroy. The reference alone decides, so a glue never hands its calls over by itself.
     *
     * @return whether this reference still takes calls ({@link #live()})
     */
    public boolean endIfGone() {
        destroyIfGone();
        return live();
    }

    /** @return whether this reference can decode {@code entry}'s call (a replay moves only those) */
    boolean readable(RetryJournalEntry entry) {
        try {
            return decoder != null && decoder.decode(entry) != null;
        } catch (Exception e) {
            return false;
        }
    }

    /**
     * Paces every retry of this reference at {@code perSecond} until {@code untilEpochMillis}, on top of its budget:
     * a replay's calls may reach the wheel late, and must not go all at once then.
     */
    void pace(double perSecond, long untilEpochMillis) {
        LongSupplier nanos = () -> TimeUnit.MILLISECONDS.toNanos(clockMillis.getAsLong());
        gate.pace(new Pacer(perSecond, TimeUnit.MILLISECONDS.toNanos(untilEpochMillis), nanos));
    }

    /** Dead letters of this service were moved back into the journal, parked and owned here: unpark them. */
    void replayedIntoJournal() {
        parked.mayHoldMore();
        parked.maybeUnpark();
    }

    /**
     * Puts a dead letter kept in memory back on the wheel, its first retry due at {@code dueEpochMillis}, with its
     * original {@code retry.id} and the retries of its policy.
     *
     * @param payload the glue's in-memory call the dead letter kept
     * @return false if the reference is closed or its pending cap is full (the dead letter stays)
     */
    boolean readmit(DeadLetter letter, Object payload, long dueEpochMillis) {
        if (!live()) {
            return false;
        }
        if (pending.incrementAndGet() > maxPending) {
            pending.decrementAndGet();
            return false;
        }
        RetryCall<P> call = new RetryCall<>(this, policies.apply(letter.method()), letter.retryId(), letter.method(),
                castPayload(payload), letter.firstFailureEpochMillis(), null);
        call.progress(0, FailureText.shared(letter.lastProvider()), FailureText.shared(letter.lastFailure()));
        sink.failed(this, false);
        calls.add(call);
        long delayNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, dueEpochMillis - clockMillis.getAsLong()));
        step(RetryEvent.Type.SCHEDULED, call, 1, call.lastProvider(), delayNanos, null);
        arm(call, delayNanos);
        return true;
    }

    @SuppressWarnings("unchecked")
    private P castPayload(Object payload) {
        return (P) payload; // kept by this lifecycle from a call of a reference of the same glue
    }

    // ------------------------------------------------------------------ stop, success, state

    /**
     * The reference is destroyed while its application goes on ({@code ReferenceConfig.destroy()}, a migration rule
     * replacing it): every pending call is HANDED_OVER now, and the journal releases the calls it holds, so that the
     * next claim of the service (a replacement reference's, another instance's) takes them. Calls parked by this
     * reference stay parked and are counted handed over. Later admits hand the call over at once. Idempotent.
     */
    public void destroy() {
        destroy(true);
    }

    /**
     * At a graceful stop: appends the calls whose append failed while the journal was down, if it takes writes again
     * before {@code deadlineNanos} ({@link System#nanoTime()}); otherwise they go to the hand-over sink, which in
     * most applications ends with the process.
     */
    void journalBeforeClose(long deadlineNanos) {
        journaling.beforeClose(calls.snapshot(), deadlineNanos);
    }

    /**
     * @param release whether to give the journal's calls up now; false at an application's close, where the next
     *                start (or a survivor, once the lease is given up) takes them
     */
    void destroy(boolean release) {
        closed = true;
        List<CallKey> kept = new ArrayList<>();
        for (RetryCall<P> call : calls.snapshot()) {
            if (handOver(call, null) == Custody.JOURNAL) {
                kept.add(call.key());
            }
        }
        gate.clear();
        long stillParked = parked.close(new CallOutcome(RetryOutcome.HANDED_OVER, null, 1, null, null,
                clockMillis.getAsLong()));
        sink.parkedHandedOver(this, stillParked);
        if (release) {
            journal.release(kept);
        }
        sink.destroyed(this);
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
        parked.maybeUnpark();
    }

    /** @return the Dubbo application this reference belongs to */
    public String application() {
        return application;
    }

    public String serviceKey() {
        return serviceKey;
    }

    /** @return the service interface name, as events name it */
    public String service() {
        return service;
    }

    /**
     * The places under the cap, counted in {@link #pending}: a hand-out takes the places it asks for, so a call
     * admitted while the journal answers spills instead of taking one of them.
     */
    private final class CapPlaces implements ParkedCalls.Places {
        @Override
        public int free() {
            return maxPending - pending.get();
        }

        @Override
        public int take(int want) {
            while (true) {
                int now = pending.get();
                int taken = Math.min(want, maxPending - now);
                if (taken <= 0) {
                    return 0;
                }
                if (pending.compareAndSet(now, now + taken)) {
                    return taken;
                }
            }
        }

        @Override
        public void giveBack(int taken) {
            pending.addAndGet(-taken);
        }
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
        long age = oldest == Long.MAX_VALUE ? 0 : Math.max(0, clockMillis.getAsLong() - oldest);
        return new ReferenceState(serviceKey, pending.get(), gate.waiting(), parked.count(), age, gate.waits(),
                gate.describe(), counters.snapshot(), deferred.sum());
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
        return "RetryReference(" + application + "/" + serviceKey + ", " + pending.get() + " pending)";
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
        private java.util.function.BooleanSupplier alive = () -> true;

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
         * @param alive whether the glue's reference still exists (default: always); checked at each admit and each
         *              due retry: once it answers false, the reference ends as {@link RetryReference#destroy()}
         *              ends it
         */
        public Builder<P> alive(java.util.function.BooleanSupplier alive) {
            this.alive = requireNonNull(alive, "alive");
            return this;
        }

        /**
         * @throws IllegalArgumentException if the lifecycle has a journal and no decoder was given
         * @throws IllegalStateException    if the lifecycle is closed
         */
        public RetryReference<P> build() {
            RetryLifecycle.Shared shared = lifecycle.shared();
            if (shared.journal().present() && decoder == null) {
                throw new IllegalArgumentException("decoder: null (expected: a PayloadDecoder when the lifecycle "
                        + "has a journal)");
            }
            return lifecycle.register(new RetryReference<>(this, shared));
        }

        private static <T> T requireNonNull(T value, String name) {
            if (value == null) {
                throw new NullPointerException(name + ": null");
            }
            return value;
        }
    }
}
