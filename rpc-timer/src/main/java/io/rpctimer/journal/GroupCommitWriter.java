package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.wheel.FailureLog;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * Group commit: callers of {@link #submit} enqueue a write and block; one writer thread takes every write queued
 * at that moment (up to {@code maxBatch}), executes them in order in one transaction, commits once, and wakes their
 * callers. Under load a commit carries many writes, so the commit cost (a file write for H2, a WAL flush for
 * PostgreSQL) is shared; at low load a write waits for one commit only.
 *
 * <p>A caller waits at most {@code timeoutMillis}. A write still queued then is dropped; a write the writer has
 * already started may still commit after its caller was told it failed (the journal is at-least-once, never
 * at-most-once). When a batch fails on bad data (SQLState class 22 or 23), its writes are retried one per
 * transaction so that only the bad one fails; any other failure (store down, disk full) fails the whole batch, and
 * the next batch opens a new connection.
 *
 * <p><b>Threading:</b> {@link #submit} is thread-safe; the connection and its statements belong to the writer
 * thread alone.
 */
final class GroupCommitWriter implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(GroupCommitWriter.class.getName());
    private static final long POLL_MILLIS = 50;

    private final DataSource dataSource;
    private final JournalSql sql;
    private final String owner;
    private final String runId;
    private final String storeName;
    private final int maxBatch;
    private final long timeoutMillis;
    private final BlockingQueue<JournalWrite> queue;
    private final Thread thread;
    /** Written by close(), read by the writer thread. */
    private volatile boolean closing;
    /** Written by the writer thread: the last failure's text, null while commits succeed. */
    private volatile String lastFailure;

    // writer thread only
    private final FailureLog failures;
    private Connection connection;
    private final Map<JournalWrite.Kind, PreparedStatement> statements = new EnumMap<>(JournalWrite.Kind.class);

    GroupCommitWriter(DataSource dataSource, JournalSql sql, String owner, String runId, String storeName, int maxBatch,
                      int queueCapacity, long timeoutMillis) {
        this.dataSource = dataSource;
        this.sql = sql;
        this.owner = owner;
        this.runId = runId;
        this.storeName = storeName;
        this.maxBatch = maxBatch;
        this.timeoutMillis = timeoutMillis;
        this.queue = new ArrayBlockingQueue<>(queueCapacity);
        // a store that is down fails every commit: one line with the stack trace, then a count every 10 s
        this.failures = new FailureLog(LOG, System.Logger.Level.WARNING, storeName + ": commits failed");
        this.thread = new Thread(this::run, "rpc-timer-journal-writer-" + owner);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Blocks until the write committed, failed, or {@code timeoutMillis} passed.
     *
     * @return true if the row was written; false if an update or remove found no row owned by this instance
     */
    boolean submit(JournalWrite write) throws RetryJournalException {
        if (closing) {
            throw new RetryJournalException(storeName + ": closed", new IllegalStateException("journal closed"));
        }
        if (!queue.offer(write)) {
            throw new RetryJournalException(storeName + ": " + queue.size() + " writes queued, the store is not"
                    + " keeping up", new IllegalStateException("write queue full"));
        }
        try {
            return write.done.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new RetryJournalException(storeName + ": " + write.kind + " " + write.retryId + " failed: "
                    + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            String state = write.abandon() ? "not started (dropped)" : "started, may still commit";
            throw new RetryJournalException(storeName + ": " + write.kind + " " + write.retryId + " not committed"
                    + " within " + timeoutMillis + " ms (" + state + "); the store is down or slow", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RetryJournalException(storeName + ": interrupted waiting for " + write.kind + " "
                    + write.retryId, e);
        }
    }

    /** @return the last commit failure, or null while commits succeed */
    String lastFailure() {
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
                commit(batch);
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
        if (live.isEmpty()) {
            return;
        }
        try {
            complete(live, execute(live));
        } catch (SQLException e) {
            discardConnection();
            if (live.size() > 1 && isBadData(e)) {
                live.forEach(this::commitAlone);
            } else {
                fail(live, e);
            }
        }
    }

    private void commitAlone(JournalWrite write) {
        try {
            complete(List.of(write), execute(List.of(write)));
        } catch (SQLException e) {
            discardConnection();
            fail(List.of(write), e);
        }
    }

    private void complete(List<JournalWrite> writes, boolean[] written) {
        lastFailure = null;
        for (int i = 0; i < writes.size(); i++) {
            writes.get(i).done.complete(written[i]);
        }
    }

    private void fail(List<JournalWrite> writes, SQLException e) {
        lastFailure = e.toString();
        failures.report(System.nanoTime(), e);
        writes.forEach(w -> w.done.completeExceptionally(e));
    }

    private static boolean isBadData(SQLException e) {
        SQLException first = e instanceof BatchUpdateException && e.getNextException() != null
                ? e.getNextException() : e;
        String state = first.getSQLState();
        return state != null && (state.startsWith("22") || state.startsWith("23"));
    }

    /** Executes the writes in order, consecutive writes of one kind as one JDBC batch, then commits once. */
    private boolean[] execute(List<JournalWrite> writes) throws SQLException {
        Connection c = connection();
        boolean[] written = new boolean[writes.size()];
        int start = 0;
        while (start < writes.size()) {
            JournalWrite.Kind kind = writes.get(start).kind;
            int end = start;
            PreparedStatement st = statement(kind);
            while (end < writes.size() && writes.get(end).kind == kind) {
                bind(st, writes.get(end));
                st.addBatch();
                end++;
            }
            int[] counts = st.executeBatch();
            for (int i = start; i < end; i++) {
                int n = counts[i - start];
                written[i] = n > 0 || n == Statement.SUCCESS_NO_INFO;
            }
            start = end;
        }
        c.commit();
        return written;
    }

    private void bind(PreparedStatement st, JournalWrite w) throws SQLException {
        switch (w.kind) {
            case APPEND -> EntryRows.bind(st, w.entry, owner, w.parked, runId);
            case UPDATE -> {
                st.setInt(1, w.attempt);
                st.setLong(2, w.dueEpochMillis);
                st.setString(3, EntryRows.bounded(w.lastProvider, JournalSql.PROVIDER_CHARS));
                st.setString(4, EntryRows.bounded(w.lastFailure, JournalSql.FAILURE_CHARS));
                st.setString(5, w.retryId);
                st.setString(6, owner);
            }
            case REMOVE -> {
                st.setString(1, w.retryId);
                st.setString(2, owner);
            }
        }
    }

    private PreparedStatement statement(JournalWrite.Kind kind) throws SQLException {
        PreparedStatement st = statements.get(kind);
        if (st == null) {
            String text = switch (kind) {
                case APPEND -> sql.upsert;
                case UPDATE -> sql.update;
                case REMOVE -> sql.remove;
            };
            st = connection.prepareStatement(text);
            st.setQueryTimeout((int) Math.max(1, (timeoutMillis + 999) / 1000));
            statements.put(kind, st);
        }
        return st;
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
            } catch (SQLException e) {
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
    }
}
