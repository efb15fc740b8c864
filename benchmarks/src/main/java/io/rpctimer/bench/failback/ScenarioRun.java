package io.rpctimer.bench.failback;

import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.bench.TwoProviders;
import io.rpctimer.demo.consumer.DemoConsumer;
import io.rpctimer.demo.consumer.Report;
import io.rpctimer.demo.consumer.SleeperLag;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.ledger.CallListener;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.dubbo.WheelFailbackCluster;
import io.rpctimer.retry.InMemoryRetryStore;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStore;
import io.rpctimer.wheel.TimerStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one scenario on one cluster, over real components: a fresh embedded ZooKeeper, two fresh
 * {@link DemoProvider}s ({@code p1}, {@code p2}) and a fresh {@link DemoConsumer} on the cluster, with the call
 * timeout and first retry delay of the {@link Settings}, and Dubbo's defaults for the rest ({@code retries=3},
 * {@code failbacktasks=100}; wheelfailback's own defaults: multiplier 2, jitter 0.2, max delay 60 s). Calls go out at
 * the scenario's rate while its fault steps run on their own clock; then the run waits (bounded) for the retries to
 * settle, reads the timers, closes the consumer and takes the account.
 *
 * <p><b>Threading:</b> {@link #run} is called from one thread at a time (Dubbo, the listeners and the retry store are
 * JVM-wide); it starts and stops its own threads.
 */
final class ScenarioRun {

    /** Dubbo's failback cluster. */
    static final String DUBBO = "failback";
    /** rpc-timer's cluster. */
    static final String WHEEL = WheelFailbackCluster.NAME;
    /** The shared wheel's tick (rpc-timer) and Dubbo's failback timer tick. */
    static final long WHEEL_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    static final long DUBBO_TICK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Dubbo: after this long with no retry pending on its timer and nothing in flight, nothing more will happen. */
    private static final long DUBBO_IDLE_NANOS = TimeUnit.SECONDS.toNanos(3);

    /**
     * What every scenario shares.
     *
     * @param timeout          the call timeout
     * @param firstDelayMillis {@code failback.delay}: wheelfailback's first retry delay (Dubbo's failback has a fixed
     *                         5 s period and ignores it)
     * @param settle           how long after the last send the run waits, at most, for the retries to settle
     */
    record Settings(Duration timeout, long firstDelayMillis, Duration settle) {
        Settings {
            if (timeout == null || timeout.toMillis() < 1) {
                throw new IllegalArgumentException("timeout: " + timeout + " (expected: >= 1 ms)");
            }
            if (firstDelayMillis < 1) {
                throw new IllegalArgumentException("firstDelayMillis: " + firstDelayMillis + " (expected: >= 1)");
            }
            if (settle == null || settle.isNegative()) {
                throw new IllegalArgumentException("settle: " + settle + " (expected: >= 0)");
            }
        }

        /** The comparison's settings: timeout 1 s, first retry after 5 s (Dubbo's period), settle up to 45 s. */
        static Settings standard() {
            return new Settings(Duration.ofSeconds(1), 5_000, Duration.ofSeconds(45));
        }
    }

    private ScenarioRun() {
    }

