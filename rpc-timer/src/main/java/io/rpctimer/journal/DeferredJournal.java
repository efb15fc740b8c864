package io.rpctimer.journal;

import io.rpctimer.retry.Abandonment;
import io.rpctimer.retry.CallKey;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetterStore;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link JdbcRetryJournal} whose database could not be reached when it was built
 * ({@link JdbcRetryJournal.Builder#buildOrOpenLater()}): it opens once the database answers, so that an instance can
 * start during a database outage, as it goes on through one.
 *
 * <p>A daemon thread of its own tries to open it every {@value #RETRY_MILLIS} ms until it is open or closed, so that no
 * caller ever waits for a connection, and a graceful stop that waits for the journal finds it open once the database
 * answers. Until it is open it holds nothing: an append fails known not written, so the caller's
 * {@code failback.store.down} decides (rejected, or kept in memory and appended at its next attempt once the journal
 * is open); a fence, a remove, a claim or a dead-letter operation fails, naming the store and why; no lease is held.
 * Once open, every operation is the journal's.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class DeferredJournal implements RetryJournal {

    private static final System.Logger LOG = System.getLogger(DeferredJournal.class.getName());
    /** How long the opener waits before each try to open, in milliseconds. */
    static final long RETRY_MILLIS = 1_000;

    private final JdbcRetryJournal.Builder builder;
    private final String name;
    private final boolean fences;
    private final DeadLetterStore deadLetters = new Letters();
    private final Thread opener;
    private volatile JdbcRetryJournal journal; // written under this
    private volatile String lastFailure;
    private boolean closed; // guarded by this

    /**
     * @param builder what builds the journal; used by this class only from now on
     * @param failure why it could not be built now
     */
    DeferredJournal(JdbcRetryJournal.Builder builder, RetryJournalException failure) {
        this.builder = builder;
        this.name = "retry journal " + builder.displayName();
        this.fences = builder.leaseMillis() > 0;
        this.lastFailure = summary(failure);
        LOG.log(System.Logger.Level.WARNING, "{0} cannot be reached ({1}); the application starts without it and"
                + " opens it once the database answers: until then a call that fails back is rejected, or kept in"
                + " memory with failback.store.down=memory", name, lastFailure);
        this.opener = new Thread(this::openWhenItAnswers, "rpc-timer-journal-opener");
        opener.setDaemon(true);
        opener.start();
    }

    /** @return whether the journal is open */
    boolean isOpen() {
        return journal != null;
    }

    /** The opener thread: tries to open the journal every {@value #RETRY_MILLIS} ms until it is open or closed. */
    private void openWhenItAnswers() {
        while (true) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS));
            synchronized (this) {
                if (closed) {
                    return;
                }
            }
            JdbcRetryJournal built;
            try {
                built = builder.build();
            } catch (RetryJournalException | RuntimeException e) {
                lastFailure = summary(e);
                continue;
            }
            synchronized (this) {
                if (closed) {
                    built.close();
                } else {
                    journal = built;
                    LOG.log(System.Logger.Level.INFO, "{0} is open: the database answers", name);
                }
            }
            return;
        }
    }

    /** @return the open journal */
    private JdbcRetryJournal opened() throws RetryJournalException {
        JdbcRetryJournal j = journal;
        if (j == null) {
            throw notOpen();
        }
        return j;
    }

    private RetryJournalException notOpen() {
        return new RetryJournalException(name + ": not open yet, it could not be opened since the start ("
                + lastFailure + ")", null);
    }

    /** @return what {@code e} says went wrong, its secrets hidden: its cause's, for the builder's own exception */
    private static String summary(Throwable e) {
        Throwable said = e instanceof RetryJournalException && e.getCause() != null ? e.getCause() : e;
        return JdbcUrls.redact(said.toString());
    }

    @Override
    public Append append(RetryJournalEntry entry, boolean parked) throws RetryJournalException {
        return opened().append(entry, parked);
    }

    @Override
    public CompletionStage<Fence> fence(CallKey key, int attempt, long nextDueEpochMillis, String lastProvider,
                                        String lastFailure) {
        JdbcRetryJournal j = journal;
        return j == null ? CompletableFuture.failedStage(notOpen())
                : j.fence(key, attempt, nextDueEpochMillis, lastProvider, lastFailure);
    }

    @Override
    public CompletionStage<Boolean> remove(CallKey key) {
        JdbcRetryJournal j = journal;
        return j == null ? CompletableFuture.failedStage(notOpen()) : j.remove(key);
    }

    @Override
    public CompletionStage<Boolean> bury(CallKey key, Abandonment abandonment) {
        JdbcRetryJournal j = journal;
        return j == null ? CompletableFuture.failedStage(notOpen()) : j.bury(key, abandonment);
    }

    @Override
    public DeadLetterStore deadLetters() {
        return deadLetters;
    }

    @Override
    public void release(List<CallKey> keys) throws RetryJournalException {
        if (!keys.isEmpty()) {
            opened().release(keys);
        }
    }

    @Override
    public List<RetryJournalEntry> claim(String application, String serviceKey, int limit)
            throws RetryJournalException {
        return opened().claim(application, serviceKey, limit);
    }

    @Override
    public List<RetryJournalEntry> unpark(String application, String serviceKey, int limit)
            throws RetryJournalException {
        return opened().unpark(application, serviceKey, limit);
    }

    @Override
    public boolean fences() {
        return fences;
    }

    @Override
    public boolean leaseHeld() {
        JdbcRetryJournal j = journal;
        return j == null ? !fences : j.leaseHeld();
    }

    /** {@inheritDoc} Before it is open, no verdict can be given, so none is valid: 0. */
    @Override
    public long fenceValidityMillis() {
        JdbcRetryJournal j = journal;
        return j == null ? 0 : j.fenceValidityMillis();
    }

    @Override
    public String describe() {
        JdbcRetryJournal j = journal;
        return j != null ? j.describe() : name + ", not open yet, failing: " + lastFailure;
    }

    /** Closes the journal if it is open; it is never opened after this. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (journal != null) {
                journal.close();
            }
        }
        LockSupport.unpark(opener);
    }

    /** @return the thread that opens the journal; it ends once the journal is open or closed */
    Thread opener() {
        return opener;
    }

    /** The open journal's dead letters; before it is open, each operation fails, naming the store. */
    private final class Letters implements DeadLetterStore {

        @Override
        public boolean durable() {
            return true;
        }

        @Override
        public String describe() {
            JdbcRetryJournal j = journal;
            return j != null ? j.deadLetters().describe() : DeferredJournal.this.describe();
        }

        @Override
        public DeadLetterPage list(String application, DeadLetterFilter filter, int page, int pageSize)
                throws RetryJournalException {
            return opened().deadLetters().list(application, filter, page, pageSize);
        }

        @Override
        public Map<String, Long> count(String application, DeadLetterFilter filter) throws RetryJournalException {
            return opened().deadLetters().count(application, filter);
        }

        @Override
        public long purge(String application, DeadLetterFilter filter) throws RetryJournalException {
            return opened().deadLetters().purge(application, filter);
        }

        @Override
        public Trimmed trim(String application, long retentionMillis, long max) throws RetryJournalException {
            return opened().deadLetters().trim(application, retentionMillis, max);
        }

        @Override
        public Revived revive(String application, DeadLetterFilter filter, Set<String> serviceKeys, Reviver reviver)
                throws RetryJournalException {
            return opened().deadLetters().revive(application, filter, serviceKeys, reviver);
        }
    }
}
