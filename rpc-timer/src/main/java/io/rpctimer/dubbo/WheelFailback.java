package io.rpctimer.dubbo;

import io.rpctimer.retry.InMemoryRetryStore;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStore;
import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.TimerStats;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.apache.dubbo.common.constants.LoggerCodeConstants;
import org.apache.dubbo.common.logger.ErrorTypeAwareLogger;
import org.apache.dubbo.common.logger.LoggerFactory;

/**
 * The JVM-wide face of the {@code wheelfailback} cluster: listeners, the {@link RetryStore}, counters and the shared
 * wheel's stats. Every reference on {@code cluster="wheelfailback"} in the JVM reports here.
 *
 * <p>Listeners and a store can also be registered as services ({@code META-INF/services/io.rpctimer.retry.RetryListener},
 * {@code META-INF/services/io.rpctimer.retry.RetryStore}); they are loaded when this class is first used. The store
 * receives the calls handed over that no journal holds ({@code failback.store=memory}, or arguments that could not be
 * serialized); without one they go to an {@link InMemoryRetryStore} that lives as long as the JVM and keeps the latest
 * {@value InMemoryRetryStore#DEFAULT_CAPACITY} (older ones are dropped and counted; set another with
 * {@code setRetryStore(new InMemoryRetryStore(capacity))}). Each application's failed calls live in its
 * {@link RetryLifecycle} ({@link #lifecycles()}); a listener on each one reports here.
 *
 * <p>Every outcome is logged once, with application, service, method and retry id: {@code DELIVERED} at info level,
 * {@code ABANDONED}, {@code REJECTED} and {@code HANDED_OVER} at warn level.
 *
 * <p><b>Threading:</b> thread-safe.
 */
public final class WheelFailback {

    /** Attachment on every call of a {@code wheelfailback} reference: an id stable across the call's retries. */
    public static final String RETRY_ID = "retry.id";
    /**
     * Attachment on every retry of a {@code wheelfailback} call: 1..n. The original attempt carries none; read an
     * absent one as 0 ({@code invocation.getAttachment(RETRY_ATTEMPT, "0")}).
     */
    public static final String RETRY_ATTEMPT = "retry.attempt";

    private static final ErrorTypeAwareLogger LOG = LoggerFactory.getErrorTypeAwareLogger(WheelFailback.class);
    private static final List<RetryListener> LISTENERS = new CopyOnWriteArrayList<>(load(RetryListener.class));
    /** Exceptions thrown by the JVM-wide listeners: the lifecycles count those of their own listeners. */
    private static final LongAdder LISTENER_ERRORS = new LongAdder();
    private static volatile RetryStore store = loadStore();
    private static final List<RetryLifecycle> LIFECYCLES = new CopyOnWriteArrayList<>();
    /**
     * What the closed applications counted, so that the JVM's counts never go back; guarded by {@link #LIFECYCLES},
     * with the registrations, so that {@link #stats()} counts a closing application exactly once.
     */
    private static RetryStats retired = new RetryStats(0, 0, 0, 0, 0, 0, 0, 0, 0);

    private WheelFailback() {
    }

    /** @param listener receives every retry event from now on; not null */
    public static void addListener(RetryListener listener) {
        if (listener == null) {
            throw new NullPointerException("listener: null (expected: a RetryListener)");
        }
        LISTENERS.add(listener);
    }

    /** @return whether the listener was registered */
    public static boolean removeListener(RetryListener listener) {
        return LISTENERS.remove(listener);
    }

    /** @param retryStore receives the retries pending at shutdown from now on; not null */
    public static void setRetryStore(RetryStore retryStore) {
        if (retryStore == null) {
            throw new NullPointerException("retryStore: null (expected: a RetryStore)");
        }
        store = retryStore;
    }

    /**
     * Keeps the failed calls of {@code application} in the database behind {@code dataSource} (the {@code jdbc}
     * store, with leases, for a fleet). Call it before the application's first {@code wheelfailback} reference is
     * created; it applies unless that reference's URL sets {@code failback.store} to another kind.
     *
     * @param application the Dubbo application name; not null
     * @param dataSource  the database; not null
     */
    public static void useJournalDataSource(String application, DataSource dataSource) {
        if (application == null || dataSource == null) {
            throw new NullPointerException((application == null ? "application" : "dataSource")
                    + ": null (expected: not null)");
        }
        FailbackStore.useDataSource(application, dataSource);
    }

    /** @return the store that receives the retries pending at shutdown */
    public static RetryStore retryStore() {
        return store;
    }

    /**
     * @return the counters of every {@code wheelfailback} reference in the JVM: the sum of every application's
     *         {@link RetryLifecycle#stats()}, those closed included, and the errors of the listeners added here
     */
    public static RetryStats stats() {
        RetryStats sum;
        synchronized (LIFECYCLES) {
            sum = retired;
            for (RetryLifecycle lifecycle : LIFECYCLES) {
                sum = plus(sum, lifecycle.stats());
            }
        }
        return new RetryStats(sum.failedCalls(), Math.max(0, sum.failedCalls() - sum.ended()), sum.retriesSent(),
                sum.retriesFailed(), sum.delivered(), sum.abandoned(), sum.rejected(), sum.handedOver(),
                sum.listenerErrors() + LISTENER_ERRORS.sum());
    }