    /**
     * Runs {@code scenario} on {@code cluster}.
     *
     * @param cluster {@value #DUBBO} or {@value #WHEEL}
     * @param tap     counts Dubbo's failback log lines, or null
     * @param load    measures the CPU other processes use during the run, or null
     * @throws IllegalArgumentException if the cluster is neither
     */
    static RunResult run(Scenario scenario, Scenario.Plan plan, String cluster, Settings settings, LogTap tap,
                         ForeignLoadMonitor load)
            throws InterruptedException {
        if (!DUBBO.equals(cluster) && !WHEEL.equals(cluster)) {
            throw new IllegalArgumentException("cluster: '" + cluster + "' (expected: " + DUBBO + " or " + WHEEL + ")");
        }
        boolean wheel = WHEEL.equals(cluster);
        long t0 = System.nanoTime();
        ForeignLoadMonitor.Mark loadMark = load == null ? null : load.mark();
        Duration cpu0 = selfCpu();
        Map<LogTap.Marker, Long> logBefore = tap == null ? Map.of() : tap.counts();
        RetryStats statsBefore = WheelFailback.stats();
        RetryStore previousStore = WheelFailback.retryStore();
        InMemoryRetryStore store = new InMemoryRetryStore();
        CallTimeline timeline = new CallTimeline(NotificationService.class.getName());
        CallListener providerListener = timeline.providerListener();
        List<String> faultLog = new ArrayList<>();
        RunResult.Builder result = new RunResult.Builder(scenario, cluster, plan);

        TwoProviders rig = null;
        List<DemoProvider> providers = List.of();
        DemoConsumer consumer = null;
        TimerProbe probe = null;
        SleeperLag sleeper = null;
        LoadSender sender = null;
        Thread script = null;
        Optional<DubboFailbackTimer> dubboTimer = Optional.empty();
        WheelFailback.setRetryStore(store);
        WheelFailback.addListener(timeline);
        try {
            rig = TwoProviders.start();
            String registry = rig.registry();
            providers = rig.providers();
            providers.forEach(p -> p.ledger().addListener(providerListener));
            consumer = DemoConsumer.start(DemoConsumer.options(registry)
                    .name("consumer-" + scenario.id + "-" + cluster)
                    .cluster(cluster)
                    .timeout(settings.timeout())
                    .parameter("failback.delay", String.valueOf(settings.firstDelayMillis())));
            consumer.watch(providers.toArray(DemoProvider[]::new));
            dubboTimer = wheel ? Optional.empty() : DubboFailbackTimer.find(consumer.service());
            if (wheel) {
                probe = TimerProbe.wheel();
            } else if (dubboTimer.isPresent()) {
                probe = TimerProbe.dubbo(dubboTimer.get());
            }
            sleeper = SleeperLag.start();
            result.setupMillis((System.nanoTime() - t0) / 1_000_000);

            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            script = startScript(plan, providers, start, faultLog);
            sender = LoadSender.start(consumer, timeline, plan.callers(), plan.calls(), plan.perSecond(),
                    settings.timeout(), scenario.id + "-" + cluster, start);
            Duration answerLimit = Duration.ofMillis(plan.sendMillis()).plus(settings.timeout().multipliedBy(5))
                    .plusSeconds(30);
            result.allAnswered(sender.awaitAnswered(answerLimit));
            script.join(answerLimit.toMillis());
            long lastSendDone = System.nanoTime();

            result.settled(settle(consumer, providers, probe instanceof TimerProbe.Dubbo d ? d : null, wheel,
                    lastSendDone + settings.settle().toNanos()));
            result.settleWaitMillis((System.nanoTime() - lastSendDone) / 1_000_000);

            // the timers, before the consumer closes
            if (probe != null) {
                result.probe(probe);
                probe.close();
            }
            if (wheel) {
                WheelFailback.wheelStats().ifPresent(result::wheelStats);
            }
            result.sleeperLagMillis(sleeper.maxLagMillis());
            sleeper.close();
            result.pendingAtClose(wheel ? WheelFailback.stats().pending() - statsBefore.pending()
                    : probe instanceof TimerProbe.Dubbo d ? d.retriesPending() : -1);

            consumer.close();
            if (!wheel) {
                result.dubboTimerFound(dubboTimer.isPresent());
                result.dubboDiscardedAtStop(dubboTimer.map(DubboFailbackTimer::stopTimer).orElse(-1));
            }
            Report report = consumer.report();
            result.report(report);
            result.callerSaw(sender.saw());
            result.senderFailures(sender.failures());
            result.times(timeline.analyse(wheel, wheel ? WHEEL_TICK_NANOS : DUBBO_TICK_NANOS));
            result.retryStats(delta(statsBefore, WheelFailback.stats()));
            result.handedOverToStore(store.size());
        } finally {
            if (sender != null) {
                sender.abort();
            }
            if (script != null) {
                script.interrupt();
            }
            if (probe != null) {
                probe.close();
            }
            if (sleeper != null) {
                sleeper.close();
            }
            if (consumer != null) {
                consumer.close();
            }
            dubboTimer.ifPresent(DubboFailbackTimer::stopTimer); // Dubbo never stops it (see DubboFailbackTimer)
            providers.forEach(p -> p.ledger().removeListener(providerListener));
            if (rig != null) {
                rig.close();
            }
            WheelFailback.removeListener(timeline);
            WheelFailback.setRetryStore(previousStore);
        }
        result.faultLog(faultLog);
        result.logLines(tap == null ? Map.of() : LogTap.delta(logBefore, tap.counts()));
        long wallNanos = System.nanoTime() - t0;
        result.foreignCores(load == null ? Double.NaN : load.coresSince(loadMark));
        Duration cpu = selfCpu();
        result.selfCores(cpu0 == null || cpu == null ? Double.NaN : (double) cpu.minus(cpu0).toNanos() / wallNanos);
        result.wallMillis(wallNanos / 1_000_000);
        return result.build();
    }

