package io.rpctimer.journal;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * This instance's lease on a shared database: a row in {@code <prefix>retry_instance} whose {@code lease_until}
 * a heartbeat moves forward every lease/3. Another instance adopts this instance's entries only once
 * {@code lease_until} is in the past by its own clock, so the hosts' clocks must agree to well within a lease.
 *
 * <p>{@link #close} gives the lease up ({@code lease_until = 0}), so other instances adopt the entries at once.
 *
 * <p>When renewals fail for a whole lease, other instances may have adopted some entries: the heartbeat logs one
 * error, keeps trying, and {@link JdbcRetryJournal#update} answers false for every adopted entry.
 *
 * <p><b>Threading:</b> one daemon heartbeat thread writes the lease; {@link #close} may be called from any thread.
 */
final class LeaseKeeper implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(LeaseKeeper.class.getName());
    /** How long {@link #close} waits for a renewal under way before it gives the lease up. */
    private static final long RELEASE_WAIT_MILLIS = 1_000;

    private final DataSource dataSource;
    private final JournalSql sql;
    private final String owner;
    private final String storeName;
    private final long leaseMillis;
    private final Clock clock;
    private final ScheduledExecutorService heartbeat;
    /** Heartbeat thread only (and the constructor before it starts). */
    private long renewedAtMillis;
    private boolean lapseReported;

    /** Registers the lease now, then renews it every lease/3 on a daemon thread. */
    LeaseKeeper(DataSource dataSource, JournalSql sql, String owner, String storeName, long leaseMillis,
                Clock clock) throws SQLException {
        this.dataSource = dataSource;
        this.sql = sql;
        this.owner = owner;
        this.storeName = storeName;
        this.leaseMillis = leaseMillis;
        this.clock = clock;
        register();
        heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rpc-timer-journal-lease-" + owner);
            t.setDaemon(true);
            return t;
        });
        long periodMillis = Math.max(1, leaseMillis / 3);
        heartbeat.scheduleWithFixedDelay(this::renew, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    private void register() throws SQLException {
        long now = clock.millis();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement delete = c.prepareStatement(sql.deleteInstance);
                 PreparedStatement insert = c.prepareStatement(sql.insertInstance())) {
                delete.setString(1, owner);
                delete.executeUpdate();
                insert.setString(1, owner);
                insert.setLong(2, now + leaseMillis);
                insert.setString(3, EntryRows.bounded(hostName(), JournalSql.NAME_CHARS));
                insert.executeUpdate();
            }
            c.commit();
        }
        renewedAtMillis = now;
    }

    private void renew() {
        long now = clock.millis();
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql.renewLease)) {
            st.setLong(1, now + leaseMillis);
            st.setString(2, owner);
            if (st.executeUpdate() == 0) {
                register(); // the row was removed by hand: take the lease again
            }
            if (lapseReported) {
                LOG.log(System.Logger.Level.WARNING, "{0}: lease of {1} renewed again", storeName, owner);
            }
            renewedAtMillis = now;
            lapseReported = false;
        } catch (SQLException | RuntimeException e) {
            if (now - renewedAtMillis > leaseMillis && !lapseReported) {
                lapseReported = true;
                LOG.log(System.Logger.Level.ERROR, "{0}: lease of {1} not renewed for {2} ms (lease {3} ms):"
                        + " other instances may adopt its entries: {4}", storeName, owner, now - renewedAtMillis,
                        leaseMillis, e.toString());
            } else {
                LOG.log(System.Logger.Level.WARNING, "{0}: lease renewal of {1} failed: {2}", storeName, owner, e);
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
     * Stops renewing and gives the lease up: a graceful stop (a deploy, a scale-down) leaves entries that another
     * instance of the application can adopt at its next claim, not a lease later. If the database cannot be reached,
     * the lease runs out by itself.
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
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql.renewLease)) {
            st.setLong(1, 0); // expired since 1970: every other instance sees it as gone
            st.setString(2, owner);
            st.executeUpdate();
        } catch (SQLException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "{0}: could not give up the lease of {1}; it runs out in at most"
                    + " {2} ms: {3}", storeName, owner, leaseMillis, e.toString());
        }
    }
}
