package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.support.EmbeddedZooKeeper;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The one-command demo's stage: an embedded ZooKeeper on 127.0.0.1 and two {@link DemoProvider}s, {@code p1} and
 * {@code p2}, in this JVM (each its own Dubbo framework), a {@link RegistryWatch} printing what ZooKeeper tells
 * consumers, and the {@link Scenario}'s fault script. Duplicates are counted from both providers' call ledgers.
 *
 * <p><b>Threading:</b> as {@link Stage}.
 */
final class DemoStage implements Stage {

    private static final String SERVICE = NotificationService.class.getName();

    private final Scenario scenario;
    private final RunSettings settings;
    private final Duration hang;
    private volatile Console console;
    private volatile EmbeddedZooKeeper zk;
    private volatile DemoProvider p1;
    private volatile DemoProvider p2;
    private volatile Map<String, String> labels = Map.of();
    private volatile boolean stopping;

    /**
     * @param scenario the fault script
     * @param settings the run's settings: the script's times are fractions of its sending time
     * @param hang     how long a hanging provider holds each call, more than the timeout
     */
    DemoStage(Scenario scenario, RunSettings settings, Duration hang) {
        this.scenario = scenario;
        this.settings = settings;
        this.hang = hang;
    }

    @Override
    public String name() {
        return scenario.id();
    }

    @Override
    public void start(Console out, Resources resources) {
        console = out;
        long t0 = System.nanoTime();
        zk = resources.start("zookeeper", EmbeddedZooKeeper::start, EmbeddedZooKeeper::registryAddress, z -> z);
        started("zookeeper", zk.registryAddress(), t0);
        p1 = provider("p1", resources);
        p2 = provider("p2", resources);
        Map<String, String> m = new LinkedHashMap<>();
        m.put(p1.address(), p1.identity());
        m.put(p2.address(), p2.identity());
        labels = Map.copyOf(m);
        RegistryWatch watch = resources.start(null, () -> RegistryWatch.connect(zk.registryAddress(),
                Duration.ofSeconds(10)), w -> "registry watch", w -> w);
        watch.printProviders(SERVICE, console, () -> labels);
    }

    private DemoProvider provider(String name, Resources resources) {
        long t0 = System.nanoTime();
        DemoProvider p = resources.start("provider", () -> DemoProvider.start(name, zk.registryAddress(), 0),
                DemoProvider::identity, x -> x::stop);
        started("provider", p.identity(), t0);
        return p;
    }

    private void started(String what, String name, long startNanos) {
        console.line(String.format(Locale.ROOT, "  %-10s %-36s started in %s", what, name,
                Human.duration(Duration.ofNanos(System.nanoTime() - startNanos))));
    }

    @Override
    public String registryAddress() {
        return zk.registryAddress();
    }

    @Override
    public Map<String, String> providerLabels() {
        return labels;
    }

    @Override
    public void consumerStarted(DemoConsumer consumer) {
        consumer.watch(p1, p2);
    }

    @Override
    public List<Scenario.Step> script() {
        Scenario.Cast cast = new Scenario.Cast(p1, p2, settings.sendingTime(), settings.timeout(), hang, text -> {
            if (!stopping) {
                console.timed(">> " + text);
            }
        });
        return scenario.steps(cast);
    }

    @Override
    public void endFaults(Console out) {
        for (DemoProvider p : List.of(p1, p2)) {
            if (p.isDown() || !p.faults().settings().isNone()) {
                out.timed(">> " + p.name() + ": faults cleared (" + (p.isDown() ? "down" : p.faults().settings())
                        + ")");
                p.faults().clear();
                p.up();
            }
        }
    }

    @Override
    public void stopping() {
        stopping = true; // a provider coming back while everything stops is no news
    }

    @Override
    public FinalReport.Duplicates duplicates(Report report) {
        return FinalReport.Duplicates.of(report.duplicates(), "calls p1 and p2 completed more than once, together");
    }

    /** @return the providers, p1 first; null before {@link #start} */
    List<DemoProvider> providers() {
        return p1 == null ? List.of() : List.of(p1, p2);
    }
}
