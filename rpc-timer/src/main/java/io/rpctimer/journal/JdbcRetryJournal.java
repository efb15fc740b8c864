package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link RetryJournal} in two tables of a JDBC database: H2 (the embedded default, see {@link EmbeddedJournal}),
 * PostgreSQL (a fleet's shared database) or MySQL (same SQL, untested here).
 *
 * <h3>Schema</h3>
 * Created if absent. {@code <prefix>retry_entry} has one row per pending call, keyed by {@code retry_id}: every
 * field of {@link RetryJournalEntry}, the CRC32 of the payload, the {@code owner} instance, a {@code parked} flag
 * (not on any wheel now: handed out by {@link #unpark}) and a {@code quarantined} flag (corrupt, never handed out
 * again), and the {@code run_id} of the journal that has it on a wheel now (a restarted process hands out entries
 * of earlier runs without rewriting them first). {@code <prefix>retry_instance} has one row per instance:
 * {@code owner}, {@code lease_until} (epoch ms), {@code host}. The prefix defaults to {@code rpctimer_}.
 *
 * <h3>Writes</h3>
 * {@link #append}, {@link #update} and {@link #remove} go through one {@link GroupCommitWriter}: concurrent calls
 * share one transaction, and each caller returns once that transaction committed, or throws
 * {@link RetryJournalException} after at most the write timeout. update and remove touch only rows this instance
 * owns.
 *
 * <h3>Ownership and leases</h3>
 * With a lease (the default, 30 s), the instance registers a lease at build and renews it every lease/3;
 * {@link #claim} adopts the entries of instances whose lease has expired with one conditional UPDATE per dead
 * owner ({@code SET owner = me WHERE owner = dead AND ...}), so two instances never both own an entry: the
 * database serialises the UPDATEs on each row. Without a lease (an embedded file only this process can open),
 * nobody else writes the tables.
 *
 * <h3>Claim and unpark</h3>
 * Entries are handed out in pages of {@value #PAGE}, earliest due first (keyset on {@code (due_at, retry_id)},
 * read in the order of the claim index), each page read, marked with this run's id and committed in one
 * transaction: an entry is never marked as on this run's wheel unless the call that marked it returns it.
 *
 * <p><b>Threading:</b> thread-safe. Writes block the calling thread (bounded by the write timeout); claim and
 * unpark run on the calling thread on their own connection.
 */
public final class JdbcRetryJournal implements RetryJournal {

    private static final System.Logger LOG = System.getLogger(JdbcRetryJournal.class.getName());
    private static final int ATTEMPTS = 3;
    /**
     * Most entries one claim or unpark reads and marks per transaction: an index-ordered page this size is read
     * and rewritten in memory, where one result of 100,000 rows and one transaction rewriting all of them cost
     * H2 about half again as much CPU (buffered result, undo log).
     */
    static final int PAGE = 2_000;

    private final DataSource dataSource;
    private final JournalSql sql;
    private final String owner;
    /** This journal's run: the value of {@code run_id} of the entries it has on a wheel now. */
    private final String runId = UUID.randomUUID().toString();
    private final String storeName;
    private final long leaseMillis;
    private final int claimTimeoutSeconds;
    private final Clock clock;
    private final GroupCommitWriter writer;
    private final LeaseKeeper lease;
    private final AtomicBoolean closed = new AtomicBoolean();

    private JdbcRetryJournal(Builder b, JournalSql sql, String url) throws SQLException {
        this.dataSource = b.dataSource;
        this.sql = sql;
        this.owner = b.owner;
        this.leaseMillis = b.leaseMillis;
        this.claimTimeoutSeconds = b.claimTimeoutSeconds;
        this.clock = b.clock;
        this.storeName = "retry journal " + (b.name != null ? b.name : url) + " (" + sql.dialect + ", table "
                + sql.entryTable + ", owner " + owner + ")";
        this.lease = leaseMillis > 0
                ? new LeaseKeeper(dataSource, sql, owner, storeName, leaseMillis, clock) : null;
        this.writer = new GroupCommitWriter(dataSource, sql, owner, runId, storeName, b.maxBatch, b.queueCapacity,
                b.writeTimeoutMillis);
    }

    /** @return a builder of a journal on {@code dataSource}, whose schema it creates if absent */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** @return this instance's owner id, the value of the {@code owner} column of its entries */
    public String owner() {
        return owner;
    }

    @Override
    public void append(RetryJournalEntry entry, boolean parked) throws RetryJournalException {
        EntryRows.check(entry);
        writer.submit(JournalWrite.append(entry, parked));
    }

    @Override
    public boolean update(String retryId, int attempt, long dueEpochMillis, String lastProvider,
                          String lastFailure) throws RetryJournalException {
        EntryRows.checkText("retryId", retryId, JournalSql.ID_CHARS, true);
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt: " + attempt + " (expected: >= 1)");
        }
        return writer.submit(JournalWrite.update(retryId, attempt, dueEpochMillis, lastProvider, lastFailure));
    }

    @Override
    public void remove(String retryId) throws RetryJournalException {
        EntryRows.checkText("retryId", retryId, JournalSql.ID_CHARS, true);
        writer.submit(JournalWrite.remove(retryId));
    }

    /**
     * {@inheritDoc}
     *
     * <p>This instance's own entries that an earlier run scheduled (their {@code run_id} is not this journal's)
     * are handed out like parked ones, and compete with the adopted ones on due time for the {@code limit}; a
     * later claim of the same service (a second reference) never hands out entries this run has on a wheel.
     */
    @Override
    public List<RetryJournalEntry> claim(String application, String serviceKey, int limit)
            throws RetryJournalException {
        checkService(application, serviceKey, limit);
        return inTransaction("claim of " + serviceKey, c -> {
            int adopted = adoptExpired(c, application, serviceKey);
            c.commit();
            if (adopted > 0) {
                LOG.log(System.Logger.Level.INFO, "{0}: adopted {1} entries of {2} from instances whose lease"
                        + " expired", storeName, adopted, serviceKey);
            }
            return unpark(c, application, serviceKey, limit);
        });
    }

    @Override
    public List<RetryJournalEntry> unpark(String application, String serviceKey, int limit)
            throws RetryJournalException {
        checkService(application, serviceKey, limit);
        return inTransaction("unpark of " + serviceKey, c -> unpark(c, application, serviceKey, limit));
    }

    private interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} on a new connection, again (up to {@value #ATTEMPTS} times in all) when the database
     * aborted it to break a deadlock or a serialization conflict (SQLState class 40): survivors claiming at once
     * may meet on the same rows.
     *
     * <p>In READ COMMITTED, each statement sees what other claims committed before it. A claim pages through
     * entries, and under MySQL's default REPEATABLE READ every page would be read from the snapshot of the first:
     * a claim that lost a page's rows to another claim would read the same page again, and again.
     */
    private <T> T inTransaction(String what, Work<T> work) throws RetryJournalException {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                return work.run(c);
            } catch (SQLException e) {
                String state = e.getSQLState();
                if (attempt == ATTEMPTS || state == null || !state.startsWith("40")) {
                    throw new RetryJournalException(storeName + ": " + what + " failed: " + e, e);
                }
            }
        }
    }

    private static void checkService(String application, String serviceKey, int limit) {
        EntryRows.checkText("application", application, JournalSql.NAME_CHARS, true);
        EntryRows.checkText("serviceKey", serviceKey, JournalSql.NAME_CHARS, true);
        if (limit < 0) {
            throw new IllegalArgumentException("limit: " + limit + " (expected: >= 0)");
        }
    }

    /** @return a statement that gives up after the claim timeout: a claim never waits forever on the store */
    private PreparedStatement prepare(Connection c, String text) throws SQLException {
        PreparedStatement st = c.prepareStatement(text);
        st.setQueryTimeout(claimTimeoutSeconds);
        return st;
    }

    private int adoptExpired(Connection c, String application, String serviceKey) throws SQLException {
        long now = clock.millis();
        List<String> dead = new ArrayList<>();
        try (PreparedStatement st = prepare(c, sql.deadOwners)) {
            st.setString(1, application);
            st.setString(2, serviceKey);
            st.setString(3, owner);
            st.setLong(4, now);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    dead.add(rs.getString(1));
                }
            }
        }
        int adopted = 0;
        try (PreparedStatement st = prepare(c, sql.adopt)) {
            for (String d : dead) {
                st.setString(1, owner);
                st.setString(2, application);
                st.setString(3, serviceKey);
                st.setString(4, d);
                st.setString(5, d);
                st.setLong(6, now);
                adopted += st.executeUpdate();
            }
        }
        return adopted;
    }

    /**
     * Pages through parked entries in claim order (due_at, retry_id) until {@code limit} are handed out or none is
     * left, committing each page: an entry is marked scheduled by this run in the transaction that hands it out.
     * A page that fails after earlier pages committed is rolled back, and the committed pages are returned (they are
     * this run's now); its entries stay claimable. A failure on the first page throws, handing nothing out.
     */
    private List<RetryJournalEntry> unpark(Connection c, String application, String serviceKey, int limit)
            throws SQLException {
        List<RetryJournalEntry> out = new ArrayList<>(Math.min(limit, 4096));
        ParkedPage.Key after = ParkedPage.Key.FIRST;
        try {
            while (out.size() < limit) {
                int want = Math.min(limit - out.size(), PAGE);
                ParkedPage page;
                try (PreparedStatement st = prepare(c, sql.selectParked)) {
                    page = ParkedPage.read(st, owner, runId, application, serviceKey, after, want);
                }
                quarantine(c, page.corrupt());
                List<RetryJournalEntry> marked = markScheduled(c, page.entries());
                c.commit();
                out.addAll(marked);
                if (page.rows() < want) {
                    break;
                }
                after = page.last();
            }
        } catch (SQLException e) {
            if (out.isEmpty()) {
                throw e;
            }
            rollbackQuietly(c, e);
            LOG.log(System.Logger.Level.WARNING, "{0}: handing out {1} entries of {2}; a later page failed and"
                    + " its entries stay for the next claim: {3}", storeName, out.size(), serviceKey, e);
        }
        return out;
    }

    private static void rollbackQuietly(Connection c, SQLException failure) {
        try {
            c.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * Marks {@code entries} (one page, in claim order) scheduled by this run, in primary-key order: consecutive
     * updates then fall on the same B-tree pages, which H2 rewrites once instead of once per entry.
     *
     * @return the entries marked, in claim order
     */
    private List<RetryJournalEntry> markScheduled(Connection c, List<RetryJournalEntry> entries)
            throws SQLException {
        if (entries.isEmpty()) {
            return entries;
        }
        List<RetryJournalEntry> byId = new ArrayList<>(entries);
        byId.sort(Comparator.comparing(RetryJournalEntry::retryId));
        Set<String> taken = new HashSet<>();
        try (PreparedStatement st = prepare(c, sql.unparkOne)) {
            for (RetryJournalEntry e : byId) {
                st.setString(1, runId);
                st.setString(2, e.retryId());
                st.setString(3, owner);
                st.setString(4, runId);
                st.addBatch();
            }
            int[] counts = st.executeBatch();
            for (int i = 0; i < counts.length; i++) {
                // 0: another unpark of this instance took it between our SELECT and this UPDATE
                if (counts[i] > 0 || counts[i] == java.sql.Statement.SUCCESS_NO_INFO) {
                    taken.add(byId.get(i).retryId());
                }
            }
        }
        List<RetryJournalEntry> mine = new ArrayList<>(taken.size());
        for (RetryJournalEntry e : entries) {
            if (taken.contains(e.retryId())) {
                mine.add(e);
            }
        }
        return mine;
    }

    private void quarantine(Connection c, List<ParkedPage.Corrupt> corrupt) throws SQLException {
        if (corrupt.isEmpty()) {
            return;
        }
        try (PreparedStatement st = prepare(c, sql.quarantine)) {
            for (ParkedPage.Corrupt bad : corrupt) {
                LOG.log(System.Logger.Level.ERROR, "{0}: entry {1} in table {2} is corrupt and skipped (kept,"
                        + " quarantined = TRUE): {3}", storeName, bad.retryId(), sql.entryTable, bad.reason());
                st.setString(1, bad.retryId());
                st.setString(2, owner);
                st.addBatch();
            }
            st.executeBatch();
        }
    }

    @Override
    public String describe() {
        String failure = writer.lastFailure();
        return storeName + ", " + (leaseMillis > 0 ? "lease " + leaseMillis + " ms" : "no lease (single process)")
                + ", " + writer.queued() + " writes queued, "
                + (closed.get() ? "closed" : failure == null ? "healthy" : "failing: " + failure);
    }

    /** Commits what is queued, stops the writer and the lease heartbeat. Entries stay. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            writer.close();
            if (lease != null) {
                lease.close();
            }
        }
    }

    /**
     * Builds a {@link JdbcRetryJournal}.
     *
     * <p><b>Threading:</b> not thread-safe; use from one thread.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private String owner = "instance-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID();
        private String tablePrefix = "rpctimer_";
        private String name;
        private long leaseMillis = 30_000;
        private long writeTimeoutMillis = 5_000;
        private int claimTimeoutSeconds = 60;
        private int maxBatch = 1024;
        private int queueCapacity = 65_536;
        private Clock clock = Clock.systemUTC();

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The owner id of this instance (default: random per process). A stable id (a host name and port, a pod
         * name) lets a restarted instance resume its own entries at once instead of after its old lease expired.
         */
        public Builder owner(String owner) {
            EntryRows.checkText("owner", owner, JournalSql.ID_CHARS, true);
            this.owner = owner;
            return this;
        }

        /** Tables are {@code <prefix>retry_entry} and {@code <prefix>retry_instance} (default prefix rpctimer_). */
        public Builder tablePrefix(String tablePrefix) {
            if (tablePrefix == null || !tablePrefix.matches("[A-Za-z][A-Za-z0-9_]{0,31}")) {
                throw new IllegalArgumentException("tablePrefix: " + tablePrefix
                        + " (expected: a letter, then up to 31 letters, digits or _)");
            }
            this.tablePrefix = tablePrefix;
            return this;
        }

        /** The store's name in messages (default: the JDBC URL). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * How long after the last renewal another instance may adopt this one's entries (default 30 s); renewed
         * every lease/3. {@link Duration#ZERO}: no lease, for a database only this process opens.
         */
        public Builder lease(Duration lease) {
            if (lease.isNegative() || !lease.isZero() && lease.toMillis() < 30) {
                throw new IllegalArgumentException("lease: " + lease + " (expected: 0, or >= 30 ms)");
            }
            this.leaseMillis = lease.toMillis();
            return this;
        }

        /** How long append, update and remove wait for their commit at most (default 5 s). */
        public Builder writeTimeout(Duration timeout) {
            if (timeout.toMillis() < 1) {
                throw new IllegalArgumentException("writeTimeout: " + timeout + " (expected: >= 1 ms)");
            }
            this.writeTimeoutMillis = timeout.toMillis();
            return this;
        }

        /**
         * How long each statement of {@link #claim} and {@link #unpark} may run (default 60 s): past it the
         * database cancels it, and the call throws {@link RetryJournalException} with nothing handed out.
         */
        public Builder claimTimeout(Duration timeout) {
            if (timeout.getSeconds() < 1) {
                throw new IllegalArgumentException("claimTimeout: " + timeout + " (expected: >= 1 s)");
            }
            this.claimTimeoutSeconds = (int) Math.min(Integer.MAX_VALUE, timeout.getSeconds());
            return this;
        }

        /** Most writes in one commit (default 1024). */
        public Builder maxBatch(int maxBatch) {
            if (maxBatch < 1) {
                throw new IllegalArgumentException("maxBatch: " + maxBatch + " (expected: >= 1)");
            }
            this.maxBatch = maxBatch;
            return this;
        }

        /** Most writes waiting for a commit; past it a write fails at once (default 65536). */
        public Builder queueCapacity(int queueCapacity) {
            if (queueCapacity < 1) {
                throw new IllegalArgumentException("queueCapacity: " + queueCapacity + " (expected: >= 1)");
            }
            this.queueCapacity = queueCapacity;
            return this;
        }

        /** The clock of leases (default: the system clock, epoch ms). */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Creates the schema if absent, registers the lease and starts the writer.
         *
         * @throws RetryJournalException    if the database cannot be reached or the schema not created
         * @throws IllegalArgumentException if the database is none of H2, PostgreSQL and MySQL
         */
        public JdbcRetryJournal build() throws RetryJournalException {
            for (int attempt = 1; ; attempt++) {
                try (Connection c = dataSource.getConnection()) {
                    JournalSql sql = new JournalSql(JournalDialect.of(c.getMetaData()), tablePrefix);
                    c.setAutoCommit(false);
                    sql.createSchema(c);
                    c.commit();
                    return new JdbcRetryJournal(this, sql, c.getMetaData().getURL());
                } catch (SQLException e) {
                    // two instances creating the schema at once: PostgreSQL fails one CREATE ... IF NOT EXISTS
                    if (attempt == 2) {
                        throw new RetryJournalException("retry journal " + (name != null ? name : "on "
                                + dataSource) + ": cannot open: " + e, e);
                    }
                }
            }
        }
    }
}
