package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.testkit.DubboNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.dubbo.config.ReferenceConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A graceful stop with an embedded journal hands the pending calls over to it ({@code HANDED_OVER} =
 * persisted), and the next start of the same application, with the same directory, resumes and delivers every one of
 * them with its original {@code retry.id}. Real Dubbo RPC on 127.0.0.1; the providers fail every call (a business
 * failure, retried with {@code failback.retryon=all}) until they are told to answer.
 */
@org.junit.jupiter.api.Timeout(120)
class DurableResumeIT {

    private static final int CALLS = 20;
    private static final String APPLICATION = "resume-app";

    @TempDir
    Path journalDir;

    private final ScriptedGreetingService s1 = new ScriptedGreetingService("p1");
    private final ScriptedGreetingService s2 = new ScriptedGreetingService("p2");
    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();
    private final RetryListener listener = events::add;
    private DubboNode p1;
    private DubboNode p2;
    private DubboNode consumer;

    @BeforeEach
    void start() {
        p1 = DubboNode.provider("p1", GreetingService.class, s1);
        p2 = DubboNode.provider("p2", GreetingService.class, s2);
        WheelFailback.addListener(listener);
    }

    @AfterEach
    void stop() {
        if (consumer != null) {
            consumer.close();
        }
        p1.close();
        p2.close();
        WheelFailback.removeListener(listener);
    }

    private GreetingService connect(Map<String, String> store) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(1_000);
        Map<String, String> params = new HashMap<>(store);
        params.put("failback.retryon", "all");
        params.put("failback.delay", "500");
        params.put("failback.maxdelay", "500");
        params.put("failback.jitter", "0");
        params.put("retries", "1000");
        ref.setParameters(params);
        consumer = DubboNode.consumer(APPLICATION, ref, p1, p2);
        return ref.get();
    }

    private Set<String> ids(RetryEvent.Type type) {
        return events.stream().filter(e -> e.type() == type).map(RetryEvent::retryId).collect(Collectors.toSet());
    }

    @Test
    void callsHandedOverAtAGracefulStopAreResumedAndDeliveredAtTheNextStart() {
        failBackStopAndResume(Map.of(FailbackStore.STORE, "embedded", FailbackStore.DIR, journalDir.toString()),
                Duration.ofSeconds(30));
    }

    /**
     * The same on a database given as a {@link javax.sql.DataSource}: the next process has another owner id, so it
     * adopts the entries once the stopped one's lease (30 s) has expired.
     */
    @Test
    void callsKeptInADataSourceAreAdoptedByTheNextStartAfterTheLease() {
        org.h2.jdbcx.JdbcDataSource db = new org.h2.jdbcx.JdbcDataSource();
        db.setURL("jdbc:h2:mem:resume-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
        WheelFailback.useJournalDataSource(APPLICATION, db);
        failBackStopAndResume(Map.of(), Duration.ofSeconds(90));
    }

    private void failBackStopAndResume(Map<String, String> store, Duration deliveryWithin) {
        s1.mode = ScriptedGreetingService.Mode.FAIL;
        s2.mode = ScriptedGreetingService.Mode.FAIL;
        GreetingService svc = connect(store);
        for (int i = 0; i < CALLS; i++) {
            assertNull(svc.notify("order-" + i), "failback: the caller gets the empty result");
        }
        Set<String> failed = events.stream().filter(e -> e.type() == RetryEvent.Type.SCHEDULED
                && e.attempt() == 1).map(RetryEvent::retryId).collect(Collectors.toSet());
        assertEquals(CALLS, failed.size());
        assertTrue(events.stream().allMatch(e -> APPLICATION.equals(e.application())), "events carry the app");

        consumer.close(); // graceful: every pending call is persisted
        consumer = null;
        // handed over by the application's close, or by the sweep if it found the reference destroyed first (its
        // hand-over runs on the lifecycle's executor, within about a second)
        await().atMost(Duration.ofSeconds(10)).until(() -> ids(RetryEvent.Type.HANDED_OVER).size() == CALLS);
        assertEquals(failed, ids(RetryEvent.Type.HANDED_OVER));
        assertTrue(ids(RetryEvent.Type.DELIVERED).isEmpty());

        s1.releaseHung();
        s2.releaseHung(); // the providers answer from now on
        events.clear();
        connect(store);
        await().atMost(deliveryWithin).until(() -> ids(RetryEvent.Type.DELIVERED).size() == CALLS);
        assertEquals(failed, ids(RetryEvent.Type.DELIVERED), "every call, with its original retry.id");
        Set<String> answered = new java.util.HashSet<>();
        for (ScriptedGreetingService s : List.of(s1, s2)) {
            s.served.stream().filter(ScriptedGreetingService.Served::answered)
                    .forEach(served -> answered.add(served.retryId()));
        }
        assertEquals(failed, answered, "the providers saw the original retry.ids");
        assertTrue(WheelFailback.lifecycles().stream().anyMatch(l -> l.application().equals(APPLICATION)
                && l.state().resumed() == CALLS), "resumed: " + WheelFailback.lifecycles());
    }
}
