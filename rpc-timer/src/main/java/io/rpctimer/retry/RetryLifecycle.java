package io.rpctimer.retry;

import io.rpctimer.wheel.Timer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The retry lifecycle of one application: the state machine that takes every failed call of its references to
 * exactly one outcome — {@code DELIVERED} (with the attempt), {@code ABANDONED}, {@code REJECTED} or
 * {@code HANDED_OVER} — on a shared {@link Timer}, and the one place that talks to the {@link RetryJournal}. The
 * glue only sends one attempt at a time ({@link AttemptSender}) and reports its reply. Plain JDK.
 *
 * <h3>Wiring</h3>
 * <pre>{@code
 * RetryLifecycle lifecycle = RetryLifecycle.builder("my-app").timer(wheel).executor(retryPool)
 *         .journal(journal).listener(event -> ...).build();           // one per application
 * RetryReference<Call> ref = lifecycle.reference(serviceKey, sender)    // one per reference
 *         .policies(config::policy).limits(100, OverflowPolicy.REJECT).budget(budget).decoder(codec).build();
 * ref.resume();                                                         // at reference start: journal entries
 * Admission a = ref.admit(method, retryId, call, bytes, provider, failure, wantsHandle);  // a call failed back
 * ref.onSuccess();                                                      // a call succeeded (the budget)
 * lifecycle.deadLetters().replay(DeadLetterFilter.all(), 50);           // abandoned calls, again, 50 a second
 * ref.destroy();  lifecycle.close();                                    // HANDED_OVER
 * }</pre>
 * See {@link RetryReference} for the life of one call and the journal's failure rules, and {@link DeadLetters} for
 * what becomes of an abandoned call.
 *
 * <p>Every step of every call is counted (per application here, per reference in {@link ReferenceState}), sent to
 * the listeners as a {@link RetryEvent} carrying the application (built only when someone listens), and recorded in a
 * bounded ring for {@link #history(String)}.
 *
 * <p><b>Threading:</b> thread-safe. Listeners are called on the thread of the step: the caller's (admit), the
 * dispatch executor (attempts, replies) or the thread that closes.
 */
public final class RetryLifecycle implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RetryLifecycle.class.getName());

    /** Steps kept for {@link #history} by default. */
    public static final int DEFAULT_HISTORY_CAPACITY = 4096;

    private final String application;
    private final List<RetryListener> listeners;
    private final LongSupplier clockMillis;
    private final RetryHistory history;
    private final RetryCounters counters = new RetryCounters();
    private final LongAdder resumed = new LongAdder();
    private final LongAdder unpersistable = new LongAdder();
    private final LongAdder unreadable = new LongAdder();
    private final Set<RetryReference<?>> references = ConcurrentHashMap.newKeySet();
    /** What every reference of this lifecycle is built with. */
    private final Shared shared;
    private final DeadLetters deadLetters;
    /** How long a graceful stop waits for a journal that is down, for the calls whose append failed (nanoseconds). */
    private final long closeJournalWaitNanos;
    private volatile boolean closed;

    /**
     * What a {@link RetryReference} is built with: the lifecycle's wheel, default executor, journal and clock, and
     * the one sink it reports to.
     */
    record Shared(String application, Timer timer, Executor executor, GuardedJournal journal,
                  LongSupplier clockMillis, CallSink sink, DeadLetters deadLetters) {
    }

    private RetryLifecycle(Builder b) {
        this.application = b.application;
        this.listeners = new CopyOnWriteArrayList<>(b.listeners);
        this.clockMillis = b.clockMillis;
        this.closeJournalWaitNanos = b.closeJournalWait.toNanos();
        this.history = new RetryHistory(b.historyCapacity);
        GuardedJournal journal = new GuardedJournal(application, b.journal);
        this.deadLetters = new DeadLetters(this, journal, b.deadLetterPolicy, clockMillis);
        this.shared = new Shared(application, b.timer, b.executor, journal, clockMillis, new Sink(), deadLetters);
        deadLetters.start(b.timer, b.executor);
    }

    /**
     * @param application the Dubbo application name, carried by every event; not null
     * @return a builder
     */
    public static Builder builder(String application) {
        return new Builder(application);
    }

    /**
     * Starts building a reference's retries.
     *
     * @param serviceKey the service key ({@code group/interface:version}), as the journal keys entries
     * @param sender     sends one attempt of a call
     * @param <P>        the glue's in-memory form of a call
     * @throws IllegalStateException at {@code build()} if this lifecycle is closed
     */
    public <P> RetryReference.Builder<P> reference(String serviceKey, AttemptSender<P> sender) {
        return new RetryReference.Builder<>(this, serviceKey, sender);
    }

    /**
     * A graceful stop: every reference's pending calls are HANDED_OVER (see {@link RetryReference#destroy()}).
     * Calls whose append failed while the journal was down are appended first if the journal takes writes again
     * within {@link Builder#closeJournalWait} (a database restart), so that they are not left to the hand-over sink.
     * Does not stop the timer, the executor or the journal, which the caller owns. Idempotent.
     */
    @Override
    public void close() {
        List<RetryReference<?>> live;
        synchronized (references) { // a reference registered concurrently is either refused or destroyed here
            closed = true;
            live = List.copyOf(references);
        }
        deadLetters.close();
        long journalDeadline = System.nanoTime() + closeJournalWaitNanos;
        live.forEach(r -> r.journalBeforeClose(journalDeadline));
        live.forEach(r -> r.destroy(false));
    }

    /** @param listener receives every event of this application from now on */
    public void addListener(RetryListener listener) {
        if (listener == null) {
            throw new NullPointerException("listener: null (expected: a RetryListener)");
        }
        listeners.add(listener);
    }

    /** @return this application's counters */
    public RetryStats stats() {
        return counters.snapshot();
    }

    /** @return what an operator wants to see: counters, the journal, and each live reference */
    public LifecycleState state() {
        List<ReferenceState> refs = new ArrayList<>();
        for (RetryReference<?> r : references) {
            refs.add(r.state());
        }
        GuardedJournal journal = shared.journal();
        return new LifecycleState(application, counters.snapshot(), resumed.sum(), journal.failures(),
                unpersistable.sum(), unreadable.sum(), journal.describe(), refs);
    }

    /**
     * @return the recorded steps of the call {@code retryId}, oldest first; only the last
     *     {@link Builder#historyCapacity} steps of the whole application are kept, so an old call's may be gone
     */
    public List<RetryStep> history(String retryId) {
        return history.of(retryId);
    }

    /**
     * @return the application's dead letters: list, show, replay and purge them (kept in the journal if it keeps
     *     them, else in memory)
     */
    public DeadLetters deadLetters() {
        return deadLetters;
    }

    public String application() {
        return application;
    }

    @Override
    public String toString() {
        return "RetryLifecycle(" + application + ", " + references.size() + " references)";
    }

    // ------------------------------------------------------------------ for the references

    Shared shared() {
        return shared;
    }

    /** @return the live references, a weakly consistent view */
    Set<RetryReference<?>> references() {
        return references;
    }

    /** @return {@code reference}, now one of this lifecycle's */
    <P> RetryReference<P> register(RetryReference<P> reference) {
        synchronized (references) {
            if (closed) {
                throw new IllegalStateException("RetryLifecycle(" + application + ") is closed");
            }
            references.add(reference);
        }
        return reference;
    }

    /** The references' reports: counted here and per reference, recorded, told to the listeners. */
    private final class Sink implements CallSink {

        @Override
        public void failed(RetryReference<?> reference, boolean fromJournal) {
            counters.callFailed();
            reference.counters.callFailed();
            if (fromJournal) {
                resumed.increment();
            }
        }

        @Override
        public void parkedHandedOver(RetryReference<?> reference, long n) {
            if (n == 0) {
                return;
            }
            for (long i = 0; i < n; i++) {
                counters.record(RetryEvent.Type.HANDED_OVER);
                reference.counters.record(RetryEvent.Type.HANDED_OVER);
            }
            LOG.log(Level.WARNING, "wheelfailback HANDED_OVER {0} calls of {1}/{2} parked in the journal; they resume"
                    + " at the next start, or with the instance that claims them", n, application,
                    reference.serviceKey());
        }

        @Override
        public void unpersistable(RetryReference<?> reference, String method, boolean firstOfMethod) {
            unpersistable.increment();
            if (firstOfMethod) {
                LOG.log(Level.WARNING, "wheelfailback {0}/{1}.{2}(): a failed call could not be serialized for the "
                        + "journal; such calls are retried in memory only (counted in unpersistable, logged once "
                        + "per method)", application, reference.serviceKey(), method);
            }
        }

        @Override
        public void unreadable(RetryReference<?> reference, String retryId, Exception e) {
            unreadable.increment();
            LOG.log(Level.ERROR, "wheelfailback journal entry retry.id=" + retryId + " of " + application + "/"
                    + reference.serviceKey() + " is unreadable (torn or corrupt payload); skipped, left in the "
                    + "journal", e);
        }

        @Override
        public void destroyed(RetryReference<?> reference) {
            references.remove(reference);
        }

        /** Counts one step, records it, and tells the listeners (the event is built only if someone listens). */
        @Override
        public void step(RetryEvent.Type type, RetryCall<?> call, int attempt, String provider, long delayNanos,
                         Throwable failure, String failureText, RetryEvent.Custody custody) {
            counters.record(type);
            call.reference.counters.record(type);
            long now = clockMillis.getAsLong();
            long delayMillis = TimeUnit.NANOSECONDS.toMillis(delayNanos);
            history.add(new RetryStep(type, call.retryId(), call.serviceKey(), call.method(), attempt, provider,
                    delayMillis, failureText, now));
            if (listeners.isEmpty()) {
                return;
            }
            RetryEvent event = new RetryEvent(type, application, call.retryId(), call.reference.service(),
                    call.method(), attempt, provider, delayMillis, failure, now, custody);
            for (RetryListener l : listeners) {
                try {
                    l.onEvent(event);
                } catch (RuntimeException | Error t) {
                    counters.listenerError();
                    LOG.log(Level.WARNING, "RetryListener " + l + " threw on " + type + " of retry.id="
                            + call.retryId() + "; ignored", t);
                }
            }
        }
    }

    /**
     * Builds a {@link RetryLifecycle}.
     *
     * <p><b>Threading:</b> not thread-safe; use from one thread.
     */
    public static final class Builder {
        private final String application;
        private Timer timer;
        private Executor executor;
        private RetryJournal journal;
        private final List<RetryListener> listeners = new ArrayList<>();
        private LongSupplier clockMillis = System::currentTimeMillis;
        private int historyCapacity = DEFAULT_HISTORY_CAPACITY;
        private DeadLetterPolicy deadLetterPolicy = DeadLetterPolicy.defaults();
        private Duration closeJournalWait = Duration.ofSeconds(10);

        private Builder(String application) {
            if (application == null) {
                throw new NullPointerException("application: null (expected: the Dubbo application name)");
            }
            this.application = application;
        }

        /** @param timer the wheel retries wait on (required) */
        public Builder timer(Timer timer) {
            this.timer = timer;
            return this;
        }

        /** @param executor where attempts are dispatched unless a reference has its own (required) */
        public Builder executor(Executor executor) {
            this.executor = executor;
            return this;
        }

        /** @param journal the write-ahead journal, or null for none (calls are then in memory only) */
        public Builder journal(RetryJournal journal) {
            this.journal = journal;
            return this;
        }

        /** @param listener receives every event of this application */
        public Builder listener(RetryListener listener) {
            if (listener == null) {
                throw new NullPointerException("listener: null (expected: a RetryListener)");
            }
            listeners.add(listener);
            return this;
        }

        /** @param clockMillis wall-clock time in epoch milliseconds (default {@link System#currentTimeMillis()}) */
        public Builder clockMillis(LongSupplier clockMillis) {
            if (clockMillis == null) {
                throw new NullPointerException("clockMillis: null");
            }
            this.clockMillis = clockMillis;
            return this;
        }

        /**
         * @param historyCapacity steps kept for {@link #history}, for the whole application, {@code >= 1}
         * @throws IllegalArgumentException if {@code historyCapacity < 1}
         */
        public Builder historyCapacity(int historyCapacity) {
            if (historyCapacity < 1) {
                throw new IllegalArgumentException("historyCapacity: " + historyCapacity + " (expected: >= 1)");
            }
            this.historyCapacity = historyCapacity;
            return this;
        }

        /**
         * @param wait how long {@link RetryLifecycle#close()} waits for a journal that is down, to append the calls
         *             whose append failed (default 10 s, Dubbo's default graceful shutdown wait; zero: not at all)
         * @throws IllegalArgumentException if {@code wait} is negative
         */
        public Builder closeJournalWait(Duration wait) {
            if (wait == null || wait.isNegative()) {
                throw new IllegalArgumentException("closeJournalWait: " + wait + " (expected: >= 0)");
            }
            this.closeJournalWait = wait;
            return this;
        }

        /**
         * @param policy how many dead letters to keep, for how long, and how often a journal's are trimmed
         *               (default {@link DeadLetterPolicy#defaults()})
         */
        public Builder deadLetters(DeadLetterPolicy policy) {
            if (policy == null) {
                throw new NullPointerException("policy: null (expected: a DeadLetterPolicy)");
            }
            this.deadLetterPolicy = policy;
            return this;
        }

        /** @throws NullPointerException if the timer or the executor is missing */
        public RetryLifecycle build() {
            if (timer == null) {
                throw new NullPointerException("timer: null (expected: the wheel retries wait on)");
            }
            if (executor == null) {
                throw new NullPointerException("executor: null (expected: where attempts are dispatched)");
            }
            return new RetryLifecycle(this);
        }
    }
}
