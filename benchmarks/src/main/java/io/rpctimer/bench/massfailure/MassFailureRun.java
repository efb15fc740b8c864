package io.rpctimer.bench.massfailure;

import io.rpctimer.bench.failback.DubboFailbackTimer;
import io.rpctimer.bench.failback.TimerProbe;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.support.DubboNode;
import io.rpctimer.demo.provider.support.EmbeddedZooKeeper;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.dubbo.WheelFailbackCluster;
import io.rpctimer.retry.InMemoryRetryStore;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcException;

/**
 * One mass-failure run on one cluster, over real components: a fresh embedded ZooKeeper, two {@link DemoProvider}s
 * and a consumer on the cluster. Both providers fail every call at the RPC level (the outage: connections stay up,
 * as when a dependency behind the providers is down); {@code calls} sync calls go out from
 * {@code senderThreads} threads as fast as they fail, each failed back onto the cluster's retry timer. Once all are
 * sent and pending, the run collects garbage and measures the heap against the baseline taken before the first call
 * (the call arguments are built beforehand and held throughout, so the difference is what the pending retries cost
 * beyond their arguments). Then the providers recover, and the run waits (bounded) until every call is delivered.
 *
 * <p>The consumer has a cap that admits every call ({@code failbacktasks} = 2 × calls), {@code retries}
 * and the first retry delay of the {@link Settings} (Dubbo's failback retries every 5 s whatever the delay), and the
 * extra reference parameters given (a durable store or a retry budget: {@code --param key=value}).
 *
 * <p>Tick lag is the {@link TimerProbe}'s worst probe lateness (a zero-delay timeout every 100 ms on the cluster's
 * timer), taken in two windows that leave out the forced GC of the heap measurement: sending, then recovery.
 *
 * <p><b>Threading:</b> {@link #run} is called from one thread at a time (Dubbo's listeners and retry store are
 * JVM-wide); it starts and stops its own threads.
 */
final class MassFailureRun {

    /** Dubbo's failback cluster. */
    static final String DUBBO = "failback";
    /** rpc-timer's cluster. */
    static final String WHEEL = WheelFailbackCluster.NAME;
    private static final long HEAP_SAMPLE_MILLIS = 10;

    /**
     * @param calls            calls sent during the outage
     * @param senderThreads    sync caller threads
     * @param retries          {@code retries} of both clusters: enough that no call runs out during the outage
     * @param firstDelayMillis {@code failback.delay} (wheelfailback; Dubbo's failback has a fixed 5 s period)
     * @param recoveryLimit    the longest wait for delivery after the providers recover
     * @param params           extra reference parameters, e.g. a durable store or a retry budget
     */
    record Settings(int calls, int senderThreads, int retries, long firstDelayMillis, Duration recoveryLimit,
                    Map<String, String> params) {
        Settings {
            if (calls < 1) {
                throw new IllegalArgumentException("calls: " + calls + " (expected: >= 1)");
            }
            if (senderThreads < 1) {
                throw new IllegalArgumentException("senderThreads: " + senderThreads + " (expected: >= 1)");
            }
            params = Map.copyOf(params);
        }
    }

    private MassFailureRun() {
    }

