package io.rpctimer.demo.consumer;

import io.rpctimer.dedup.DedupStats;
import io.rpctimer.dedup.DedupWindows;
import io.rpctimer.dedup.JdbcDedupStore;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.RetryDedupFilter;
import io.rpctimer.testkit.EmbeddedZooKeeper;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.h2.jdbcx.JdbcConnectionPool;

/**
 * The one-command demo's stage: an embedded ZooKeeper on 127.0.0.1 and two {@link DemoProvider}s, {@code p1} and
 * {@code p2}, in this JVM (each its own Dubbo framework), a {@link RegistryWatch} printing what ZooKeeper tells
 * consumers, and the {@link Scenario}'s fault script. Duplicates are counted from both providers' call ledgers.
 * With {@code --dedup}, both providers run the {@code retrydedup} filter on {@code NotificationService}, each with its
 * own in-memory store ({@value #MEMORY}) or both on one JDBC store ({@value #SHARED}: an in-memory H2 database that
 * stands for the fleet's shared database), and the report adds the duplicates the filter suppressed. A scenario that
 * {@linkplain Scenario#replaysDeadLetters() replays dead letters} gives the consumer an embedded journal in a temporary
 * directory and ends with a {@link DeadLetterReplayPhase}.
 *
 * <p><b>Threading:</b> as {@link Stage}.
 */
final class DemoStage implements Stage {

    private static final String SERVICE = NotificationService.class.getName();
    /** {@code --dedup memory}: one in-memory store per provider. */
    static final String MEMORY = "memory";
    /** {@code --dedup shared}: one JDBC store for both providers. */
    static final String SHARED = "shared";

    private final Scenario scenario;
    private final RunSettings settings;
    private final Duration hang;
    private final String dedup; // null, MEMORY or SHARED
    private volatile DedupStats dedupBefore;
    private volatile Console console;
    private volatile EmbeddedZooKeeper zk;
    private volatile DemoProvider p1;
    private volatile DemoProvider p2;
    private volatile Map<String, String> labels = Map.of();
    private volatile boolean stopping;
    private volatile Resources resources; // set once by start()
    private volatile DeadLetterReplayPhase replay; // set once by start(), for a scenario that replays dead letters

    /**
     * @param scenario the fault script; null when the consumer is another process ({@link ConsumerCrash}): no script
     * @param settings the run's settings: the script's times are fractions of its sending time
     * @param hang     how long a hanging provider holds each call, more than the timeout
     * @param dedup    {@value #MEMORY}, {@value #SHARED}, or null for providers that do not deduplicate
     */
    DemoStage(Scenario scenario, RunSettings settings, Duration hang, String dedup) {
        this.scenario = scenario;
        this.settings = settings;
        this.hang = hang;
        this.dedup = dedup;
    }

    @Override
    public String name() {
        return scenario.id();
    }

    @Override
    public void start(Console out, Resources resources) {
        console = out;
        this.resources = resources;
        long t0 = System.nanoTime();
        zk = resources.start("zookeeper", EmbeddedZooKeeper::start, EmbeddedZooKeeper::registryAddress, z -> z);
        started("zookeeper", zk.registryAddress(), t0);
        if (SHARED.equals(dedup)) {
            sharedStore(resources);
        }
        dedupBefore = RetryDedupFilter.stats();
        p1 = provider("p1", resources);
        p2 = provider("p2", resources);
        Map<String, String> m = new LinkedHashMap<>();
        m.put(p1.address(), p1.identity());
        m.put(p2.address(), p2.identity());
        labels = Map.copyOf(m);
        if (scenario != null && scenario.replaysDeadLetters()) {
            DeadLetterReplayPhase r = new DeadLetterReplayPhase(settings);
            r.journal(console, resources);
            replay = r;
        }
        RegistryWatch watch = resources.start(null, () -> RegistryWatch.connect(zk.registryAddress(),
                Duration.ofSeconds(10)), w -> "registry watch", w -> w);
        watch.printProviders(SERVICE, console, () -> labels);
    }

    private DemoProvider provider(String name, Resources resources) {
        long t0 = System.nanoTime();
        Map<String, String> params = dedup == null ? Map.of()
                : Map.of("retrydedup", "true", "retrydedup.store", dedup);
        DemoProvider p = resources.start("provider", () -> DemoProvider.start(name, zk.registryAddress(), 0, params),
                DemoProvider::identity, x -> x::stop);
        started("provider", p.identity(), t0);
        return p;
    }

    /** The fleet's shared database, here an in-memory H2 that both providers in this JVM reach. */
    private void sharedStore(Resources resources) {
        long t0 = System.nanoTime();
        JdbcConnectionPool pool = resources.start("dedup db", () -> JdbcConnectionPool.create(
                "jdbc:h2:mem:retrydedup-" + UUID.randomUUID(), "sa", ""), x -> "H2 in memory", x -> () -> {
                    RetryDedupFilter.unregisterStore(SHARED);
                    x.dispose();
                });
        RetryDedupFilter.registerStore(SHARED, new JdbcDedupStore(pool, DedupWindows.defaults()));
        started("dedup db", "H2 in memory, shared by p1 and p2", t0);
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
    public DemoConsumer.Options consumerOptions(DemoConsumer.Options options) {
        DeadLetterReplayPhase r = replay;
        return r == null ? options : r.journalOptions(options);
    }

    @Override
    public void consumerStarted(DemoConsumer consumer) {
        consumer.watch(p1, p2);
        DeadLetterReplayPhase r = replay;
        if (r != null) {
            r.watch(resources, p1, p2);
        }
    }

    @Override
    public void afterOutcomes(DemoConsumer consumer, EventLines events) {
        DeadLetterReplayPhase r = replay;
        if (r != null) {
            r.play(consumer, console, events, () -> stopping);
        }
    }

    @Override
    public Optional<DeadLetterSummary> deadLetters() {
        DeadLetterReplayPhase r = replay;
        return r == null ? Optional.empty() : r.summary();
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
        if (dedup == null) {
            return FinalReport.Duplicates.of(report.duplicates(), "calls p1 and p2 completed more than once, together");
        }
        DedupStats now = RetryDedupFilter.stats();
        return FinalReport.Duplicates.of(report.duplicates(), "calls p1 and p2 ran more than once, together"
                        + " (retrydedup, " + dedup + " store" + (MEMORY.equals(dedup) ? ": each provider sees only"
                        + " its own calls)" : ")"))
                .withSuppressed(now.suppressed() - dedupBefore.suppressed(), "answered without running: done "
                        + "before; " + (now.inProgress() - dedupBefore.inProgress()) + " more refused while the "
                        + "first run was in progress (retried later)");
    }

    /** @return the providers, p1 first; null before {@link #start} */
    List<DemoProvider> providers() {
        return p1 == null ? List.of() : List.of(p1, p2);
    }
}
