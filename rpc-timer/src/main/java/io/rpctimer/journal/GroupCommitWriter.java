package io.rpctimer.journal;

import io.rpctimer.journal.JournalWrite.Outcome;
import io.rpctimer.journal.JournalWrite.OutcomeUnknown;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.wheel.FailureLog;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Group commit: callers {@link #submit} a write; one writer thread takes every write queued at that moment (up to
 * {@code maxBatch}), executes them in order in one transaction, commits once, and completes each. Under load a
 * commit carries many writes, so the commit cost (a file write for H2, a WAL flush for PostgreSQL) is shared; at low
 * load a write waits for one commit only.
 *
 * <h3>Outcomes</h3>
 * A write fails for sure when it is refused before it starts (queue full, writer closed), when the caller stops
 * waiting while it is still queued (it is dropped), or when its transaction fails before the commit (rolled back).
 * When the commit itself fails (the connection breaks, the driver throws), the transaction may have committed: the
 * writer then reads each append back on a new connection, and completes it with what it finds; fences and removes
 * complete with {@link OutcomeUnknown}. A caller that stops waiting while its write is under way is told the write
 * is <em>maybe written</em>, with the write's eventual outcome to follow
 * ({@link RetryJournalException#resolution()}).
 *
 * <p>When a batch fails on bad data (SQLState class 22 or 23, a duplicate key among them), its writes are retried one
 * per transaction so that only the bad one fails; a duplicate key of an append is its outcome, not a failure. Any
 * other failure (store down, disk full, a driver's unchecked exception) fails the whole batch, the next batch opens
 * a new connection, and the writer thread goes on: nothing a driver throws stops it.
 *
 * <p><b>Threading:</b> {@link #submit} and {@link #submitAndWait} are thread-safe; the connection and its statements
 * belong to the writer thread alone.
 */
final class GroupCommitWriter implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(GroupCommitWriter.class.getName());
    private static final long POLL_MILLIS = 50;

    private final DataSource dataSource;
    private final JournalSql sql;
    /** This instance's owner id now (it changes when the lease was taken over, see {@link LeaseKeeper}). */
    private final Supplier<String> owner;
    private final String runId;
    /** Without a lease, the marks that also tell which calls this run holds; null with a lease. */
    private final HandOutMarks marks;
    private final String storeName;
    /** With a lease, how long the lease must outlast a fence, in milliseconds; 0 without a lease. */
    private final long fenceMarginMillis;
    private final int maxBatch;
    private final long timeoutMillis;
    private final BlockingQueue<JournalWrite> queue;
    private final Thread thread;
    /**
     * Ends the wait of a {@link #submit} that ran out of time: one daemon thread per writer, each write's timeout
     * cancelled (and dropped from its queue) when the write completes, so a write costs no thread and nothing stays
     * queued after it.
     */
    private final ScheduledThreadPoolExecutor timeouts;
    /** Written by close(), read by the writer thread. */
    private volatile boolean closing;
    /** Written by the writer thread: the last failure's text, null while commits succeed. */
    private volatile String lastFailure;
    /** Written by the writer thread: System.nanoTime() when the batch under way started, 0 when idle. */
    private volatile long busySinceNanos;

    // writer thread only
    private final FailureLog failures;
    private Connection connection;
    /** Per kind of write, its statements, executed in order (a bury has three; the others one). */
    private final Map<JournalWrite.Kind, List<PreparedStatement>> statements = new EnumMap<>(JournalWrite.Kind.class);

    /** @param marks the journal's marks if its statements are {@link JournalSql#marked}, else null */
    GroupCommitWriter(DataSource dataSource, JournalSql sql, Supplier<String> owner, String runId, HandOutMarks marks,
                      String storeName, long fenceMarginMillis, int maxBatch, int queueCapacity, long timeoutMillis) {
        this.dataSource = dataSource;
        this.sql = sql;
        this.owner = owner;
        this.runId = runId;
        this.marks = marks;
        this.storeName = storeName;
        this.fenceMarginMillis = fenceMarginMillis;
        this.maxBatch = maxBatch;
        this.timeoutMillis = timeoutMillis;
        this.queue = new ArrayBlockingQueue<>(queueCapacity);
        // a store that is down fails every commit: one line with the stack trace, then a count every 10 s
        this.failures = new FailureLog(LOG, System.Logger.Level.WARNING, storeName + ": commits failed");
        this.timeouts = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "rpc-timer-journal-timeouts-" + owner.get());
            t.setDaemon(true);
            return t;
        });
        timeouts.setRemoveOnCancelPolicy(true);
        this.thread = new Thread(this::run, "rpc-timer-journal-writer-" + owner.get());
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Queues {@code write} and returns at once.
     *
     * @return its outcome, within at most {@code timeoutMillis}; exceptionally with a {@link RetryJournalException}
     *     if the store failed, maybe written if the write was under way when the time ran out
     */
    CompletableFuture<Outcome> submit(JournalWrite write) {
        RetryJournalException refused = offer(write);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        CompletableFuture<Outcome> result = new CompletableFuture<>();
        write.done.whenComplete((outcome, failure) -> {
            if (failure == null) {
                result.complete(outcome);
            } else {
                result.completeExceptionally(failed(write, failure));
            }
        });
        ScheduledFuture<?> timeout = timeouts.schedule(() -> {
            if (!result.isDone()) {
                result.completeExceptionally(timedOut(write));
            }
        }, timeoutMillis, TimeUnit.MILLISECONDS);
        result.whenComplete((outcome, failure) -> timeout.cancel(false));
        return result;
    }

    /**
     * Blocks until the write committed, failed, or {@code timeoutMillis} passed.
     *
     * @throws RetryJournalException if the store failed; maybe written if it was under way when the time ran out
     */
    Outcome submitAndWait(JournalWrite write) throws RetryJournalException {
        RetryJournalException refused = offer(write);
        if (refused != null) {
            throw refused;
        }
        try {
            return write.done.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw failed(write, e.getCause());
        } catch (TimeoutException e) {
            throw timedOut(write);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RetryJournalException(storeName + ": interrupted waiting for " + write, e, resolution(write));
        }
    }

    private RetryJournalException offer(JournalWrite write) {
        if (closing || !thread.isAlive()) {
            return new RetryJournalException(storeName + ": closed", new IllegalStateException("journal closed"));
        }
        if (!queue.offer(write)) {
            return new RetryJournalException(storeName + ": " + queue.size() + " writes queued, the store is not"
                    + " keeping up", new IllegalStateException("write queue full"));
        }
        return null;
    }

    private RetryJournalException failed(JournalWrite write, Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof RetryJournalException known) {
            return known;
        }
        String text = storeName + ": " + write + " failed: " + cause;
        return cause instanceof OutcomeUnknown ? new RetryJournalException(text, cause, resolution(write))
                : new RetryJournalException(text, cause);
    }

    /** The caller stops waiting: a write still queued is dropped (and fails for sure), one under way may commit. */
    private RetryJournalException timedOut(JournalWrite write) {
        boolean dropped = write.abandon();
        String text = storeName + ": " + write + " not committed within " + timeoutMillis + " ms ("
                + (dropped ? "not started, dropped" : "under way, may still commit") + "); the store is down or slow";
        if (!dropped) {
            return new RetryJournalException(text, new TimeoutException(text), resolution(write));
        }
        RetryJournalException e = new RetryJournalException(text, new TimeoutException(text));
        write.done.completeExceptionally(e);
        return e;
    }

    /** @return true once the write is known to have taken effect, false once known not to */
    private static CompletionStage<Boolean> resolution(JournalWrite write) {
        return write.done.handle((outcome, failure) -> {
            Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
            if (cause instanceof OutcomeUnknown unknown) {
                throw new CompletionException(unknown);
            }
            return outcome == Outcome.WRITTEN;
        });
    }

    /** @return the last commit failure, or that a commit has been under way for too long; null while healthy */
    String lastFailure() {
        long since = busySinceNanos;
        long busyMillis = since == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
        if (busyMillis > timeoutMillis) {
            return "a commit has been under way for " + busyMillis + " ms";
        }
        if (!thread.isAlive() && !closing) {
            return "the writer thread stopped";
        }
        return lastFailure;
    }

    int queued() {
        return queue.size();
    }

    private void run() {
        List<JournalWrite> batch = new ArrayList<>(maxBatch);
        try {
            while (true) {
                JournalWrite first = queue.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (closing) {
                        return;
                    }
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, maxBatch - 1);
                busySinceNanos = System.nanoTime();
                commit(batch);
                busySinceNanos = 0;
                batch.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            discardConnection();
        }
    }

    private void commit(List<JournalWrite> batch) {
        List<JournalWrite> live = new ArrayList<>(batch.size());
        for (JournalWrite w : batch) {
            if (w.take()) {
                live.add(w);
            }
        }
        if (!live.isEmpty()) {
            commit(live, true);
        }
    }

    /** Executes and commits {@code writes} in one transaction, and completes each; never throws. */
    private void commit(List<JournalWrite> writes, boolean mayRetryAlone) {
        Outcome[] outcomes;
        try {
            outcomes = execute(writes);
        } catch (SQLException e) {
            discardConnection(); // rolls the transaction back: nothing of it took effect
            if (mayRetryAlone && writes.size() > 1 && isBadData(e)) {
                writes.forEach(w -> commit(List.of(w), false));
            } else if (writes.size() == 1 && writes.get(0).kind == JournalWrite.Kind.APPEND
                    && sql.dialect.isDuplicateKey(e)) {
                complete(writes, new Outcome[]{Outcome.DUPLICATE});
            } else {
                fail(writes, e);
            }
            return;
        } catch (RuntimeException | Error e) {
            discardConnection();
            fail(writes, e);
            return;
        }
        try {
            connection.commit();
        } catch (SQLException | RuntimeException | Error e) {
            discardConnection();
            failUnknown(writes, e);
            return;
        }
        complete(writes, outcomes);
    }

    private void complete(List<JournalWrite> writes, Outcome[] outcomes) {
        lastFailure = null;
        for (int i = 0; i < writes.size(); i++) {
            writes.get(i).done.complete(outcomes[i]);
        }
    }

    private void fail(List<JournalWrite> writes, Throwable e) {
        lastFailure = e.toString();
        failures.report(System.nanoTime(), e);
        writes.forEach(w -> w.done.completeExceptionally(e));
    }

    /** The commit failed: it may have taken effect. Appends are read back; the rest stay unknown. */
    private void failUnknown(List<JournalWrite> writes, Throwable e) {
        lastFailure = e.toString();
        failures.report(System.nanoTime(), e);
        for (JournalWrite w : writes) {
            if (w.kind != JournalWrite.Kind.APPEND) {
                w.done.completeExceptionally(new OutcomeUnknown(w + ": its commit failed", e));
                continue;
            }
            try {
                Outcome found = readBack(w);
                if (found == Outcome.WRITTEN) {
                    w.done.complete(found);
                } else {
                    w.done.completeExceptionally(e); // read back: not there, so the commit did not take effect
                }
            } catch (SQLException | RuntimeException readFailure) {
                readFailure.addSuppressed(e);
                w.done.completeExceptionally(new OutcomeUnknown(w + ": its commit failed, and reading it back"
                        + " failed too", readFailure));
            }
        }
    }

    /** @return WRITTEN if the append's row is there and this run's, GONE otherwise */
    private Outcome readBack(JournalWrite w) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql.whoHolds)) {
            st.setQueryTimeout(queryTimeoutSeconds());
            EntryRows.bindKey(st, 1, w.key);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() && w.owner.equals(rs.getString(1)) && runId.equals(rs.getString(2))
                        ? Outcome.WRITTEN : Outcome.GONE;
            }
        }
    }

    private static boolean isBadData(SQLException e) {
        SQLException first = e instanceof BatchUpdateException && e.getNextException() != null
                ? e.getNextException() : e;
        String state = first.getSQLState();
        return state != null && (state.startsWith("22") || state.startsWith("23"));
    }

    /**
     * Executes the writes in order, consecutive writes of one kind as one JDBC batch per statement of the kind (the
     * last statement's counts are the writes' outcomes); does not commit.
     */
    private Outcome[] execute(List<JournalWrite> writes) throws SQLException {
        Connection c = connection();
        String me = owner.get();
        boolean refused = sql.takesOver && ownLeaseTakenOver(c, me);
        Outcome[] outcomes = new Outcome[writes.size()];
        int start = 0;
        while (start < writes.size()) {
            JournalWrite.Kind kind = writes.get(start).kind;
            int end = start;
            while (end < writes.size() && writes.get(end).kind == kind) {
                writes.get(end).owner = me;
                end++;
            }
            if (refused && kind == JournalWrite.Kind.APPEND) {
                Arrays.fill(outcomes, start, end, Outcome.REFUSED);
                start = end;
                continue;
            }
            int[] counts = null;
            List<PreparedStatement> steps = statements(kind);
            for (int step = 0; step < steps.size(); step++) {
                PreparedStatement st = steps.get(step);
                for (int i = start; i < end; i++) {
                    bind(st, writes.get(i), step);
                    st.addBatch();
                }
                counts = st.executeBatch();
            }
            for (int i = start; i < end; i++) {
                int n = counts[i - start];
                outcomes[i] = n > 0 ? Outcome.WRITTEN : explain(c, writes.get(i), n);
            }
            start = end;
        }
        return outcomes;
    }

    /**
     * Locks the lease rows of {@code me} and of this run until the transaction ends ({@link JournalSql#writeGuard}),
     * so that no survivor takes one over while this transaction writes calls of its owner.
     *
     * @return whether {@code me}'s row is held by another run: it took the lease over, with the calls
     */
    private boolean ownLeaseTakenOver(Connection c, String me) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(sql.writeGuard)) {
            st.setQueryTimeout(queryTimeoutSeconds());
            return JournalSql.leaseTakenOver(st, me, runId);
        }
    }

    /**
     * @param count what the driver reported for the write: 0, or {@link Statement#SUCCESS_NO_INFO}
     * @return why a fence, a remove or a bury touched no row (or whether it did, when the driver did not say)
     */
    private Outcome explain(Connection c, JournalWrite w, int count) throws SQLException {
        if (w.kind == JournalWrite.Kind.APPEND) {
            return count == Statement.SUCCESS_NO_INFO ? Outcome.WRITTEN : Outcome.DUPLICATE;
        }
        try (PreparedStatement st = c.prepareStatement(sql.whoHolds)) {
            st.setQueryTimeout(queryTimeoutSeconds());
            EntryRows.bindKey(st, 1, w.key);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return w.kind != JournalWrite.Kind.FENCE && count == Statement.SUCCESS_NO_INFO
                            ? Outcome.WRITTEN : Outcome.GONE;
                }
                boolean ours = sql.takesOver ? runId.equals(rs.getString(3))
                        : w.owner.equals(rs.getString(1)) && runId.equals(rs.getString(2));
                if (!ours) {
                    return Outcome.ADOPTED;
                }
                return w.kind == JournalWrite.Kind.FENCE ? Outcome.LEASE_EXPIRED : Outcome.GONE;
            }
        }
    }

    private void bind(PreparedStatement st, JournalWrite w, int step) throws SQLException {
        switch (w.kind) {
            case APPEND -> EntryRows.bind(st, w.entry, w.owner, w.parked, runId);
            case FENCE -> {
                st.setInt(1, w.nextAttempt);
                st.setLong(2, w.dueEpochMillis);
                st.setString(3, EntryRows.bounded(w.lastProvider, JournalSql.PROVIDER_CHARS));
                st.setString(4, EntryRows.bounded(w.lastFailure, JournalSql.FAILURE_CHARS));
                int i = 5;
                if (marks != null || sql.takesOver) {
                    st.setString(i++, runId); // the call becomes this run's
                }
                i = EntryRows.bindKey(st, i, w.key);
                if (sql.takesOver) {
                    st.setString(i, runId);
                    st.setLong(i + 1, fenceMarginMillis);
                    return;
                }
                i = sql.bindHeld(st, i, w.owner, runId, marks, w.key);
                if (fenceMarginMillis > 0) {
                    st.setString(i, w.owner);
                    st.setLong(i + 1, fenceMarginMillis);
                }
            }
            case REMOVE -> {
                int i = EntryRows.bindKey(st, 1, w.key);
                if (sql.takesOver) {
                    st.setString(i, runId);
                } else {
                    st.setString(i, w.owner);
                }
            }
            case BURY -> bindBury(st, w, step);
        }
    }

    /** Binds step {@code step} of a bury: 0 replaces a dead letter of the key, 1 copies the call, 2 removes it. */
    private void bindBury(PreparedStatement st, JournalWrite w, int step) throws SQLException {
        int i = 1;
        if (step == 0) {
            i = EntryRows.bindKey(st, i, w.key);
        } else if (step == 1) {
            st.setInt(1, w.abandonment.attempts());
            st.setString(2, EntryRows.bounded(w.abandonment.lastProvider(), JournalSql.PROVIDER_CHARS));
            st.setString(3, EntryRows.bounded(w.abandonment.lastFailure(), JournalSql.FAILURE_CHARS));
            st.setString(4, EntryRows.bounded(w.abandonment.failureClass(), JournalSql.CLASS_CHARS));
            i = 5;
        }
        sql.bindHeld(st, EntryRows.bindKey(st, i, w.key), w.owner, runId, marks, w.key);
    }

    private List<PreparedStatement> statements(JournalWrite.Kind kind) throws SQLException {
        List<PreparedStatement> steps = statements.get(kind);
        if (steps == null) {
            List<String> texts = switch (kind) {
                case APPEND -> List.of(sql.insert);
                case FENCE -> List.of(fenceMarginMillis > 0 ? sql.fenceWithLease : sql.fence);
                case REMOVE -> List.of(sql.remove);
                case BURY -> List.of(sql.buryReplace, sql.buryInsert, sql.buryDelete);
            };
            steps = new ArrayList<>(texts.size());
            for (String text : texts) {
                PreparedStatement st = connection.prepareStatement(text);
                st.setQueryTimeout(queryTimeoutSeconds());
                steps.add(st);
            }
            statements.put(kind, steps);
        }
        return steps;
    }

    private int queryTimeoutSeconds() {
        return (int) Math.max(1, (timeoutMillis + 999) / 1000);
    }

    private Connection connection() throws SQLException {
        if (connection == null) {
            connection = dataSource.getConnection();
            connection.setAutoCommit(false);
        }
        return connection;
    }

    private void discardConnection() {
        statements.clear();
        if (connection != null) {
            try {
                connection.close(); // closes its statements; an open transaction is rolled back
            } catch (SQLException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "{0}: closing a failed connection: {1}", storeName, e);
            }
            connection = null;
        }
    }

    /**
     * Commits what is queued, stops the writer thread, and fails whatever it could not commit within
     * {@code timeoutMillis}.
     */
    @Override
    public void close() {
        closing = true;
        try {
            thread.join(timeoutMillis + POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            thread.interrupt();
        }
        JournalWrite w;
        while ((w = queue.poll()) != null) {
            w.done.completeExceptionally(new IllegalStateException(storeName + ": closed before commit"));
        }
        timeouts.shutdown(); // the timeouts still pending run, then its thread ends
    }
}
