package io.rpctimer.retry;

import io.rpctimer.wheel.Timer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * The calls one {@link RetryReference} parked in the journal past its in-memory cap ({@code overflow=spill}), and
 * their way back onto the wheel as room frees. The journal holds the calls; this class holds only how many this
 * reference parked and has not taken back, and the outcome handles of those a caller watches — so a million parked
 * calls cost the heap nothing each.
 *
 * <p>A parked call comes back through {@link #takeBack} whichever way the journal hands it out, by an unpark here or by
 * a claim (the reference's periodic one): each entry says whether this run parked it, so a call is counted once and
 * its handle follows it.
 *
 * <p>Unparks run on the reference's executor, one at a time. Whoever frees room calls {@link #maybeUnpark}. An unpark
 * starts once a quarter of the cap is free (at most {@value #UNPARK_BATCH} places), or {@value #GATHER_MILLIS} ms
 * after room first freed, whichever comes first: each unpark is a transaction of the journal, and a backlog drained
 * one freed place at a time would cost one for each call.
 * An unpark that ends checks again after it stopped, so room freed while it was finishing is not left to the next
 * claim. An unpark the journal refused is tried again a second later if no outcome comes first.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class ParkedCalls {

    /** A page of the JDBC journal: one unpark is then one page's transaction. */
    private static final int UNPARK_BATCH = 2_000;
    /** How long room that is less than a batch waits for more before an unpark takes what there is. */
    static final long GATHER_MILLIS = 20;
    /** After an unpark the journal refused, when to try again if no outcome comes first. */
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final GuardedJournal journal;
    private final String serviceKey;
    private final Executor executor;
    private final Timer timer;
    /** The places under the reference's cap. */
    private final Places room;
    /** The reference's cap ({@code failbacktasks}), now. */
    private final IntSupplier cap;
    /** Puts the entries the journal handed out on the wheel. */
    private final Consumer<GuardedJournal.Claimed> schedule;
    private final ConcurrentHashMap<CallKey, CompletableFuture<CallOutcome>> handles = new ConcurrentHashMap<>();
    /** Calls this reference parked and has not taken back. */
    private final AtomicLong parked = new AtomicLong();
    /** Counts parks: an unpark that found the journal empty of parked calls believes it only if none came since. */
    private final AtomicLong parks = new AtomicLong();
    private final AtomicBoolean unparking = new AtomicBoolean();
    /** A timer waits {@link #GATHER_MILLIS} for room to gather. */
    private final AtomicBoolean gathering = new AtomicBoolean();
    private volatile boolean mayHoldParked;
    private volatile boolean closed;

    /**
     * The places under a reference's cap. A hand-out takes the places it asks the journal for before it asks, and
     * gives them back once the calls it got are scheduled (each then counted on its own), so that a call admitted
     * meanwhile, or another hand-out, finds them taken: the cap holds while the journal answers.
     *
     * <p><b>Threading:</b> thread-safe.
     */
    interface Places {
        /** @return how many places are free now */
        int free();

        /** Takes up to {@code want} free places. @return how many it took */
        int take(int want);

        /** Gives back {@code taken} places that {@link #take} took. */
        void giveBack(int taken);
    }

    ParkedCalls(GuardedJournal journal, String serviceKey, Executor executor, Timer timer, Places room,
                IntSupplier cap, Consumer<GuardedJournal.Claimed> schedule) {
        this.journal = journal;
        this.serviceKey = serviceKey;
        this.executor = executor;
        this.timer = timer;
        this.room = room;
        this.cap = cap;
        this.schedule = schedule;
    }

    /** Before a call is appended parked: an unpark may take it as soon as it is written. */
    void expect(CallKey key, CompletableFuture<CallOutcome> handle) {
        if (handle != null) {
            handles.put(key, handle);
        }
    }

    /** The expected call was not parked after all (refused, or known not written). */
    void notParked(CallKey key, CompletableFuture<CallOutcome> handle) {
        if (handle != null) {
            handles.remove(key, handle);
        }
    }

    /** The expected call is parked (or maybe: its write's outcome is unknown). */
    void parked() {
        parked.incrementAndGet();
        parks.incrementAndGet();
        mayHoldParked = true;
    }

    /** A call parked as maybe written turned out written: unpark it if there is room, as after a park. */
    void parkedLater() {
        parks.incrementAndGet();
        mayHoldParked = true;
        maybeUnpark();
    }

    /** A call parked as maybe written turned out not written: it is no longer this reference's parked call. */
    void unparkedInMemory() {
        parked.updateAndGet(n -> n > 0 ? n - 1 : 0);
    }

    /** A claim filled its limit: more calls may wait in the journal. */
    void mayHoldMore() {
        mayHoldParked = true;
    }

    /**
     * An entry the journal handed out: if this reference parked it, it is this reference's parked call no more.
     *
     * @return true if this reference parked it (it was counted as a failed call when it was parked); false if it is
     *     new here (another run's or instance's, or parked by a reference of the service that was destroyed since)
     */
    boolean takeBack(RetryJournalEntry entry) {
        return entry.parkedHere() && parked.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
    }

    /** @return and forgets the outcome handle of a parked call, or null if no caller watches it */
    CompletableFuture<CallOutcome> handle(CallKey key) {
        return handles.remove(key);
    }

    long count() {
        return parked.get();
    }

    /**
     * Room may have freed: bring parked calls back, on the executor, unless an unpark runs already; if less than a
     * batch is free, after {@link #GATHER_MILLIS} at most.
     */
    void maybeUnpark() {
        if (!journal.present() || !mayHoldParked || closed) {
            return;
        }
        int free = room.free();
        if (free <= 0) {
            return;
        }
        if (free < Math.max(1, Math.min(UNPARK_BATCH, cap.getAsInt() / 4))) {
            gather();
            return;
        }
        startUnpark();
    }

    /** Less than a batch is free: unpark what there is {@link #GATHER_MILLIS} from now, unless a batch frees first. */
    private void gather() {
        if (!gathering.compareAndSet(false, true)) {
            return;
        }
        try {
            timer.newTimeout(t -> {
                gathering.set(false);
                startUnpark();
            }, GATHER_MILLIS, TimeUnit.MILLISECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            gathering.set(false); // the wheel stopped: the application is closing; parked calls stay for the next start
        }
    }

    private void startUnpark() {
        if (!journal.present() || !mayHoldParked || closed || room.free() <= 0
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
        boolean failed = false;
        try {
            int ask;
            while (!closed && (ask = room.take(UNPARK_BATCH)) > 0) {
                long seen = parks.get();
                GuardedJournal.Claimed c;
                try {
                    c = journal.unpark(serviceKey, ask);
                    if (!c.failed()) {
                        schedule.accept(c);
                    }
                } finally {
                    room.giveBack(ask);
                }
                if (c.failed()) {
                    failed = true;
                    break;
                }
                if (c.entries().size() < ask) {
                    if (parks.get() == seen) {
                        mayHoldParked = false;
                    }
                    break;
                }
            }
        } finally {
            unparking.set(false);
        }
        if (failed) {
            retryLater();
        } else {
            maybeUnpark(); // room freed, or a call parked, while this unpark was finishing
        }
    }

    /** Parked calls must not wait for the next start because the journal failed at the last outcome. */
    private void retryLater() {
        try {
            timer.newTimeout(t -> maybeUnpark(), RETRY_NANOS, TimeUnit.NANOSECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            // the wheel stopped: the application is closing, and parked calls stay for the next start anyway
        }
    }

    /**
     * The reference ends: parked calls stay in the journal. Completes the watched ones' handles with {@code outcome}.
     *
     * @return how many this reference had parked
     */
    long close(CallOutcome outcome) {
        closed = true;
        long n = parked.getAndSet(0);
        handles.forEach((key, handle) -> handle.complete(new CallOutcome(outcome.outcome(), key.retryId(),
                outcome.attempt(), null, null, outcome.epochMillis())));
        handles.clear();
        return n;
    }
}
