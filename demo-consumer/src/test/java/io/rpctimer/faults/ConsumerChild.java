package io.rpctimer.faults;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.consumer.DemoConsumer;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.LifecycleState;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.wheel.TimerStats;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The consumer process of the crash, restart and fleet scenarios: a separate JVM that {@link ConsumerProcess} starts,
 * kills and restarts. It runs one {@link DemoConsumer} on {@code cluster="wheelfailback"}, sends its calls, and
 * reports on stdout, one line each, prefixed {@value #PREFIX} (logs go to stderr):
 * <ul>
 *   <li>{@code READY pid=<pid>} once the reference is created (and the journal's entries resumed);</li>
 *   <li>{@code FAILED_BACK <n>} every 100 callers that got the failback result, and
 *       {@code SENT_ALL <prefix> failedBack=<n> reply=<n> other=<n>} when every caller of a batch got its
 *       answer;</li>
 *   <li>{@code EVENT <type> <retry.id> <attempt>} for every retry event but SCHEDULED;</li>
 *   <li>{@code STATS key=value ...} every 250 ms and at the stop: the plugin's counters, the lifecycle's
 *       resumed and journal failure counts, the shared wheel's ticks and worst tick lag;</li>
 *   <li>{@code STOPPING}, then {@code STOPPED} once the Dubbo application is destroyed, at a graceful stop: a
 *       {@code stop} line on stdin, the end of stdin, or SIGTERM.</li>
 *   <li>A {@code send <n> <prefix>} line on stdin sends another batch.</li>
 * </ul>
 * Each line is written and flushed at once, so what a killed process printed is all in the pipe.
 *
 * <p>Arguments: {@code <registry address> <application> <calls> <call id prefix> [key=value ...]}, the pairs being
 * reference URL parameters (e.g. {@code failback.store=jdbc}).
 *
 * <p><b>Threading:</b> the main thread starts, sends each batch from a pool of caller threads, then reads stdin;
 * events print from the plugin's threads; the stop runs once, on the main thread or the shutdown hook.
 */
public final class ConsumerChild {

    /** Starts every protocol line. */
    public static final String PREFIX = "@@ ";
    private static final int CALLER_THREADS = 8;

    private final PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true,
            StandardCharsets.UTF_8);
    private final Map<CallerSaw, AtomicInteger> saw = new EnumMap<>(CallerSaw.class);
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "child-stats");
        t.setDaemon(true);
        return t;
    });
    private final RetryListener printer = this::event;
    private DemoConsumer consumer;

    private ConsumerChild() {
        for (CallerSaw s : CallerSaw.values()) {
            saw.put(s, new AtomicInteger());
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: ConsumerChild <registry> <application> <calls> <prefix> [key=value ...]");
            System.exit(2);
        }
        new ConsumerChild().run(args);
    }

    private void run(String[] args) throws Exception {
        DubboNode.disableDubboShutdownHooks(); // ours below destroys the application, and prints that it did
        DemoConsumer.Options options = DemoConsumer.options(args[0]).name(args[1]).timeout(Duration.ofSeconds(2));
        for (int i = 4; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            options.parameter(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        WheelFailback.addListener(printer);
        consumer = DemoConsumer.start(options);
        Runtime.getRuntime().addShutdownHook(new Thread(this::stop, "child-stop"));
        ticker.scheduleAtFixedRate(this::stats, 0, 250, TimeUnit.MILLISECONDS);
        line("READY pid=" + ProcessHandle.current().pid());
        send(Integer.parseInt(args[2]), args[3]);
        readStdin();
    }

    private void send(int calls, String prefix) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        ExecutorService callers = Executors.newFixedThreadPool(CALLER_THREADS);
        for (int t = 0; t < CALLER_THREADS; t++) {
            callers.execute(() -> {
                int i;
                while ((i = next.getAndIncrement()) < calls) {
                    CallerSaw s = consumer.send(prefix + "-" + i, "message " + i);
                    int n = saw.get(s).incrementAndGet();
                    if (n % 100 == 0 && s == CallerSaw.FAILED_BACK) {
                        line("FAILED_BACK " + n);
                    }
                }
            });
        }
        callers.shutdown();
        if (!callers.awaitTermination(5, TimeUnit.MINUTES)) {
            throw new IllegalStateException("callers still waiting after 5 minutes");
        }
        int failedBack = saw.get(CallerSaw.FAILED_BACK).getAndSet(0);
        int reply = saw.get(CallerSaw.REPLY).getAndSet(0);
        saw.values().forEach(n -> n.set(0));
        line("SENT_ALL " + prefix + " failedBack=" + failedBack + " reply=" + reply + " other="
                + (calls - failedBack - reply));
    }

    /**
     * {@code send <n> <prefix>} sends {@code n} more calls; a {@code stop} line, or the end of stdin (the test that
     * started the process is gone), stops the consumer gracefully and ends the process.
     */
    private void readStdin() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String l;
            while ((l = in.readLine()) != null && !l.trim().equals("stop")) {
                String[] w = l.trim().split(" ");
                if (w[0].equals("send") && w.length == 3) {
                    send(Integer.parseInt(w[1]), w[2]);
                }
            }
        } catch (IOException e) {
            System.err.println("stdin: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stop();
        System.exit(0);
    }

    /** Destroys the Dubbo application: pending retries are HANDED_OVER. Runs once. */
    private void stop() {
        if (!stopped.compareAndSet(false, true) || consumer == null) {
            return;
        }
        line("STOPPING");
        consumer.close();
        stats();
        WheelFailback.removeListener(printer);
        line("STOPPED");
    }

    private void event(RetryEvent e) {
        if (e.type() != RetryEvent.Type.SCHEDULED) {
            line("EVENT " + e.type() + " " + e.retryId() + " " + e.attempt());
        }
    }

    private void stats() {
        RetryStats s = WheelFailback.stats();
        long resumed = 0;
        long journalFailures = 0;
        for (RetryLifecycle l : WheelFailback.lifecycles()) {
            LifecycleState st = l.state();
            resumed += st.resumed();
            journalFailures += st.journalFailures();
        }
        TimerStats wheel = WheelFailback.wheelStats().orElse(null);
        line("STATS failed=" + s.failedCalls() + " pending=" + s.pending() + " retriesSent=" + s.retriesSent()
                + " delivered=" + s.delivered() + " abandoned=" + s.abandoned() + " rejected=" + s.rejected()
                + " handedOver=" + s.handedOver() + " resumed=" + resumed + " journalFailures=" + journalFailures
                + " ticks=" + (wheel == null ? 0 : wheel.ticks()) + " tickLagMicros="
                + (wheel == null ? 0 : wheel.maxTickLagNanos() / 1000));
    }

    private void line(String s) {
        synchronized (out) {
            out.println(PREFIX + s);
        }
    }
}