    /** @return every figure of the run, for JSON */
    static Map<String, Object> run(String cluster, Settings s) throws Exception {
        if (!DUBBO.equals(cluster) && !WHEEL.equals(cluster)) {
            throw new IllegalArgumentException("cluster: '" + cluster + "' (expected: " + DUBBO + " or " + WHEEL + ")");
        }
        boolean wheel = WHEEL.equals(cluster);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("cluster", cluster);
        String[] ids = new String[s.calls()];
        String[] messages = new String[s.calls()];
        for (int i = 0; i < s.calls(); i++) {
            ids[i] = ProviderTally.callId(i);
            messages[i] = "message " + i;
        }
        RetryStore previousStore = WheelFailback.retryStore();
        InMemoryRetryStore store = new InMemoryRetryStore();
        EmbeddedZooKeeper zk = null;
        List<DemoProvider> providers = new ArrayList<>();
        DubboNode consumer = null;
        TimerProbe probe = null;
        Optional<DubboFailbackTimer> dubboTimer = Optional.empty();
        HeapSampler heap = null;
        WheelFailback.setRetryStore(store);
        try {
            zk = EmbeddedZooKeeper.start();
            String registry = zk.registryAddress();
            CompletableFuture<DemoProvider> p1 = CompletableFuture.supplyAsync(() -> DemoProvider.start("p1",
                    registry, 0));
            CompletableFuture<DemoProvider> p2 = CompletableFuture.supplyAsync(() -> DemoProvider.start("p2",
                    registry, 0));
            providers.add(p1.join());
            providers.add(p2.join());
            ReferenceConfig<NotificationService> ref = reference(cluster, s);
            consumer = DubboNode.create("massfailure-" + cluster, registry).reference(ref).start();
            NotificationService service = ref.get();
            long origin = System.nanoTime();
            ProviderTally tally = new ProviderTally(s.calls(), origin);
            providers.forEach(p -> p.ledger().addListener(tally));
            providers.forEach(p -> p.faults().errorRate(1.0));
            RetryStats before = WheelFailback.stats();
            r.put("heapBaselineBytes", usedAfterGc());
            heap = HeapSampler.start(HEAP_SAMPLE_MILLIS);

            dubboTimer = wheel ? Optional.empty() : DubboFailbackTimer.find(service); // its timer comes later
            probe = probe(wheel, dubboTimer);
            Senders senders = send(service, ids, messages, s.senderThreads());
            senders.await();
            r.put("sendSeconds", (System.nanoTime() - origin) / 1e9);
            r.put("callerSawReply", senders.replies.sum());
            r.put("callerSawFailedBack", senders.failedBack.sum());
            r.put("callerSawError", senders.errors.sum());
            long pending = wheel ? WheelFailback.stats().pending() - before.pending()
                    : probe instanceof TimerProbe.Dubbo d ? d.retriesPending() : 0;
            r.put("tickLagWhileSendingMs", probe == null ? Double.NaN : probe.worstLatenessMillis());
            closeQuietly(probe);
            probe = null;

            long used = usedAfterGc();
            r.put("pendingAtPeak", pending);
            r.put("heapWithPendingBytes", used);
            r.put("heapPerPendingRetryBytes", pending > 0
                    ? (used - ((Number) r.get("heapBaselineBytes")).longValue()) / (double) pending : Double.NaN);
            probe = probe(wheel, dubboTimer);

            long recovery = System.nanoTime();
            r.put("recoveryAtSeconds", (recovery - origin) / 1e9);
            providers.forEach(p -> p.faults().clear());
            boolean all = awaitDelivered(tally, s.calls(), recovery + s.recoveryLimit().toNanos());
            long last = tally.lastDeliveryNanos();
            r.put("allDelivered", all);
            r.put("lastDeliveryAfterRecoverySeconds", last == Long.MIN_VALUE ? Double.NaN : (last - recovery) / 1e9);
            r.put("lastDeliveryAfterFirstSendSeconds", last == Long.MIN_VALUE ? Double.NaN : (last - origin) / 1e9);
            r.put("tickLagDuringRecoveryMs", probe == null ? Double.NaN : probe.worstLatenessMillis());
            r.put("tickLagWorstMs", Math.max(num(r, "tickLagWhileSendingMs"), num(r, "tickLagDuringRecoveryMs")));
            r.put("probesCounted", probe == null ? 0 : probe.probesCounted());
            closeQuietly(probe);
            probe = null;
            r.put("heapPeakBytes", heap.peakBytes());
            r.put("heapMaxBytes", Runtime.getRuntime().maxMemory());
            account(r, s, tally, senders, wheel, before);
            if (wheel) {
                WheelFailback.wheelStats().ifPresent(t -> r.put("wheelMaxTickLagMsWholeRun", t.maxTickLagNanos() / 1e6));
            }
        } finally {
            closeQuietly(probe);
            if (heap != null) {
                heap.close();
            }
            if (consumer != null) {
                consumer.close();
            }
            dubboTimer.ifPresent(DubboFailbackTimer::stopTimer); // Dubbo never stops it
            providers.forEach(DemoProvider::stop);
            if (zk != null) {
                zk.close();
            }
            WheelFailback.setRetryStore(previousStore);
        }
        r.put("handedOverToStoreAtClose", store.size());
        return r;
    }

