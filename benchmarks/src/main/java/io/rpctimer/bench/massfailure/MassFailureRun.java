package io.rpctimer.bench.massfailure;

import io.rpctimer.bench.TwoProviders;
import io.rpctimer.bench.failback.DubboFailbackTimer;
import io.rpctimer.bench.failback.TimerProbe;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.dubbo.WheelFailbackCluster;
import io.rpctimer.retry.InMemoryRetryStore;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStore;
import io.rpctimer.testkit.DubboNode;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import javax.management.ObjectName;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcException;

/**
 * One mass-failure run on one cluster, over real components: a fresh embedded ZooKeeper, two {@link DemoProvider}s
 * and a consumer on the cluster. Both providers fail every call at the RPC level (the outage: connections stay up,
 * as when a dependency behind the providers is down); {@code calls} sync calls go out from
 * {@code senderThreads} threads as fast as they fail, each failed back onto the cluster's retry timer: first a tenth
 * of them, then the rest, each window followed by a GC and a heap reading. The heap per pending retry is the slope
 * between the two readings, so what the first window set up once cancels out; the call arguments are built before
 * the run and held throughout, so the figure is what a pending retry costs beyond its arguments. Then the providers
 * recover, and the run waits (bounded) until every call is delivered.
 *
 * <p>The consumer has a cap that admits every call ({@code failbacktasks} = 2 × calls), {@code retries}
 * and the first retry delay of the {@link Settings} (Dubbo's failback retries every 5 s whatever the delay), and the
 * extra reference parameters given (a durable store or a retry budget: {@code --param key=value}). Without them
 * the consumer keeps its retries in memory with no budget, as Dubbo's failback does; {@code failback.store=embedded}
 * without a {@code failback.store.dir} gets a fresh temporary directory.
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
    /** The first window sends this fraction (1/n) of the calls; the heap is measured after it and after the rest. */
    private static final int WARMUP_FRACTION = 10;

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
        TwoProviders rig = null;
        DubboNode consumer = null;
        Optional<DubboFailbackTimer> dubboTimer = Optional.empty();
        HeapSampler heap = null;
        Senders senders = null;
        WheelFailback.setRetryStore(store);
        try {
            rig = TwoProviders.start();
            List<DemoProvider> providers = rig.providers();
            String registry = rig.registry();
            ReferenceConfig<NotificationService> ref = reference(cluster, s);
            consumer = DubboNode.create("massfailure-" + cluster, registry).reference(ref).start();
            NotificationService service = ref.get();
            long origin = System.nanoTime();
            ProviderTally tally = new ProviderTally(s.calls(), origin);
            providers.forEach(p -> p.ledger().addListener(tally));
            providers.forEach(p -> p.faults().errorRate(1.0));
            RetryStats before = WheelFailback.stats();
            heap = HeapSampler.start(HEAP_SAMPLE_MILLIS);
            dubboTimer = wheel ? Optional.empty() : DubboFailbackTimer.find(service); // its timer comes later
            senders = new Senders(service, ids, messages, s.senderThreads());
            outage(r, senders, s.calls(), wheel, before, dubboTimer, tally, origin);
            recovery(r, providers, tally, s, wheel, dubboTimer, origin);
            r.put("heapPeakBytes", heap.peakBytes());
            r.put("heapMaxBytes", Runtime.getRuntime().maxMemory());
            account(r, s, tally, senders, wheel, before);
            if (wheel) {
                WheelFailback.wheelStats()
                        .ifPresent(t -> r.put("wheelMaxTickLagMsWholeRun", t.maxTickLagNanos() / 1e6));
            }
        } finally {
            if (senders != null) {
                senders.close();
            }
            if (heap != null) {
                heap.close();
            }
            if (consumer != null) {
                consumer.close();
            }
            dubboTimer.ifPresent(DubboFailbackTimer::stopTimer); // Dubbo never stops it
            if (rig != null) {
                rig.close();
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
        // no retry budget and no journal unless --param sets them: Dubbo's failback has neither, and keeps its
        // retries in memory (the library's default store is the embedded journal)
        params.put("failback.budget.minrate", "1000000");
        params.put("failback.store", "memory");
        params.putAll(s.params());
        if ("embedded".equals(params.get("failback.store")) && !params.containsKey("failback.store.dir")) {
            // a fresh journal per run: entries an earlier run left behind would be resumed into this one
            params.put("failback.store.dir", freshDirectory());
        }
        ref.setParameters(params);
        return ref;
    }

    private static String freshDirectory() {
        try {
            return Files.createTempDirectory("massfailure-journal").toString();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot create a journal directory", e);
        }
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

    /** Sends every call in two windows and records what the outage cost: sending time, pending, heap, tick lag. */
    private static void outage(Map<String, Object> r, Senders senders, int calls, boolean wheel, RetryStats before,
                               Optional<DubboFailbackTimer> dubbo, ProviderTally tally, long origin) throws Exception {
        long cpu0 = cpuNanos();
        int firstBatch = Math.max(1, calls / WARMUP_FRACTION);
        Window a = window(senders, 0, firstBatch, wheel, before, dubbo, tally);
        Window b = window(senders, firstBatch, calls, wheel, before, dubbo, tally);
        r.put("sendSeconds", (System.nanoTime() - origin) / 1e9);
        r.put("cpuCoresWhileSending", (cpuNanos() - cpu0) / (System.nanoTime() - origin + 1.0));
        r.put("callerSawReply", senders.replies.sum());
        r.put("callerSawFailedBack", senders.failedBack.sum());
        r.put("callerSawError", senders.errors.sum());
        r.put("tickLagWhileSendingMs", maxOfMeasured(a.tickLagMillis, b.tickLagMillis));
        r.put("pendingAtPeak", b.pending);
        // retries already running when the heap was read add their in-flight state: a clean reading has 0
        r.put("retriesArrivedBeforeHeapReading", b.retriesArrived);
        r.put("heapWithFirstBatchBytes", a.usedAfterGc);
        r.put("heapWithAllPendingBytes", b.usedAfterGc);
        r.put("heapPerPendingRetryBytes", b.pending > a.pending
                ? (b.usedAfterGc - a.usedAfterGc) / (double) (b.pending - a.pending) : Double.NaN);
    }

    /** Lets the providers recover and waits (bounded) for every call's delivery, probing the retry timer. */
    private static void recovery(Map<String, Object> r, List<DemoProvider> providers, ProviderTally tally,
                                 Settings s, boolean wheel, Optional<DubboFailbackTimer> dubbo, long origin) {
        TimerProbe probe = probe(wheel, dubbo);
        try {
            long recovery = System.nanoTime();
            long cpu0 = cpuNanos();
            r.put("recoveryAtSeconds", (recovery - origin) / 1e9);
            providers.forEach(p -> p.faults().clear());
            r.put("allDelivered", awaitDelivered(tally, s.calls(), recovery + s.recoveryLimit().toNanos()));
            long last = tally.lastDeliveryNanos();
            boolean any = last != Long.MIN_VALUE;
            r.put("lastDeliveryAfterRecoverySeconds", any ? (last - recovery) / 1e9 : Double.NaN);
            r.put("lastDeliveryAfterFirstSendSeconds", any ? (last - origin) / 1e9 : Double.NaN);
            r.put("cpuCoresDuringRecovery", (cpuNanos() - cpu0) / (System.nanoTime() - recovery + 1.0));
            r.put("tickLagDuringRecoveryMs", probe == null ? Double.NaN : probe.worstLatenessMillis());
            r.put("tickLagWorstMs", maxOfMeasured(num(r, "tickLagWhileSendingMs"),
                    num(r, "tickLagDuringRecoveryMs")));
            r.put("probesCounted", probe == null ? 0 : probe.probesCounted());
        } finally {
            closeQuietly(probe);
        }
    }

    /**
     * What one sending window saw: the worst probe lateness while its calls went out, then, with the probe stopped
     * (so the forced GC is not counted as tick lag), the retries pending and the heap used after GC.
     */
    private record Window(double tickLagMillis, long pending, long usedAfterGc, long retriesArrived) {
    }

    /**
     * Sends calls {@code [from, to)} and measures the window. Two windows give the heap per pending retry as a slope,
     * {@code (used2 - used1) / (pending2 - pending1)}: what the first window set up once (the shared wheel and its
     * executor, Dubbo's failback timer, server threads, connection buffers) cancels out.
     */
    private static Window window(Senders senders, int from, int to, boolean wheel, RetryStats before,
                                 Optional<DubboFailbackTimer> dubbo, ProviderTally tally) throws Exception {
        TimerProbe probe = probe(wheel, dubbo);
        try {
            senders.send(from, to);
            long pending = wheel ? WheelFailback.stats().pending() - before.pending()
                    : probe instanceof TimerProbe.Dubbo d ? d.retriesPending() : 0;
            double lag = probe == null ? Double.NaN : probe.worstLatenessMillis();
            probe = closeQuietly(probe);
            long used = usedAfterGc();
            writeHistogram(pending);
            return new Window(lag, pending, used, tally.arrivals() - to);
        } finally {
            closeQuietly(probe);
        }
    }

    /** Sync callers on a pool of their own; every outcome counted. */
    private static final class Senders implements AutoCloseable {
        final LongAdder replies = new LongAdder();
        final LongAdder failedBack = new LongAdder();
        final LongAdder errors = new LongAdder();
        private final NotificationService service;
        private final String[] ids;
        private final String[] messages;
        private final int threads;
        private final ExecutorService pool;

        Senders(NotificationService service, String[] ids, String[] messages, int threads) {
            this.service = service;
            this.ids = ids;
            this.messages = messages;
            this.threads = threads;
            this.pool = Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "massfailure-caller");
                t.setDaemon(true);
                return t;
            });
        }

        /** Sends calls {@code [from, to)} as fast as they fail and returns when every one has answered. */
        void send(int from, int to) throws Exception {
            AtomicInteger next = new AtomicInteger(from);
            List<Future<?>> futures = new ArrayList<>();
            for (int k = 0; k < threads; k++) {
                futures.add(pool.submit(() -> {
                    int i;
                    while ((i = next.getAndIncrement()) < to) {
                        call(i);
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        }

        private void call(int i) {
            try {
                if (service.send(ids[i], messages[i]) == null) {
                    failedBack.increment(); // a failback cluster answers a failed call with null
                } else {
                    replies.increment();
                }
            } catch (RpcException e) {
                errors.increment();
            }
        }

        @Override
        public void close() {
            pool.shutdownNow();
        }
    }

    /**
     * @return this JVM's CPU time so far, every thread: consumer, providers and ZooKeeper alike (they share the
     *     JVM), so a difference between the clusters is what their retries cost; -1 where the platform does not say
     */
    private static long cpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
    }

    private static long usedAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    /**
     * With {@code -Drpctimer.bench.histograms=<dir>}, writes the heap's class histogram (live objects) to
     * {@code <dir>/histogram-<pending>.txt}: two of them, diffed, say what the heap per pending retry is made of.
     */
    private static void writeHistogram(long pending) throws Exception {
        String dir = System.getProperty("rpctimer.bench.histograms");
        if (dir == null) {
            return;
        }
        Object text = ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        Path d = Files.createDirectories(Path.of(dir));
        Files.writeString(d.resolve("histogram-" + pending + ".txt"), String.valueOf(text));
    }

    /** @return null, for {@code probe = closeQuietly(probe)} */
    private static TimerProbe closeQuietly(TimerProbe probe) {
        if (probe != null) {
            probe.close();
        }
        return null;
    }

    /**
     * @return the larger of two lags, ignoring one that was not measured (NaN: no probe ran in that window, e.g.
     *     before Dubbo created its failback timer); NaN if neither was
     */
    static double maxOfMeasured(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
    }

    static double num(Map<String, Object> r, String key) {
        Object v = r.get(key);
        return v instanceof Number n ? n.doubleValue() : Double.NaN;
    }
}