    private static RetryStats plus(RetryStats a, RetryStats b) {
        return new RetryStats(a.failedCalls() + b.failedCalls(), 0, a.retriesSent() + b.retriesSent(),
                a.retriesFailed() + b.retriesFailed(), a.delivered() + b.delivered(), a.abandoned() + b.abandoned(),
                a.rejected() + b.rejected(), a.handedOver() + b.handedOver(), a.listenerErrors() + b.listenerErrors());
    }

    /**
     * @return the retry lifecycle of every Dubbo application in the JVM with a live {@code wheelfailback} cluster,
     *         for meters and operators; a snapshot
     */
    public static List<RetryLifecycle> lifecycles() {
        return List.copyOf(LIFECYCLES);
    }

    /** @return the shared wheel's stats, or empty when no reference holds it */
    public static Optional<TimerStats> wheelStats() {
        return SharedWheelTimer.stats();
    }

    // ---------------------------------------------------------------- for the cluster

    static void register(RetryLifecycle lifecycle) {
        synchronized (LIFECYCLES) {
            LIFECYCLES.add(lifecycle);
        }
    }

    /** The application closed: it leaves {@link #lifecycles()}, and its counts stay in {@link #stats()}. */
    static void unregister(RetryLifecycle lifecycle) {
        synchronized (LIFECYCLES) {
            if (LIFECYCLES.remove(lifecycle)) {
                retired = plus(retired, lifecycle.stats());
            }
        }
    }

    /**
     * Tells the listeners and logs outcomes: the listener every application's {@link RetryLifecycle} calls, which
     * counts the step itself.
     *
     * @param store where the application keeps its calls, named when a call is handed over
     */
    static void emit(RetryEvent event, FailbackStore store) {
        for (RetryListener l : LISTENERS) {
            try {
                l.onEvent(event);
            } catch (Throwable t) {
                LISTENER_ERRORS.increment();
                LOG.warn(LoggerCodeConstants.CLUSTER_FAILED_INVOKE_SERVICE, "a RetryListener threw", "",
                        "RetryListener " + l + " threw on " + event.type() + " of retry.id=" + event.retryId()
                                + "; ignored", t);
            }
        }
        if (event.isOutcome()) {
            logOutcome(event, store);
        }
    }

    private static void logOutcome(RetryEvent e, FailbackStore store) {
        String what = "wheelfailback " + e.type() + " " + e.application() + " " + e.service() + "." + e.method()
                + "() retry.id=" + e.retryId();
        Throwable failure = e.failure();
        switch (e.type()) {
            case DELIVERED -> LOG.info(what + " on retry " + e.attempt() + " via " + e.provider());
            case ABANDONED -> LOG.warn(LoggerCodeConstants.CLUSTER_FAILED_INVOKE_SERVICE, "retries exhausted", "",
                    what + " after " + e.attempt() + " retries; last failure: " + describe(failure));
            case REJECTED -> LOG.warn(LoggerCodeConstants.CLUSTER_TIMER_RETRY_FAILED, "pending retry cap reached", "",
                    what + ": " + describe(failure));
            default -> LOG.warn(LoggerCodeConstants.CLUSTER_FAILED_INVOKE_SERVICE, "call handed over", "",
                    what + " with retry " + e.attempt() + " pending, " + custody(e, store)
                            + (failure == null ? "" : "; " + describe(failure)));
        }
    }

    /** @return where a HANDED_OVER call is, as the event says: the log must not claim a journal that does not hold it */
    private static String custody(RetryEvent e, FailbackStore store) {
        RetryEvent.Custody custody = e.custody() == null ? RetryEvent.Custody.NOWHERE : e.custody();
        return switch (custody) {
            case JOURNAL -> "kept in " + store.describe() + "; resumes at the next start, or with the instance that"
                    + " claims it";
            case JOURNAL_UNCONFIRMED -> "in " + store.describe() + " if its write committed (its outcome is"
                    + " unknown), and handed to " + WheelFailback.store;
            case ANOTHER_INSTANCE -> "taken over by another instance (this one was taken for dead): that one sends it";
            case RETRY_STORE -> "not in the journal: handed to " + WheelFailback.store;
            case NOWHERE -> "kept nowhere: " + WheelFailback.store + " did not take it";
        };
    }

    static String describe(Throwable t) {
        return t == null ? "none" : t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    private static RetryStore loadStore() {
        List<RetryStore> stores = load(RetryStore.class);
        return stores.isEmpty() ? new InMemoryRetryStore() : stores.get(0);
    }

    private static <S> List<S> load(Class<S> type) {
        List<S> found = new CopyOnWriteArrayList<>();
        Iterator<S> it = ServiceLoader.load(type, WheelFailback.class.getClassLoader()).iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    return found;
                }
                found.add(it.next());
            } catch (ServiceConfigurationError e) {
                LOG.error(LoggerCodeConstants.CLUSTER_FAILED_INVOKE_SERVICE, "bad service file", "",
                        "could not load a " + type.getName() + " listed in META-INF/services; skipped", e);
            }
        }
    }
}
