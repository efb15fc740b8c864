package io.rpctimer.faults;

import io.rpctimer.demo.consumer.DemoConsumer;
import io.rpctimer.demo.consumer.Report;
import io.rpctimer.demo.consumer.SleeperLag;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.InMemoryRetryStore;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStore;
import io.rpctimer.wheel.TimerStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;

/**
 * One fault-injection setup over real components: a real ZooKeeper ({@link ZooKeeperRig}), two or three
 * {@link DemoProvider}s on 127.0.0.1 and a {@link DemoConsumer} on {@code cluster="wheelfailback"}, with the
 * recorders the accounting needs: the providers' view of each call ({@link ProviderRecorder}), every retry event
 * ({@link EventRecorder}), and an {@link InMemoryRetryStore} for the retries handed over at shutdown (the previous
 * store is put back by {@link #close()}).
 *
 * <pre>{@code
 * try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, o -> o.parameter("failback.delay", "200"))) {
 *     Sender s = Sender.start(rig.consumer(), Sender.Mode.SYNC, 100, 50, 4, "c");
 *     ... inject faults ...
 *     s.await(Duration.ofSeconds(20));
 *     FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));   // settle, read the wheel, close the consumer
 * }                                                                  // providers and ZooKeeper stopped, even on failure
 * }</pre>
 *
 * <p><b>Threading:</b> use from the test thread.
 */
final class FaultRig implements AutoCloseable {

    private final long startNanos = System.nanoTime();
    private final ZooKeeperRig zk;
    private final List<DemoProvider> providers = new ArrayList<>();
    private final ProviderRecorder served = new ProviderRecorder();
    private final EventRecorder events = new EventRecorder();
    private final InMemoryRetryStore store = new InMemoryRetryStore();
    private final RetryStore previousStore = WheelFailback.retryStore();
    private final RetryStats statsBefore = WheelFailback.stats();
    private SleeperLag sleeper; // from the consumer's start, as the wheel
    private Map<String, String> serviceParameters = Map.of(); // on every provider's NotificationService
    private DemoConsumer consumer;

    private FaultRig(ZooKeeperRig zk) {
        this.zk = zk;
        WheelFailback.addListener(events);
        WheelFailback.setRetryStore(store);
    }

    /**
     * Starts {@code providers} providers (p1, p2, ...) on {@code zk} and a consumer whose options {@code options}
     * completes (defaults here: timeout 500 ms). If anything fails to start, what started is stopped.
     */
    static FaultRig start(ZooKeeperRig zk, int providers, UnaryOperator<DemoConsumer.Options> options) {
        return start(zk, providers, Map.of(), options);
    }

    /** As {@link #start(ZooKeeperRig, int, UnaryOperator)}, with parameters on every provider's service export. */
    static FaultRig start(ZooKeeperRig zk, int providers, Map<String, String> serviceParameters,
                          UnaryOperator<DemoConsumer.Options> options) {
        FaultRig rig = new FaultRig(zk);
        rig.serviceParameters = Map.copyOf(serviceParameters);
        try {
            rig.startProviders(providers);
            rig.consumer = DemoConsumer.start(options.apply(DemoConsumer.options(zk.registryAddress())
                    .timeout(Duration.ofMillis(500))));
            rig.consumer.watch(rig.providers.toArray(DemoProvider[]::new));
            rig.served.attach(rig.providers);
            rig.sleeper = SleeperLag.start();
            return rig;
        } catch (RuntimeException | Error e) {
            rig.close();
            throw e;
        }
    }

