package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.testkit.DubboNode;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * How closely a replay keeps the pace asked for, over real Dubbo RPC with the embedded journal: {@value #RUNS} runs
 * of {@value #CALLS} dead letters replayed at {@value #PER_SECOND} a second, timed at the provider (the first
 * arrival to the last). The pace is set by due times written into the journal, one every 1/rate seconds, and held at
 * the reference's budget gate, so a replay is never faster than asked (to within the wheel's tick), even when its
 * calls reach the wheel late; it is slower when the machine is loaded, or when the reference's retry budget allows
 * fewer (here the budget is set out of the way).
 *
 * <p>It prints the achieved rates and the load, for the docs: {@code mvn -B -o -pl rpc-timer verify -Dtest=none
 * -Dit.test=DeadLetterReplayRateIT -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Timeout(600)
class DeadLetterReplayRateIT {

    private static final int CALLS = 500;
    private static final int RUNS = 3;
    private static final double PER_SECOND = 50;
    private static final String APP = "replay-rate";

    @TempDir
    Path journalDir;

    private final Arrivals arrivals = new Arrivals();
    /** Stopped in reverse order: the consumer first. */
    private final List<DubboNode> nodes = new ArrayList<>();

    /** Records when each call arrived, by {@code retry.id}; fails every call while {@code failing}. */
    static final class Arrivals implements GreetingService {
        final Map<String, Long> firstAnswerNanos = new ConcurrentHashMap<>();
        volatile boolean failing = true;

        @Override
        public String sayHello(String who) {
            return notify(who);
        }

        @Override
        public CompletableFuture<String> sayHelloAsync(String who) {
            return CompletableFuture.completedFuture(notify(who));
        }

        @Override
        public String notify(String event) {
            if (failing) {
                throw new IllegalStateException("provider down for " + event + " (test)");
            }
            String id = RpcContext.getServerAttachment().getAttachment(WheelFailback.RETRY_ID);
            firstAnswerNanos.putIfAbsent(id, System.nanoTime());
            return "ok " + event;
        }
    }

    @AfterEach
    void stop() {
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close();
        }
    }

    @Test
    void aReplayKeepsToThePaceAskedFor() throws Exception {
        Map<String, String> quiet = Map.of("service.filter", "-exception"); // no stack trace per refused call
        DubboNode p1 = DubboNode.provider("p1", GreetingExport.config(arrivals, null, quiet));
        nodes.add(p1);
        DubboNode p2 = DubboNode.provider("p2", GreetingExport.config(arrivals, null, quiet));
        nodes.add(p2);
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(5_000);
        ref.setParameters(new HashMap<>(Map.of("failback.retryon", "all", "retries", "1", "failback.delay", "20",
                "failback.maxdelay", "20", "failback.jitter", "0", "failbacktasks", "1000",
                "failback.budget.minrate", "1000000", FailbackStore.STORE, "embedded", FailbackStore.DIR,
                journalDir.toString())));
        nodes.add(DubboNode.consumer(APP, ref, p1, p2));
        GreetingService svc = ref.get();
        List<Double> rates = new ArrayList<>();
        for (int run = 0; run < RUNS; run++) {
            rates.add(run(svc, run));
        }
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        System.out.println("---8<--- replay pace\nasked " + PER_SECOND + "/s for " + CALLS + " dead letters; achieved "
                + rates.stream().map(r -> String.format(Locale.ROOT, "%.2f", r)).toList() + "/s over " + RUNS
                + " runs; " + Runtime.getRuntime().availableProcessors() + " cores, load average (1 min) " + load
                + "\n---8<---");
        for (double r : rates) {
            assertTrue(r <= PER_SECOND * 1.05, "faster than asked: " + rates);
            assertTrue(r >= PER_SECOND * 0.5, "under half the pace asked, even on a loaded machine: " + rates);
        }
    }

    /** Abandons {@value #CALLS} calls, replays them at the pace, @return the pace achieved at the provider */
    private double run(GreetingService svc, int run) throws RetryJournalException {
        arrivals.failing = true;
        arrivals.firstAnswerNanos.clear();
        RetryLifecycle lifecycle = WheelFailback.lifecycles().stream().filter(l -> l.application().equals(APP))
                .findFirst().orElseThrow();
        long buried = lifecycle.deadLetters().stats().buried();
        for (int i = 0; i < CALLS; i++) {
            RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "run" + run + "-" + i);
            svc.notify("call " + i);
        }
        await().atMost(Duration.ofSeconds(120)).until(() -> lifecycle.deadLetters().stats().buried()
                == buried + CALLS);
        arrivals.failing = false;

        ReplayResult r = lifecycle.deadLetters().replay(DeadLetterFilter.all(), PER_SECOND);
        assertEquals(CALLS, r.replayed(), r.toString());
        await().atMost(Duration.ofSeconds(120)).until(() -> arrivals.firstAnswerNanos.size() == CALLS);
        long first = arrivals.firstAnswerNanos.values().stream().mapToLong(Long::longValue).min().orElseThrow();
        long last = arrivals.firstAnswerNanos.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        return (CALLS - 1) / ((last - first) / 1e9);
    }
}
