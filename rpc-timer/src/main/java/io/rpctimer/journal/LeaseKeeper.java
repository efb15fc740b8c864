package io.rpctimer.journal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * This instance's lease on a shared database: a row in {@code <prefix>instance} whose {@code lease_until} a heartbeat
 * moves forward every lease/3. The database computes {@code lease_until} from its own clock, and every instance judges
 * leases by that clock too (adoption, fencing), so the hosts' clocks play no part.
 *
 * <h3>When the lease may lapse</h3>
 * A renewal sent at time t (this host's monotonic clock) makes the lease last until at least t + lease by the
 * database's clock, which runs at the same rate. So the instance knows, without asking the database, until when its
 * lease is surely valid: {@link #held()} is true until {@value #HELD_FRACTION_PERCENT}% of a lease after the start of
 * the last renewal that succeeded. Past it (renewals failed for most of a lease, or the process was paused) the
 * instance sends nothing until a renewal succeeds; by then other instances may have adopted some of its calls, which
 * each send's fence finds out.
 *
 * <h3>A lease taken over</h3>
 * With {@link JournalSql#takesOver} (PostgreSQL) the lease row names the run that holds it ({@code holder}), and a
 * survivor may take over the row of an instance whose lease expired, with its calls: the heartbeat then renews, in one
 * statement, every row this run holds. An instance paused for longer than its lease may find, when it wakes, its own
 * row held by another run: its calls are that run's now. It then registers a new owner id ({@code <owner>~<n>}) and
 * goes on under it; until then the journal refuses its appends, and its fences fail.
 *
 * <p>{@link #close} gives the lease up ({@code lease_until = 0}), so other instances adopt the calls at once, and
 * removes the row when the instance owns no call. At registration, rows of instances whose lease expired more than
 * a lease ago and that own no call are removed, so the table holds about one row per live instance.
 *
 * <p><b>Threading:</b> one daemon heartbeat thread writes the lease; {@link #held()} and {@link #close} may be called
 * from any thread.
 */
final class LeaseKeeper implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(LeaseKeeper.class.getName());
    /** How long {@link #close} waits for a renewal under way before it gives the lease up. */
    private static final long RELEASE_WAIT_MILLIS = 1_000;
    /** {@link #held()} is true for this share of a lease after the start of the last successful renewal. */
    static final int HELD_FRACTION_PERCENT = 66;

    private final DataSource dataSource;
    private final JournalSql sql;
    private final String baseOwner;
    private final String runId;
    private final String storeName;
    private final long leaseMillis;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService heartbeat;
    /** Written by the heartbeat thread (and the constructor): until when, in {@link #nanoTime}, the lease is held. */
    private volatile long heldUntilNanos;
    /** This instance's owner id now: written by the heartbeat thread (and the constructor) when a takeover moved it. */
    private volatile String owner;
    /** Heartbeat thread only. */
    private boolean lapseReported;
    /** Heartbeat thread only: how many times this instance's lease was taken over. */
    private int takenOver;

    /** Registers the lease now, then renews it every lease/3 on a daemon thread. */
    LeaseKeeper(DataSource dataSource, JournalSql sql, String owner, String runId, String storeName, long leaseMillis,
                LongSupplier nanoTime) throws SQLException {
        this.dataSource = dataSource;
        this.sql = sql;
        this.baseOwner = owner;
        this.owner = owner;
        this.runId = runId;
        this.storeName = storeName;
        this.leaseMillis = leaseMillis;
        this.nanoTime = nanoTime;
        register(owner);
        heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rpc-timer-journal-lease-" + owner);
            t.setDaemon(true);
            return t;
        });
        long periodMillis = Math.max(1, leaseMillis / 3);
        heartbeat.scheduleWithFixedDelay(this::renew, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** @return this instance's owner id now: the one it was built with, unless its lease was taken over */
    String owner() {
        return owner;
    }

    /** @return how long the lease must outlast a fence, in milliseconds: what {@link #held()} leaves of a lease */
    long fenceMarginMillis() {
        return Math.max(1, leaseMillis * (100 - HELD_FRACTION_PERCENT) / 100);
    }

    /** @return true while the lease is surely valid by the database's clock (see the class comment) */
    boolean held() {
        return nanoTime.getAsLong() - heldUntilNanos < 0;
    }

    /** Registers {@code id}'s lease row, held by this run, replacing a row of the same id. */
    private void register(String id) throws SQLException {
        long started = nanoTime.getAsLong();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement forget = c.prepareStatement(sql.forgetStaleInstances);
                 PreparedStatement delete = c.prepareStatement(sql.deleteInstance);
                 PreparedStatement insert = c.prepareStatement(sql.insertInstance)) {
                forget.setLong(1, leaseMillis);
                forget.executeUpdate();
                delete.setString(1, id);
                delete.executeUpdate();
                insert.setString(1, id);
                insert.setLong(2, leaseMillis);
                insert.setString(3, EntryRows.bounded(hostName(), JournalSql.SERVICE_CHARS));
                insert.setString(4, runId);
                insert.executeUpdate();
            }
            c.commit();
        }
        renewed(started);
    }

    private void renewed(long startedNanos) {
        heldUntilNanos = startedNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis) * HELD_FRACTION_PERCENT / 100;
    }

    private void renew() {
        long started = nanoTime.getAsLong();
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql.renewLease)) {
            st.setLong(1, leaseMillis);
            st.setString(2, sql.takesOver ? runId : owner);
            if (sql.takesOver ? renewedOwnRow(st) : st.executeUpdate() > 0) {
                renewed(started);
            } else if (sql.takesOver && heldByAnotherRun(c)) {
                String next = baseOwner + "~" + (takenOver + 1);
                register(next); // before the journal writes under it: a row without a lease row could be adopted
                takenOver++;
                LOG.log(System.Logger.Level.WARNING, "{0}: the lease of {1} was taken over by another instance while"
                        + " this one was paused, and its calls with it; this instance goes on as {2}", storeName,
                        owner, next);
                owner = next;
            } else {
                register(owner); // the row was removed (by hand, or as stale while this process was paused)
            }
            if (lapseReported) {
                LOG.log(System.Logger.Level.WARNING, "{0}: lease of {1} renewed again; retries are sent again",
                        storeName, owner);
            }
            lapseReported = false;
        } catch (SQLException | RuntimeException e) {
            if (!held() && !lapseReported) {
                lapseReported = true;
                LOG.log(System.Logger.Level.ERROR, "{0}: lease of {1} not renewed for most of a lease ({2} ms):"
                        + " this instance sends no retry until it is, and other instances may adopt its calls: {3}",
                        storeName, owner, leaseMillis, e.toString());
            } else {
                LOG.log(System.Logger.Level.WARNING, "{0}: lease renewal of {1} failed: {2}", storeName, owner,
                        e.toString());
            }
        }
    }

    /** @return whether the renewal (its owners coming back) renewed this instance's own row */
    private boolean renewedOwnRow(PreparedStatement renew) throws SQLException {
        try (ResultSet rs = renew.executeQuery()) {
            while (rs.next()) {
                if (owner.equals(rs.getString(1))) {
                    return true;
                }
            }
            return false;
        }
    }

    /** @return whether this instance's row is there, held by another run */
    private boolean heldByAnotherRun(Connection c) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(sql.leaseHolder)) {
            st.setString(1, owner);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() && !runId.equals(rs.getString(1));
            }
        }
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName() + "/" + ProcessHandle.current().pid();
        } catch (java.net.UnknownHostException e) {
            return "pid " + ProcessHandle.current().pid();
        }
    }

    /**
     * Stops renewing and gives the lease up: a graceful stop (a deploy, a scale-down) leaves calls that another
     * instance of the application can adopt at its next claim, not a lease later; an instance that owns no call
     * leaves no row. If the database cannot be reached, the lease runs out by itself.
     */
    @Override
    public void close() {
        heartbeat.shutdownNow();
        try {
            if (!heartbeat.awaitTermination(RELEASE_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                LOG.log(System.Logger.Level.WARNING, "{0}: a lease renewal of {1} is still running; the lease may"
                        + " last until {2} ms after its renewal", storeName, owner, leaseMillis);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        heldUntilNanos = nanoTime.getAsLong();
        try (Connection c = dataSource.getConnection();
             PreparedStatement giveUp = c.prepareStatement(sql.giveUpLease);
             PreparedStatement forget = c.prepareStatement(sql.forgetInstanceIfIdle)) {
            giveUp.setString(1, sql.takesOver ? runId : owner);
            giveUp.executeUpdate();
            forget.setString(1, owner);
            forget.executeUpdate();
        } catch (SQLException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "{0}: could not give up the lease of {1}; it runs out in at most"
                    + " {2} ms: {3}", storeName, owner, leaseMillis, e.toString());
        }
    }
}
