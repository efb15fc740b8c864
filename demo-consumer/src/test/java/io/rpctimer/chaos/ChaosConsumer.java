package io.rpctimer.chaos;

import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.dubbo.WheelFailbackCluster;
import io.rpctimer.faults.ConsumerChild;
import io.rpctimer.retry.LifecycleState;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.testkit.DubboNode;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.dubbo.config.ReferenceConfig;

/**
 * One consumer instance of the chaos run's fleet, in a JVM of its own ({@link ChaosFleet} starts, freezes, kills and
 * restarts it): a Dubbo application on {@code cluster=wheelfailback} with a reference to each {@link ChaosService},
 * the journal on the fleet's PostgreSQL, and a {@link LoadLoop} that calls them and records every call in the
 * instance's record file. Outcome events of calls this instance did not make (adopted ones) are recorded too:
 * {@code E <type> <service> <method> <retryId> <attempt>}.
 *
 * <p>Arguments: {@code <registry> <application> <instance> <record file> <seed> <calls per second> [key=value ...]},
 * the pairs being reference URL parameters. Protocol lines on stdout, prefixed {@value ConsumerChild#PREFIX}:
 * {@code READY pid=<pid> epochMillis=<its clock>}; {@code STATS key=value ...} in answer to a {@code stats} line on
 * stdin; {@code QUIESCED issued=<n> told=<n>} once a {@code quiesce} line stopped the load and every caller was told;
 * {@code STOPPED} after a graceful stop (a {@code stop} line, the end of stdin, or SIGTERM).
 *
 * <p><b>Threading:</b> the main thread starts and then reads stdin; the stop runs once, on it or the shutdown hook.
 */
public final class ChaosConsumer {

    private final PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true,
            StandardCharsets.UTF_8);
    private final AtomicBoolean stopped = new AtomicBoolean();
    private RecordFile records;
    private RetryListener events;
    private DubboNode node;
    private LoadLoop load;

    private ChaosConsumer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: ChaosConsumer <registry> <application> <instance> <record file> <seed>"
                    + " <calls per second> [key=value ...]");
            System.exit(2);
        }
        new ChaosConsumer().run(args);
    }

    private void run(String[] args) throws Exception {
        DubboNode.disableDubboShutdownHooks(); // ours below stops the load first, then the application
        String instance = args[2];
        records = new RecordFile(Path.of(args[3]));
        Map<String, String> parameters = new HashMap<>();
        for (int i = 6; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            parameters.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        parameters.put(SenderFilter.KEY, instance);
        events = this::event;
        WheelFailback.addListener(events);
        node = DubboNode.create(args[1], args[0]);
        Map<ChaosService, NotificationService> services = new EnumMap<>(ChaosService.class);
        Map<ChaosService, ReferenceConfig<NotificationService>> refs = new EnumMap<>(ChaosService.class);
        for (ChaosService s : ChaosService.values()) {
            refs.put(s, reference(s, parameters));
            node.reference(refs.get(s));
        }
        node.start();
        refs.forEach((s, ref) -> services.put(s, ref.get()));
        Runtime.getRuntime().addShutdownHook(new Thread(this::stop, "chaos-stop"));
        load = new LoadLoop(instance, services, records, Long.parseLong(args[4]), Integer.parseInt(args[5]));
        line("READY pid=" + ProcessHandle.current().pid() + " epochMillis=" + System.currentTimeMillis());
        load.start();
        readStdin();
    }

    private static ReferenceConfig<NotificationService> reference(ChaosService s, Map<String, String> parameters) {
        ReferenceConfig<NotificationService> ref = new ReferenceConfig<>();
        ref.setInterface(NotificationService.class);
        ref.setGroup(s.group());
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(1000);
        ref.setCheck(false);
        ref.setParameters(new HashMap<>(parameters));
        return ref;
    }

    private void readStdin() throws InterruptedException {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String l;
            while ((l = in.readLine()) != null && !l.trim().equals("stop")) {
                switch (l.trim()) {
                    case "stats" -> stats();
                    case "quiesce" -> {
                        boolean all = load.quiesce(120);
                        line("QUIESCED issued=" + load.issued() + " told=" + load.told() + " all=" + all);
                    }
                    default -> System.err.println("unknown command: " + l);
                }
            }
        } catch (IOException e) {
            System.err.println("stdin: " + e);
        }
        stop();
        System.exit(0);
    }

    /** Stops the load, then destroys the Dubbo application: pending retries are HANDED_OVER. Runs once. */
    private void stop() {
        if (!stopped.compareAndSet(false, true) || node == null) {
            return;
        }
        try {
            load.quiesce(30);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        node.close();
        stats();
        WheelFailback.removeListener(events);
        line("STOPPED");
    }

    private void event(RetryEvent e) {
        if (e.isOutcome()) {
            records.append("E", e.type(), e.service(), e.method(), e.retryId(), e.attempt());
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
        line("STATS failed=" + s.failedCalls() + " pending=" + s.pending() + " retriesSent=" + s.retriesSent()
                + " delivered=" + s.delivered() + " abandoned=" + s.abandoned() + " rejected=" + s.rejected()
                + " handedOver=" + s.handedOver() + " resumed=" + resumed + " journalFailures=" + journalFailures
                + " issued=" + (load == null ? 0 : load.issued()) + " told=" + (load == null ? 0 : load.told())
                + " skipped=" + (load == null ? 0 : load.skipped()));
    }

    private void line(String s) {
        synchronized (out) {
            out.println(ConsumerChild.PREFIX + s);
        }
    }
}
