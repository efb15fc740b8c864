package io.rpctimer.journal;

import java.sql.Connection;
import java.sql.PreparedStatement;
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
    private final String owner;
    private final String storeName;
    private final long leaseMillis;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService heartbeat;
    /** Written by the heartbeat thread (and the constructor): until when, in {@link #nanoTime}, the lease is held. */
    private volatile long heldUntilNanos;
    /** Heartbeat thread only. */
    private boolean lapseReported;

    /** Registers the lease now, then renews it every lease/3 on a daemon thread. */
    LeaseKeeper(DataSource dataSource, JournalSql sql, String owner, String storeName, long leaseMillis,
                LongSupplier nanoTime) throws SQLException {
        this.dataSource = dataSource;
        this.sql = sql;
        this.owner = owner;
        this.storeName = storeName;
        this.leaseMillis = leaseMillis;
        this.nanoTime = nanoTime;
        register();
        heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rpc-timer-journal-lease-" + owner);
            t.setDaemon(true);
            return t;
        });
        long periodMillis = Math.max(1, leaseMillis / 3);
        heartbeat.scheduleWithFixedDelay(this::renew, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** @return how long the lease must outlast a fence, in milliseconds: what {@link #held()} leaves of a lease */
    long fenceMarginMillis() {
        return Math.max(1, leaseMillis * (100 - HELD_FRACTION_PERCENT) / 100);
    }

    /** @return true while the lease is surely valid by the database's clock (see the class comment) */
    boolean held() {
        return nanoTime.getAsLong() - heldUntilNanos < 0;
    }

    private void register() throws SQLException {
        long started = nanoTime.getAsLong();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement forget = c.prepareStatement(sql.forgetStaleInstances);
                 PreparedStatement delete = c.prepareStatement(sql.deleteInstance);
                 PreparedStatement insert = c.prepareStatement(sql.insertInstance)) {
                forget.setLong(1, leaseMillis);
                forget.executeUpdate();
                delete.setString(1, owner);
                delete.executeUpdate();
                insert.setString(1, owner);
                insert.setLong(2, leaseMillis);
                insert.setString(3, EntryRows.bounded(hostName(), JournalSql.SERVICE_CHARS));
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
            st.setString(2, owner);
            if (st.executeUpdate() == 0) {
                register(); // the row was removed (by hand, or as stale while this process was paused)
            } else {
                renewed(started);
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
            giveUp.setString(1, owner);
            giveUp.executeUpdate();
            forget.setString(1, owner);
            forget.executeUpdate();
        } catch (SQLException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "{0}: could not give up the lease of {1}; it runs out in at most"
                    + " {2} ms: {3}", storeName, owner, leaseMillis, e.toString());
        }
    }
}