    /** Runs the fault steps at their times on a thread of their own; each step's actual time goes to the log. */
    private static Thread startScript(Scenario.Plan plan, List<DemoProvider> providers, long startNanos,
                                      List<String> log) {
        Thread t = new Thread(() -> {
            for (Scenario.Step step : plan.steps()) {
                long due = startNanos + TimeUnit.MILLISECONDS.toNanos(step.atMillis());
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                    if (Thread.currentThread().isInterrupted()) {
                        return;
                    }
                }
                step.action().accept(providers);
                synchronized (log) {
                    log.add(String.format(Locale.ROOT, "%.2f s: %s", (System.nanoTime() - startNanos) / 1e9,
                            step.what()));
                }
            }
        }, "failback-bench-faults");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * Waits, at most until {@code deadlineNanos}, for the retries to settle.
     * <ul>
     *   <li>wheelfailback: until every call has its outcome and no provider holds a call (so the late completions of
     *       held calls, the duplicates, are counted).</li>
     *   <li>Dubbo's failback: until its timer has had no retry pending, and no provider has held a call, for
     *       {@value #DUBBO_IDLE_NANOS} ns (longer than a retry in progress can take: the 1 s timeout, plus the 1 s
     *       tick). The account alone is not enough: a call whose original completed late at a provider is settled
     *       while its retry still waits on the timer; and a call whose retry Dubbo dropped never settles.</li>
     * </ul>
     *
     * @return true if every call settled (Dubbo: by its completions) and no retry was left
     */
    private static boolean settle(DemoConsumer consumer, List<DemoProvider> providers, TimerProbe.Dubbo dubbo,
                                  boolean wheel, long deadlineNanos) {
        long idleSince = 0;
        while (true) {
            long now = System.nanoTime();
            boolean holding = providers.stream().anyMatch(p -> p.faults().waitingCalls() > 0);
            boolean settled = consumer.book().unsettled() == 0;
            if (wheel && settled && !holding) {
                return true;
            }
            if (now - deadlineNanos >= 0) {
                return false;
            }
            if (!wheel) {
                if ((dubbo == null || dubbo.retriesPending() == 0) && !holding) {
                    if (idleSince == 0) {
                        idleSince = now;
                    } else if (now - idleSince >= DUBBO_IDLE_NANOS) {
                        return settled;
                    }
                } else {
                    idleSince = 0;
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    private static RetryStats delta(RetryStats a, RetryStats b) {
        return new RetryStats(b.failedCalls() - a.failedCalls(), b.pending() - a.pending(),
                b.retriesSent() - a.retriesSent(), b.retriesFailed() - a.retriesFailed(),
                b.delivered() - a.delivered(), b.abandoned() - a.abandoned(), b.rejected() - a.rejected(),
                b.handedOver() - a.handedOver(), b.listenerErrors() - a.listenerErrors());
    }

    /** @return this JVM's CPU time so far, all threads, or null where the platform does not say */
    private static Duration selfCpu() {
        return ProcessHandle.current().info().totalCpuDuration().orElse(null);
    }

    /** @return {@code m} rounded to one decimal, for JSON */
    static double round1(double m) {
        return Double.isNaN(m) ? m : Math.round(m * 10) / 10.0;
    }

    /** @return a small map, for JSON */
    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }
}
