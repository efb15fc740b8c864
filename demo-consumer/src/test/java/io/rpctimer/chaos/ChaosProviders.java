package io.rpctimer.chaos;

import io.rpctimer.dedup.DedupWindows;
import io.rpctimer.dedup.JdbcDedupStore;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.NotificationServiceImpl;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.fault.FaultFilter;
import io.rpctimer.dubbo.RetryDedupFilter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.apache.dubbo.config.ServiceConfig;

/**
 * The chaos run's two providers, p1 and p2, in the test JVM: demo providers exporting both {@link ChaosService}s with
 * {@code retrydedup} on one shared {@link JdbcDedupStore} (the run's PostgreSQL), wrapped so that the
 * {@link ProviderRecordFilter} learns each verdict, and their runtime fault injection: a base rate of RPC errors
 * (calls fail back and are retried all run long), windows of errors on every call, and hangs past the consumers'
 * timeout.
 *
 * <p><b>Threading:</b> thread-safe (each provider's injector is).
 */
final class ChaosProviders implements AutoCloseable {

    /** The name of the shared store, as the services' {@code retrydedup.store} names it. */
    static final String STORE = "chaosshared";

    private final List<DemoProvider> providers = new ArrayList<>();
    private final double baseErrorRate;

    private ChaosProviders(double baseErrorRate) {
        this.baseErrorRate = baseErrorRate;
    }

    /**
     * Starts p1 and p2, failing {@code baseErrorRate} of calls at the RPC level.
     *
     * @param doneWindow how long the dedup store remembers a call that ran: longer than the run
     */
    static ChaosProviders start(String registry, DataSource dedupDatabase, double baseErrorRate, Duration doneWindow) {
        RetryDedupFilter.registerStore(STORE, new VerdictStore(new JdbcDedupStore(dedupDatabase,
                new DedupWindows(DedupWindows.DEFAULT_STARTED_MILLIS, doneWindow.toMillis()))));
        ChaosProviders g = new ChaosProviders(baseErrorRate);
        try {
            List<CompletableFuture<DemoProvider>> starting = new ArrayList<>();
            for (String name : List.of("p1", "p2")) {
                starting.add(CompletableFuture.supplyAsync(() -> DemoProvider.start(name, registry, 0,
                        parameters())));
            }
            for (CompletableFuture<DemoProvider> f : starting) {
                g.providers.add(f.join());
            }
            for (DemoProvider p : g.providers) {
                p.node().export(billing(p));
            }
            g.heal();
            g.providers.forEach(p -> p.faults().errorRate(baseErrorRate));
            return g;
        } catch (RuntimeException e) {
            g.close();
            throw e;
        }
    }

    private static Map<String, String> parameters() {
        return Map.of("retrydedup", "true", "retrydedup.store", STORE, ProviderRecordFilter.KEY, "true");
    }

    /** The billing service: the same implementation and fault injector as the provider's own export. */
    private static ServiceConfig<NotificationService> billing(DemoProvider p) {
        ServiceConfig<NotificationService> sc = new ServiceConfig<>();
        sc.setInterface(NotificationService.class);
        sc.setGroup(ChaosService.BILLING.group());
        sc.setRef(new NotificationServiceImpl(p.identity(), p.faults()));
        sc.setFilter(FaultFilter.NAME);
        sc.setParameters(new HashMap<>(parameters()));
        return sc;
    }

    private DemoProvider provider(String name) {
        return providers.stream().filter(p -> p.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("provider: " + name + " (expected: p1 or p2)"));
    }

    /** Provider {@code name} fails every call at the RPC level until {@link #restore}. */
    void errors(String name) {
        provider(name).faults().errorRate(1.0);
    }

    /** Provider {@code name} holds every call for {@code hang} (past the consumers' timeout) until {@link #restore}. */
    void hang(String name, Duration hang) {
        provider(name).faults().hang(hang);
    }

    /** Provider {@code name} is back to the base error rate; calls it holds are released. */
    void restore(String name) {
        DemoProvider p = provider(name);
        p.faults().clear();
        p.faults().errorRate(baseErrorRate);
    }

    /** Every provider answers every call from now on. */
    void heal() {
        providers.forEach(p -> p.faults().clear());
    }

    @Override
    public void close() {
        RuntimeException failed = null;
        for (DemoProvider p : providers) {
            try {
                p.stop();
            } catch (RuntimeException e) {
                failed = failed == null ? e : failed;
            }
        }
        RetryDedupFilter.unregisterStore(STORE);
        if (failed != null) {
            throw failed;
        }
    }
}