    /** Starts the providers in parallel: each Dubbo node takes about a second, mostly waiting. */
    private void startProviders(int n) {
        if (n == 0) {
            return;
        }
        ExecutorService starters = Executors.newFixedThreadPool(n);
        try {
            List<CompletableFuture<DemoProvider>> starting = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                String name = "p" + i;
                starting.add(CompletableFuture.supplyAsync(() -> DemoProvider.start(name, zk.registryAddress(), 0,
                        serviceParameters),
                        starters));
            }
            RuntimeException failed = null;
            for (CompletableFuture<DemoProvider> f : starting) {
                try {
                    providers.add(f.join());
                } catch (RuntimeException e) {
                    failed = failed == null ? e : failed;
                }
            }
            if (failed != null) {
                throw failed;
            }
        } finally {
            starters.shutdown();
        }
    }

    /** Starts one more provider on the rig's registry, watched like the others. */
    DemoProvider addProvider(String name) {
        DemoProvider p = DemoProvider.start(name, zk.registryAddress(), 0, serviceParameters);
        providers.add(p);
        consumer.watch(p);
        served.attach(List.of(p));
        return p;
    }

    /**
     * Keeps a fault in place for {@code d}: waits on the clock. Not a synchronisation: nothing else is waited for.
     */
    static void hold(Duration d) {
        long end = System.nanoTime() + d.toNanos();
        long left;
        while ((left = end - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    /** @return the name (p1, p2...) of the provider at {@code address}, or the address if none is */
    String providerName(String address) {
        return providers.stream().filter(p -> p.address().equals(address)).map(DemoProvider::name).findFirst()
                .orElse(address);
    }

    ZooKeeperRig zk() {
        return zk;
    }

    DemoConsumer consumer() {
        return consumer;
    }

    /** @return provider {@code i}, 1-based (p1 is {@code provider(1)}) */
    DemoProvider provider(int i) {
        return providers.get(i - 1);
    }

    List<DemoProvider> providers() {
        return List.copyOf(providers);
    }

    EventRecorder events() {
        return events;
    }

    ProviderRecorder served() {
        return served;
    }

    InMemoryRetryStore store() {
        return store;
    }

    /**
     * Ends the run: waits (at most {@code settle}) until every call has settled, reads the shared wheel's stats,
     * closes the consumer (retries still pending are handed over), and takes the account.
     */
    Outcome finish(Duration settle) {
        boolean settled = consumer.awaitSettled(settle);
        TimerStats wheel = WheelFailback.wheelStats().orElseThrow(() -> new AssertionError("no shared wheel"));
        long untilCloseMillis = Duration.ofNanos(System.nanoTime() - startNanos).toMillis();
        double sleeperLagMillis = sleeper == null ? 0 : sleeper.maxLagMillis();
        consumer.close();
        served.detach();
        Report report = consumer.report();
        return new Outcome(report, wheel, sleeperLagMillis, delta(statsBefore, WheelFailback.stats()), settled, served,
                events, store, Duration.ofNanos(System.nanoTime() - startNanos).toMillis(), untilCloseMillis);
    }

    private static RetryStats delta(RetryStats a, RetryStats b) {
        return new RetryStats(b.failedCalls() - a.failedCalls(), b.pending() - a.pending(),
                b.retriesSent() - a.retriesSent(), b.retriesFailed() - a.retriesFailed(),
                b.delivered() - a.delivered(), b.abandoned() - a.abandoned(), b.rejected() - a.rejected(),
                b.handedOver() - a.handedOver(), b.listenerErrors() - a.listenerErrors());
    }

    /** Stops the consumer, the providers and ZooKeeper (in that order), and puts the previous store back. */
    @Override
    public void close() {
        List<Throwable> failures = new ArrayList<>();
        run(failures, () -> {
            if (consumer != null) {
                consumer.close();
            }
        });
        served.detach();
        providers.forEach(p -> run(failures, p::stop));
        run(failures, () -> zk.close());
        WheelFailback.removeListener(events);
        WheelFailback.setRetryStore(previousStore);
        if (sleeper != null) {
            sleeper.close();
        }
        if (!failures.isEmpty()) {
            IllegalStateException e = new IllegalStateException("clean-up failed: " + failures.get(0), failures.get(0));
            failures.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    private static void run(List<Throwable> failures, Step step) {
        try {
            step.run();
        } catch (Exception | Error e) {
            failures.add(e);
        }
    }

    /**
     * The account of a finished run, from four independent sources: what each caller got and each call's outcome
     * event ({@link Report}, from {@link io.rpctimer.demo.consumer.CallBook}), the plugin's own counters over the run
     * ({@code stats}), what the providers served ({@code served}), and the shared wheel's stats just before the
     * consumer closed.
     *
     * @param sleeperLagMillis the worst oversleep of a thread that only sleeps 10 ms at a time, from the consumer's
     *                        start to its close ({@link SleeperLag}): what the machine did to any thread
     * @param settled         whether every call settled before the consumer closed
     * @param wallMillis      from the rig's start to the end of the account
     * @param untilCloseMillis from the rig's start to the consumer's close
     */
    record Outcome(Report report, TimerStats wheel, double sleeperLagMillis, RetryStats stats, boolean settled,
                   ProviderRecorder served,
                   EventRecorder events, InMemoryRetryStore store, long wallMillis, long untilCloseMillis) {

        /** @return the worst tick lag of the shared wheel, in milliseconds */
        double maxTickLagMillis() {
            return wheel.maxTickLagNanos() / 1e6;
        }

        /** @return the figures of this run, for docs/reliability.md */
        Map<String, Object> figures() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("calls", report.sent());
            m.put("deliveredFirstTry", report.deliveredFirstTry());
            m.put("deliveredOnRetry", report.deliveredOnAnyRetry());
            m.put("abandoned", report.abandoned());
            m.put("rejected", report.rejected());
            m.put("rejectedCallerTold", report.rejectedCallerTold());
            m.put("handedOver", report.handedOver());
            m.put("callerErrors", report.callerErrors());
            m.put("duplicates", report.duplicates());
            m.put("lost", report.lost());
            m.put("drainMillis", report.drainMillis());
            m.put("maxTickLagMillis", Math.round(maxTickLagMillis() * 10) / 10.0);
            m.put("sleeperLagMillis", Math.round(sleeperLagMillis * 10) / 10.0);
            m.put("wheelTicks", wheel.ticks());
            m.put("retriesSent", stats.retriesSent());
            m.put("wallMillis", wallMillis);
            return m;
        }
    }
}