    private static ReferenceConfig<NotificationService> reference(String cluster, Settings s) {
        ReferenceConfig<NotificationService> ref = new ReferenceConfig<>();
        ref.setInterface(NotificationService.class);
        ref.setCluster(cluster);
        ref.setTimeout(1_000);
        ref.setCheck(false);
        Map<String, String> params = new LinkedHashMap<>();
        params.put("failbacktasks", String.valueOf(2L * s.calls()));
        params.put("retries", String.valueOf(s.retries()));
        params.put("failback.delay", String.valueOf(s.firstDelayMillis()));
        params.putAll(s.params());
        ref.setParameters(params);
        return ref;
    }

    /**
     * Lost calls: not delivered when the run ended. Visible: the caller saw an exception, or (wheelfailback) the
     * cluster reported the call abandoned, rejected or handed over. Dubbo's failback tells nobody when it gives a
     * retry up (one log line), so an undelivered call there is lost silently unless its caller saw an error.
     */
    private static void account(Map<String, Object> r, Settings s, ProviderTally tally, Senders senders,
                                boolean wheel, RetryStats before) {
        long delivered = tally.delivered();
        long undelivered = s.calls() - delivered;
        long visible = senders.errors.sum();
        if (wheel) {
            RetryStats after = WheelFailback.stats();
            visible += (after.abandoned() - before.abandoned()) + (after.rejected() - before.rejected())
                    + (after.handedOver() - before.handedOver());
            r.put("wheelRetryStats", Map.of("failedCalls", after.failedCalls() - before.failedCalls(),
                    "delivered", after.delivered() - before.delivered(),
                    "abandoned", after.abandoned() - before.abandoned(),
                    "rejected", after.rejected() - before.rejected(),
                    "retriesSent", after.retriesSent() - before.retriesSent()));
        }
        r.put("calls", s.calls());
        r.put("delivered", delivered);
        r.put("lost", undelivered);
        r.put("lostVisibly", Math.min(undelivered, visible));
        r.put("lostSilently", Math.max(0, undelivered - visible));
        r.put("duplicates", tally.duplicates());
        r.put("attemptsAtProviders", tally.arrivals());
        r.put("peakRetriesPerSecondAtProviders", tally.peakRetriesPerSecond());
        r.put("retriesPerSecondAtProviders", tally.retriesPerSecond());
    }

    /** @return a probe of the cluster's retry timer: the shared wheel, or Dubbo's failback timer if found */
    private static TimerProbe probe(boolean wheel, Optional<DubboFailbackTimer> dubbo) {
        return wheel ? TimerProbe.wheel() : dubbo.map(TimerProbe::dubbo).orElse(null);
    }

    private static boolean awaitDelivered(ProviderTally tally, int calls, long deadlineNanos) {
        while (tally.delivered() < calls) {
            if (System.nanoTime() - deadlineNanos >= 0) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        return true;
    }

    /** Sync callers; every outcome counted. */
    private static final class Senders {
        final LongAdder replies = new LongAdder();
        final LongAdder failedBack = new LongAdder();
        final LongAdder errors = new LongAdder();
        final List<Future<?>> futures = new ArrayList<>();
        ExecutorService pool;

        void await() throws Exception {
            for (Future<?> f : futures) {
                f.get();
            }
            pool.shutdown();
        }
    }

    private static Senders send(NotificationService service, String[] ids, String[] messages, int threads) {
        Senders s = new Senders();
        AtomicInteger next = new AtomicInteger();
        s.pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "massfailure-caller");
            t.setDaemon(true);
            return t;
        });
        for (int k = 0; k < threads; k++) {
            s.futures.add(s.pool.submit(() -> {
                int i;
                while ((i = next.getAndIncrement()) < ids.length) {
                    try {
                        if (service.send(ids[i], messages[i]) == null) {
                            s.failedBack.increment(); // a failback cluster answers a failed call with null
                        } else {
                            s.replies.increment();
                        }
                    } catch (RpcException e) {
                        s.errors.increment();
                    }
                }
            }));
        }
        return s;
    }

    private static long usedAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    private static void closeQuietly(TimerProbe probe) {
        if (probe != null) {
            probe.close();
        }
    }

    static double num(Map<String, Object> r, String key) {
        Object v = r.get(key);
        return v instanceof Number n ? n.doubleValue() : Double.NaN;
    }
}
