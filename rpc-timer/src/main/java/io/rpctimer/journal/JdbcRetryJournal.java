package io.rpctimer.journal;

import io.rpctimer.retry.Abandonment;
import io.rpctimer.retry.CallKey;
import io.rpctimer.retry.DeadLetterStore;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link RetryJournal} in three tables of a JDBC database: H2 (the embedded default, see {@link EmbeddedJournal}),
 * PostgreSQL (a fleet's shared database) or MySQL/MariaDB.
 *
 * <h3>Schema</h3>
 * Created if absent (the DDL per database is in the journal's documentation). {@code <prefix>call} has one row per
 * pending call, keyed by application, service key, method and {@code retry_id}: every field of
 * {@link RetryJournalEntry}, the CRC32 of the payload, the {@code owner} instance, a {@code parked} flag (not on any
 * wheel now: handed out by {@link #unpark}), a {@code quarantined} flag (corrupt, never handed out again), and the
 * {@code run_id} of the journal that has it on a wheel now (a restarted process hands out calls of earlier runs
 * without rewriting them first). {@code <prefix>instance} has one row per live instance: {@code owner},
 * {@code lease_until} (epoch ms of the database's clock), {@code host}, and {@code holder}, the run that holds the
 * row (the instance's own, or a survivor's that took the lease over). {@code <prefix>dead_letter} has the calls that
 * were abandoned ({@link #bury}, {@link JdbcDeadLetters}), keyed as the calls, with no owner: every instance of the
 * application sees the same ones. The prefix defaults to {@code rpctimer_}.
 * Calls in the tables of earlier versions ({@code <prefix>retry_entry}) are moved over at build.
 *
 * <h3>Writes</h3>
 * {@link #append}, {@link #fence}, {@link #remove} and {@link #bury} go through one {@link GroupCommitWriter}:
 * concurrent writes
 * share one transaction. An append never replaces a row: a second call with the same key is {@link Append#DUPLICATE}.
 * A fence and a remove touch only rows this run holds. A write whose commit may or may not have happened is reported
 * maybe written ({@link RetryJournalException#maybeWritten()}), never as refused.
 *
 * <h3>Ownership, leases and fencing</h3>
 * With a lease (the default, 30 s), the instance registers a lease at build and renews it every lease/3
 * ({@link LeaseKeeper}); every lease is judged by the database's clock. {@link #claim} and {@link #unpark} adopt the
 * calls of instances whose lease has expired, and released calls, as many as they hand out and no more, each with a
 * conditional UPDATE ({@code SET owner = me WHERE owner = dead AND its lease has expired}), so two instances never
 * both own a call, and survivors share a dead instance's calls (on PostgreSQL and MySQL a page is read
 * {@code FOR UPDATE SKIP LOCKED}: survivors adopting at once take different calls). Each send is fenced:
 * {@link #fence} is one conditional UPDATE that succeeds only if this run still holds the call and its lease outlasts
 * the send by a third of a lease, so an adoption (which needs the lease expired) and a successful fence of the same
 * call exclude each other, whatever the hosts' clocks say. On PostgreSQL a claim with room for all of a dead
 * instance's calls of its service takes its lease row over instead ({@link TakenLeases}): the calls are then this
 * run's by that row, and every fence, remove, bury and release checks that the lease row of the call's owner is this
 * run's. Without a lease (an embedded file only this process can open), nobody else writes the tables, and fences
 * check only that this run holds the call: its run id, or its mark (below).
 *
 * <h3>Claim and unpark</h3>
 * Calls are handed out in pages of {@value #PAGE}, this instance's own first, then a dead instance's, each earliest
 * due first (keyset on {@code (due_at, retry_id, method)}, read in the order of the claim index), each page read,
 * marked with this run's id (and owner) and committed in one transaction: a call is never marked as on this run's
 * wheel unless the call that marked it returns it. Without a lease, this instance's calls that an earlier run left
 * are handed out without a write, by a mark per service ({@link HandOutMarks}); the hand-outs of one service then
 * take turns. On PostgreSQL a claim or an unpark first brings the table's statistics up to date when a burst
 * changed more rows than the table held at its last analyze ({@link TableStatistics}), so that each call is found by
 * its primary key.
 *
 * <p><b>Threading:</b> thread-safe. Appends block the calling thread (bounded by the write timeout); fences and
 * removes complete on the writer's thread (or a timer's, at the write timeout); claim, unpark and release run on the
 * calling thread on their own connection.
 */
public final class JdbcRetryJournal implements RetryJournal {

    private static final System.Logger LOG = System.getLogger(JdbcRetryJournal.class.getName());
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
    /** Without a lease: how far this run handed out its earlier runs' calls, which it does without a write. */
    private final HandOutMarks marks;
    /** With {@link JournalSql#takesOver}: the leases this run took over whose calls it has not all handed out. */
    private final TakenLeases takenLeases;
    private final String storeName;
    private final long leaseMillis;
    private final Transactions transactions;
    private final GroupCommitWriter writer;
    private final JdbcDeadLetters deadLetters;
    private final LeaseKeeper lease;
    private final TableStatistics statistics;
    private final UnparkCursors cursors = new UnparkCursors(System::nanoTime);
    private final AtomicBoolean closed = new AtomicBoolean();

    private JdbcRetryJournal(Builder b, JournalSql sql, String url) throws SQLException {
        this.dataSource = b.dataSource;
        this.sql = sql;
        this.owner = b.owner;
        this.leaseMillis = b.leaseMillis;
        this.marks = sql.marked ? new HandOutMarks(runId) : null;
        String name = JdbcUrls.redact(b.name != null ? b.name : url);
        this.storeName = "retry journal " + name + " (" + sql.dialect + ", table " + sql.callTable + ", owner "
                + owner + ")";
        this.transactions = new Transactions(dataSource, storeName, b.claimTimeoutSeconds);
        this.lease = leaseMillis > 0
                ? new LeaseKeeper(dataSource, sql, owner, runId, storeName, leaseMillis, System::nanoTime) : null;
        this.takenLeases = sql.takesOver ? new TakenLeases(sql, transactions, runId, this::owner, lease, leaseMillis,
                storeName, this::quarantine) : null;
        this.deadLetters = new JdbcDeadLetters(transactions, sql, this::owner, runId, name, cursors::parked);
        this.statistics = new TableStatistics(sql, storeName, transactions, System::nanoTime);
        this.writer = new GroupCommitWriter(dataSource, sql, this::owner, runId, marks, storeName,
                lease == null ? 0 : lease.fenceMarginMillis(), b.maxBatch, b.queueCapacity, b.writeTimeoutMillis);
    }

    /** @return a builder of a journal on {@code dataSource}, whose schema it creates if absent */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * @return this instance's owner id, the value of the {@code owner} column of the entries it appends: the one it
     *     was built with, unless another instance took its lease over while it was paused (then a new one, see
     *     {@link LeaseKeeper})
     */
    public String owner() {
        return lease == null ? owner : lease.owner();
    }

    @Override
    public Append append(RetryJournalEntry entry, boolean parked) throws RetryJournalException {
        EntryRows.check(entry);
        try {
            return switch (writer.submitAndWait(JournalWrite.append(entry, parked))) {
                case DUPLICATE -> Append.DUPLICATE;
                case REFUSED -> throw new RetryJournalException(storeName + ": " + entry.key() + " not written: the"
                        + " lease of this instance was taken over by another instance while it was paused; it goes"
                        + " on under a new owner id at its next lease renewal", new IllegalStateException(
                        "lease taken over"));
                default -> Append.APPENDED;
            };
        } catch (RetryJournalException e) {
            if (!parked || !e.maybeWritten()) {
                throw e;
            }
            // it may commit after an unpark that found no parked entry: once its outcome is known, and before the
            // caller learns it, the next unpark reads own entries again
            throw new RetryJournalException(e.getMessage(), e.getCause(),
                    e.resolution().whenComplete((written, failure) -> cursors.parked()));
        } finally {
            if (parked) {
                cursors.parked(); // after the commit (or its unknown outcome): the next unpark reads own entries
            }
        }
    }

    /** Entries of this instance were written parked by other means than {@link #append} (moved in from a slot). */
    void parkedElsewhere() {
        cursors.parked();
    }

    @Override
    public CompletionStage<Fence> fence(CallKey key, int attempt, long nextDueEpochMillis, String lastProvider,
                                        String lastFailure) {
        EntryRows.checkKey(key);
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt: " + attempt + " (expected: >= 1)");
        }
        return writer.submit(JournalWrite.fence(key, attempt + 1, nextDueEpochMillis, lastProvider, lastFailure))
                .thenApply(outcome -> switch (outcome) {
                    case WRITTEN -> Fence.OWNED;
                    case ADOPTED, DUPLICATE, REFUSED -> Fence.ADOPTED;
                    case GONE -> Fence.GONE;
                    case LEASE_EXPIRED -> Fence.LEASE_EXPIRED;
                });
    }

    @Override
    public CompletionStage<Boolean> remove(CallKey key) {
        EntryRows.checkKey(key);
        return writer.submit(JournalWrite.remove(key)).thenApply(outcome -> outcome == JournalWrite.Outcome.WRITTEN);
    }

    /** {@inheritDoc} One group-commit write: the dead letter is written, and the call removed, together. */
    @Override
    public CompletionStage<Boolean> bury(CallKey key, Abandonment abandonment) {
        EntryRows.checkKey(key);
        if (abandonment.attempts() < 1) {
            throw new IllegalArgumentException("attempts: " + abandonment.attempts() + " (expected: >= 1)");
        }
        return writer.submit(JournalWrite.bury(key, abandonment))
                .thenApply(outcome -> outcome == JournalWrite.Outcome.WRITTEN);
    }

    /** {@inheritDoc} Table {@code <prefix>dead_letter}, shared by every instance on this database. */
    @Override
    public DeadLetterStore deadLetters() {
        return deadLetters;
    }

    /** {@inheritDoc} Calls another instance adopted meanwhile are left alone. */
    @Override
    public void release(List<CallKey> keys) throws RetryJournalException {
        keys.forEach(EntryRows::checkKey);
        if (keys.isEmpty()) {
            return;
        }
        inTransaction("release of " + keys.size() + " calls", c -> {
            try (PreparedStatement st = prepare(c, sql.release)) {
                for (int from = 0; from < keys.size(); from += PAGE) {
                    for (CallKey key : keys.subList(from, Math.min(keys.size(), from + PAGE))) {
                        sql.bindHeld(st, EntryRows.bindKey(st, 1, key), owner(), runId, marks, key);
                        st.addBatch();
                    }
                    st.executeBatch();
                    c.commit();
                }
            }
            return null;
        });
    }

    @Override
    public boolean fences() {
        return lease != null;
    }

    @Override
    public boolean leaseHeld() {
        return lease == null || lease.held();
    }

    /** @return the fence's margin: a fence succeeds only while the lease outlasts it by that much */
    @Override
    public long fenceValidityMillis() {
        return lease == null ? Long.MAX_VALUE : lease.fenceMarginMillis();
    }

    /**
     * {@inheritDoc}
     *
     * <p>This instance's own entries that an earlier run scheduled (their {@code run_id} is not this journal's)
     * are handed out like parked ones; a later claim of the same service (a second reference) never hands out
     * entries this run has on a wheel. Adoption is bounded by {@code limit}: entries of a dead instance past it stay
     * its own, for this instance's next {@link #unpark} or claim, or another survivor's, so that survivors share a
     * dead instance's calls instead of the first claim taking them all.
     */
    @Override
    public List<RetryJournalEntry> claim(String application, String serviceKey, int limit)
            throws RetryJournalException {
        checkService(application, serviceKey, limit);
        if (takenLeases != null) {
            takenLeases.serve(HandOutMarks.service(application, serviceKey));
        }
        return inTransaction("claim of " + serviceKey, c -> {
            statistics.refresh(c);
            return handOut(c, application, serviceKey, limit, true);
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>When this instance has fewer parked entries than {@code limit}, the rest is adopted from instances whose
     * lease has expired (and released entries), as {@link #claim} does, so that room freed on the wheel drains a dead
     * instance's backlog without waiting for the next periodic claim.
     */
    @Override
    public List<RetryJournalEntry> unpark(String application, String serviceKey, int limit)
            throws RetryJournalException {
        checkService(application, serviceKey, limit);
        return inTransaction("unpark of " + serviceKey, c -> {
            statistics.refresh(c);
            return handOut(c, application, serviceKey, limit, false);
        });
    }

    private <T> T inTransaction(String what, Transactions.Work<T> work) throws RetryJournalException {
        return transactions.run(what, work);
    }

    private static void checkService(String application, String serviceKey, int limit) {
        EntryRows.checkService(application, serviceKey);
        if (limit < 0) {
            throw new IllegalArgumentException("limit: " + limit + " (expected: >= 0)");
        }
    }

    private PreparedStatement prepare(Connection c, String text) throws SQLException {
        return transactions.prepare(c, text);
    }

    /**
     * Whose entries a hand-out takes: this instance's own, or a dead instance's (adopted as they are taken); {@code
     * markFenced} marks an entry as {@code mark} does and fences its next retry.
     */
    private record Source(String owner, String select, String mark, String markFenced) {
    }

    /**
     * Hands out up to {@code limit} entries: this instance's parked (or earlier-run) ones first, then entries adopted
     * from dead instances, each source earliest due first, a page per transaction. A page that fails after earlier
     * pages committed is rolled back, and the committed pages are returned (they are this run's now); its entries
     * stay claimable. A failure on the first page throws, handing nothing out.
     *
     * <p>A claim reads every source from its beginning; an unpark follows the hints of {@link UnparkCursors}.
     *
     * @param everyDeadOwner whether to look for dead owners among the entries themselves (a claim: also owners that
     *                       have no instance row), or only among expired leases and released entries (an unpark)
     */
    private List<RetryJournalEntry> handOut(Connection c, String application, String serviceKey, int limit,
                                            boolean everyDeadOwner) throws SQLException {
        String service = HandOutMarks.service(application, serviceKey);
        Object lock = marks != null ? marks.lock(service) : takenLeases != null ? takenLeases.lock(service) : null;
        if (lock == null) {
            return handOutNow(c, application, serviceKey, limit, everyDeadOwner);
        }
        synchronized (lock) {
            return handOutNow(c, application, serviceKey, limit, everyDeadOwner);
        }
    }

    private List<RetryJournalEntry> handOutNow(Connection c, String application, String serviceKey, int limit,
                                               boolean everyDeadOwner) throws SQLException {
        List<RetryJournalEntry> out = new ArrayList<>(Math.min(limit, 4096));
        boolean unpark = !everyDeadOwner;
        String service = HandOutMarks.service(application, serviceKey);
        int adopted = 0;
        String me = owner();
        try {
            if (!unpark || !cursors.ownAllRead(service)) {
                long parks = cursors.parks();
                Source own = new Source(me, sql.selectOwn, sql.unparkOne, sql.unparkFenced);
                ParkedPage.Key stop = pages(c, own, application, serviceKey, limit, out, ParkedPage.Key.FIRST);
                if (unpark) {
                    cursors.ownAllRead(service, parks, stop == null);
                }
            }
            if (takenLeases != null) {
                for (String from : takenLeases.owners(service)) {
                    takenLeases.handOut(c, from, application, serviceKey, service, limit, out);
                }
            }
            int own = out.size();
            List<String> known = unpark ? cursors.deadOwners(service) : null;
            if (known != null) {
                adopt(c, known, application, serviceKey, service, limit, out, true);
            }
            if (out.size() < limit) { // an unpark hands out fewer than asked only after a fresh look-up
                List<String> dead = deadOwners(c, application, serviceKey, everyDeadOwner);
                if (unpark) {
                    cursors.deadOwners(service, dead);
                }
                adopt(c, dead, application, serviceKey, service, limit, out, unpark);
            }
            adopted = out.size() - own;
        } catch (SQLException e) {
            if (out.isEmpty()) {
                throw e;
            }
            rollbackQuietly(c, e);
            LOG.log(System.Logger.Level.WARNING, "{0}: handing out {1} entries of {2}; a later page failed and"
                    + " its entries stay for the next claim: {3}", storeName, out.size(), serviceKey, e);
        }
        if (adopted > 0) {
            LOG.log(everyDeadOwner ? System.Logger.Level.INFO : System.Logger.Level.DEBUG, "{0}: adopted {1}"
                    + " entries of {2} from instances whose lease expired", storeName, adopted, serviceKey);
        }
        return out;
    }

    /**
     * Adopts entries of {@code owners} in turn until {@code out} holds {@code limit}.
     *
     * @param hinted whether to follow and update {@link #cursors}' hints (an unpark) or read from the beginning
     */
    private void adopt(Connection c, List<String> owners, String application, String serviceKey, String service,
                       int limit, List<RetryJournalEntry> out, boolean hinted) throws SQLException {
        for (String dead : owners) {
            if (out.size() >= limit) {
                return;
            }
            if (takenLeases != null && !hinted
                    && takenLeases.takeOver(c, dead, application, serviceKey, service, limit - out.size())) {
                takenLeases.handOut(c, dead, application, serviceKey, service, limit, out);
                continue;
            }
            Source from = new Source(dead, sql.selectAdoptable, sql.adoptOne, sql.adoptFenced);
            ParkedPage.Key start = hinted ? cursors.resumeAfter(service, dead) : ParkedPage.Key.FIRST;
            ParkedPage.Key stop = pages(c, from, application, serviceKey, limit, out, start);
            if (stop == null && start != ParkedPage.Key.FIRST) { // the end: entries may lie before start
                stop = pages(c, from, application, serviceKey, limit, out, ParkedPage.Key.FIRST);
            }
            if (hinted) {
                cursors.stoppedAt(service, dead, stop);
            }
        }
    }

    /**
     * @return owners of the service's entries that another instance may adopt now: released entries and instances
     *     whose lease has expired; with {@code everyOwner}, also owners of entries that have no instance row
     */
    private List<String> deadOwners(Connection c, String application, String serviceKey, boolean everyOwner)
            throws SQLException {
        if (everyOwner) {
            return ownersWithoutLiveLease(c, application, serviceKey);
        }
        List<String> dead = new ArrayList<>();
        try (PreparedStatement st = prepare(c, sql.expiredOwners)) {
            st.setString(1, application);
            st.setString(2, serviceKey);
            st.setString(3, owner());
            st.setString(4, runId);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    dead.add(rs.getString(1));
                }
            }
        }
        if (!owner().equals(JournalSql.RELEASED)) {
            dead.add(JournalSql.RELEASED);
        }
        return dead;
    }

    /** @return owners of the service's entries, other than this instance, with no instance row or an expired lease */
    private List<String> ownersWithoutLiveLease(Connection c, String application, String serviceKey)
            throws SQLException {
        Set<String> live = new HashSet<>();
        try (PreparedStatement st = prepare(c, sql.liveOwners)) {
            st.setString(1, runId);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    live.add(rs.getString(1));
                }
            }
        }
        List<String> dead = new ArrayList<>();
        try (PreparedStatement st = prepare(c, sql.nextOwner)) {
            String last = "";
            while (true) {
                st.setString(1, application);
                st.setString(2, serviceKey);
                st.setString(3, last);
                try (ResultSet rs = st.executeQuery()) {
                    if (!rs.next()) {
                        return dead;
                    }
                    last = rs.getString(1);
                }
                if (!last.equals(owner()) && !live.contains(last)) {
                    dead.add(last);
                }
            }
        }
    }

    /**
     * Pages through {@code from}'s entries in claim order (due_at, retry_id, method), from after {@code after},
     * until {@code out} holds {@code limit} or none is left, committing each page: an entry is marked scheduled by
     * this run (and, for a dead owner's, made this instance's) in the transaction that hands it out.
     *
     * @return the last entry read, or null if the pages reached the end of {@code from}'s entries
     */
    private ParkedPage.Key pages(Connection c, Source from, String application, String serviceKey, int limit,
                                 List<RetryJournalEntry> out, ParkedPage.Key after) throws SQLException {
        boolean own = from.owner().equals(owner());
        HandOutMarks ownMarks = own ? marks : null;
        while (out.size() < limit) {
            if (takenLeases != null && takenLeases.ownLeaseTaken(c)) {
                return after;
            }
            int want = Math.min(limit - out.size(), PAGE);
            ParkedPage page;
            List<RetryJournalEntry> marked;
            if (sql.adoptTaking != null && !own) {
                page = adoptTaking(c, from.owner(), application, serviceKey, after, want);
                quarantine(c, owner(), page.corrupt());
                marked = page.entries();
            } else {
                try (PreparedStatement st = prepare(c, from.select())) {
                    page = ParkedPage.read(st, from.owner(), own ? runId : ParkedPage.NO_RUN, runId, ownMarks,
                            application, serviceKey, after, want);
                }
                quarantine(c, from.owner(), page.corrupt());
                marked = markScheduled(c, from, page.entries(), page.earlierRun());
            }
            c.commit();
            if (page.lastEarlier() != null) {
                ownMarks.advance(HandOutMarks.service(application, serviceKey), page.lastEarlier());
            }
            out.addAll(marked);
            if (page.rows() < want) {
                return null;
            }
            after = page.last();
        }
        return after;
    }

    private static void rollbackQuietly(Connection c, SQLException failure) {
        try {
            c.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * Marks {@code entries} (one page of {@code from}'s, in claim order) scheduled by this run, and this instance's:
     * on PostgreSQL with one statement ({@link #markPage}; there a dead owner's page is read and adopted at once by
     * {@link #adoptTaking} instead), elsewhere with one per entry in primary-key order, so
     * that consecutive updates fall on the same B-tree pages, which H2 rewrites once instead of once per entry. A dead
     * owner's entry is taken only while its lease is still expired.
     *
     * <p>An entry already due is marked by the statement that also fences its next retry, so that its first send
     * needs no write of its own. With a lease, that is once the page's transaction found this instance's lease to
     * outlast the database's now by the fence's margin: only this instance shortens its lease (giving it up when it
     * closes), so no other instance can adopt what the page marks before the margin has passed, which is what a
     * fence's verdict promises. Otherwise (the lease too short) the page is marked without a fence. A count the
     * driver does not report ({@code SUCCESS_NO_INFO}) is taken as marked, not fenced: the send's own fence decides
     * (it records the same retry).
     *
     * @param unwritten which of {@code entries} (by index) an earlier run of this instance left, which a journal
     *                  without a lease hands out by its mark ({@link HandOutMarks}) instead of a write: taken, none
     *                  fenced
     * @return the entries marked, in claim order, those fenced {@link RetryJournalEntry#fenced()}
     */
    private List<RetryJournalEntry> markScheduled(Connection c, Source from, List<RetryJournalEntry> entries,
                                                  BitSet unwritten) throws SQLException {
        if (entries.isEmpty() || unwritten.cardinality() == entries.size()) {
            return entries;
        }
        long now = System.currentTimeMillis();
        List<RetryJournalEntry> written = new ArrayList<>(entries.size() - unwritten.cardinality());
        List<RetryJournalEntry> due = new ArrayList<>();
        List<RetryJournalEntry> plain = new ArrayList<>();
        for (int i = unwritten.nextClearBit(0); i < entries.size(); i = unwritten.nextClearBit(i + 1)) {
            RetryJournalEntry e = entries.get(i);
            written.add(e);
            (e.dueEpochMillis() <= now ? due : plain).add(e);
        }
        if (!due.isEmpty() && lease != null && !(lease.held() && leaseLasts(c))) {
            plain.addAll(due);
            due.clear();
        }
        // each key taken, with whether its retry was surely fenced
        Map<CallKey, Boolean> taken = new HashMap<>();
        if (!sql.dialect.keyArrays()) {
            mark(c, from, from.markFenced(), due, taken, true);
            mark(c, from, from.mark(), plain, taken, false);
        } else if (!written.isEmpty()) {
            markPage(c, written, now, !due.isEmpty(), taken);
        }
        List<RetryJournalEntry> mine = new ArrayList<>(entries.size());
        for (int i = 0; i < entries.size(); i++) {
            RetryJournalEntry e = entries.get(i);
            Boolean fenced = unwritten.get(i) ? Boolean.FALSE : taken.get(e.key());
            if (fenced != null) {
                mine.add(fenced ? e.asFenced() : e);
            }
        }
        return mine;
    }

    /**
     * Marks a page of this instance's own entries as {@link #markScheduled} does, in one statement ({@link
     * JournalSql#unparkPage}, the page's keys as arrays), fencing the entries due by {@code now} if {@code fence},
     * and puts the keys it took into {@code taken}, each with whether it was fenced.
     */
    private void markPage(Connection c, List<RetryJournalEntry> entries, long now, boolean fence,
                          Map<CallKey, Boolean> taken) throws SQLException {
        String[] methods = new String[entries.size()];
        String[] retryIds = new String[entries.size()];
        for (int i = 0; i < methods.length; i++) {
            methods[i] = entries.get(i).method();
            retryIds[i] = entries.get(i).retryId();
        }
        RetryJournalEntry first = entries.get(0);
        try (PreparedStatement st = prepare(c, sql.unparkPage)) {
            st.setLong(1, now);
            st.setInt(2, fence ? 1 : 0);
            st.setString(3, runId);
            st.setString(4, first.application());
            st.setString(5, first.serviceKey());
            st.setArray(6, c.createArrayOf("varchar", methods));
            st.setArray(7, c.createArrayOf("varchar", retryIds));
            st.setString(8, owner());
            st.setString(9, runId);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    taken.put(new CallKey(first.application(), first.serviceKey(), rs.getString(1), rs.getString(2)),
                            fence && rs.getLong(3) <= now);
                }
            }
        }
    }

    /**
     * Reads, locks and adopts one page of {@code dead}'s entries in one statement ({@link JournalSql#adoptTaking},
     * PostgreSQL), as {@link #markScheduled} marks a page: an entry due by now is fenced as well, if the lease
     * allows it (with a lease, once this transaction found it to outlast the database's now by the fence's margin).
     *
     * @return the page of the calls adopted: all the page's, or none if {@code dead} renewed its lease meanwhile;
     *     its corrupt rows are this instance's to quarantine
     */
    private ParkedPage adoptTaking(Connection c, String dead, String application, String serviceKey,
                                   ParkedPage.Key after, int want) throws SQLException {
        long now = System.currentTimeMillis();
        boolean fence = lease == null || lease.held() && leaseLasts(c);
        if (takenLeases != null) {
            takenLeases.lockLease(c, dead); // a survivor's takeover of dead now waits for this page, or skips it
        }
        ParkedPage page;
        try (PreparedStatement st = prepare(c, sql.adoptTaking)) {
            int i = ParkedPage.bind(st, dead, ParkedPage.NO_RUN, null, application, serviceKey, after, want);
            st.setLong(i, now);
            st.setInt(i + 1, fence ? 1 : 0);
            st.setString(i + 2, owner());
            st.setString(i + 3, runId);
            st.setString(i + 4, dead);
            st.setString(i + 5, dead);
            try (ResultSet rs = st.executeQuery()) {
                page = ParkedPage.read(rs, runId, null, after, want);
            }
        }
        if (!fence) {
            return page;
        }
        List<RetryJournalEntry> entries = new ArrayList<>(page.entries().size());
        for (RetryJournalEntry e : page.entries()) {
            entries.add(e.dueEpochMillis() <= now ? e.asFenced() : e);
        }
        return new ParkedPage(entries, page.corrupt(), page.rows(), page.last(), page.earlierRun(),
                page.lastEarlier());
    }

    /** @return whether this instance's lease outlasts the database's now by the fence's margin */
    private boolean leaseLasts(Connection c) throws SQLException {
        try (PreparedStatement st = prepare(c, sql.leaseLasts)) {
            st.setString(1, owner());
            int i = 2;
            if (sql.takesOver) {
                st.setString(i++, runId);
            }
            st.setLong(i, lease.fenceMarginMillis());
            try (ResultSet rs = st.executeQuery()) {
                return rs.next();
            }
        }
    }

    /**
     * Runs {@code text} ({@code from}'s mark, or its mark that fences) for each of {@code rows} in one batch, in
     * primary-key order, and puts the keys of the rows it took into {@code taken}: fenced if {@code fences} and the
     * driver reported the row's count. A row it did not take was taken by another hand-out (of this instance, or of
     * another survivor) after our SELECT.
     */
    private void mark(Connection c, Source from, String text, List<RetryJournalEntry> rows,
                      Map<CallKey, Boolean> taken, boolean fences) throws SQLException {
        if (rows.isEmpty()) {
            return;
        }
        rows.sort(Comparator.comparing(RetryJournalEntry::retryId).thenComparing(RetryJournalEntry::method));
        boolean own = from.owner().equals(owner());
        int[] counts;
        try (PreparedStatement st = prepare(c, text)) {
            for (RetryJournalEntry e : rows) {
                int i;
                if (own) {
                    st.setString(1, runId);
                    i = EntryRows.bindKey(st, 2, e.key());
                    st.setString(i, owner());
                    st.setString(i + 1, runId);
                } else {
                    st.setString(1, owner());
                    st.setString(2, runId);
                    i = EntryRows.bindKey(st, 3, e.key());
                    st.setString(i, from.owner());
                    st.setString(i + 1, from.owner());
                }
                st.addBatch();
            }
            counts = st.executeBatch();
        }
        for (int i = 0; i < counts.length; i++) {
            CallKey key = rows.get(i).key();
            if (counts[i] > 0) {
                taken.put(key, fences);
            } else if (counts[i] == java.sql.Statement.SUCCESS_NO_INFO) {
                taken.put(key, false); // not known to be fenced: the send's own fence decides
            }
        }
    }

    private void quarantine(Connection c, String rowOwner, List<ParkedPage.Corrupt> corrupt) throws SQLException {
        if (corrupt.isEmpty()) {
            return;
        }
        try (PreparedStatement st = prepare(c, sql.quarantine)) {
            for (ParkedPage.Corrupt bad : corrupt) {
                LOG.log(System.Logger.Level.ERROR, "{0}: call {1} in table {2} is corrupt and skipped (kept,"
                        + " quarantined = TRUE): {3}", storeName, bad.key(), sql.callTable, bad.reason());
                int i = EntryRows.bindKey(st, 1, bad.key());
                st.setString(i, rowOwner);
                st.addBatch();
            }
            st.executeBatch();
        }
    }

    @Override
    public String describe() {
        String failure = writer.lastFailure();
        return storeName + ", " + (lease == null ? "no lease (single process)"
                : "lease " + leaseMillis + " ms " + (lease.held() ? "held" : "LAPSED: sending nothing"))
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

        /**
         * Tables are {@code <prefix>call}, {@code <prefix>instance} and {@code <prefix>dead_letter} (default prefix
         * rpctimer_).
         */
        public Builder tablePrefix(String tablePrefix) {
            if (tablePrefix == null || !tablePrefix.matches("[A-Za-z][A-Za-z0-9_]{0,31}")) {
                throw new IllegalArgumentException("tablePrefix: " + tablePrefix
                        + " (expected: a letter, then up to 31 letters, digits or _)");
            }
            this.tablePrefix = tablePrefix;
            return this;
        }

        /** The store's name in messages (default: the JDBC URL, its secrets hidden). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * How long after the last renewal another instance may adopt this one's calls (default 30 s), by the
         * database's clock; renewed every lease/3, and no retry is sent once renewals have failed for two thirds of
         * it. {@link Duration#ZERO}: no lease, for a database only this process opens.
         */
        public Builder lease(Duration lease) {
            if (lease.isNegative() || !lease.isZero() && lease.toMillis() < 30) {
                throw new IllegalArgumentException("lease: " + lease + " (expected: 0, or >= 30 ms)");
            }
            this.leaseMillis = lease.toMillis();
            return this;
        }

        /** How long append, fence and remove wait for their commit at most (default 5 s). */
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

        /**
         * As {@link #build()}, except when the database cannot be reached now (a connection error: SQLState class 08,
         * or a connection refused, timed out or to a host that does not resolve): then a journal that is not open yet
         * and opens once the database answers (a daemon thread of its own tries every second). Until then it holds
         * nothing and no lease: every operation fails as in an outage, an append known not written. This builder must
         * not be changed after this call.
         *
         * @throws RetryJournalException    if the database answered but the journal cannot be opened on it (wrong
         *                                  credentials, no such database, no right to create the tables)
         * @throws IllegalArgumentException if the database is none of H2, PostgreSQL and MySQL
         */
        public RetryJournal buildOrOpenLater() throws RetryJournalException {
            try {
                return build();
            } catch (RetryJournalException e) {
                if (!ConnectionErrors.unreachable(e)) {
                    throw e;
                }
                return new DeferredJournal(this, e);
            } catch (RuntimeException e) {
                if (!ConnectionErrors.unreachable(e)) {
                    throw e;
                }
                // a pool that cannot start throws unchecked (HikariCP's PoolInitializationException), with the cause
                return new DeferredJournal(this, new RetryJournalException("retry journal " + displayName()
                        + ": cannot open: " + JdbcUrls.redact(e.toString()), e));
            }
        }

        /** @return the store's name in messages, its secrets hidden */
        String displayName() {
            return name != null ? JdbcUrls.redact(name) : "on " + dataSource;
        }

        long leaseMillis() {
            return leaseMillis;
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
                    JournalSql sql = new JournalSql(JournalDialect.of(c.getMetaData()), tablePrefix, leaseMillis == 0);
                    c.setAutoCommit(false);
                    sql.createSchema(c);
                    int moved = sql.migrateEarlierTables(c, tablePrefix);
                    c.commit();
                    if (moved > 0) {
                        LOG.log(System.Logger.Level.INFO, "retry journal: {0} calls moved from the tables of an"
                                + " earlier version into {1}", moved, sql.callTable);
                    }
                    return new JdbcRetryJournal(this, sql, c.getMetaData().getURL());
                } catch (SQLException e) {
                    // two instances creating the schema at once: PostgreSQL fails one CREATE ... IF NOT EXISTS
                    if (attempt == 2) {
                        throw new RetryJournalException("retry journal " + displayName() + ": cannot open: "
                                + JdbcUrls.redact(e.toString()), e);
                    }
                }
            }
        }
    }
}
