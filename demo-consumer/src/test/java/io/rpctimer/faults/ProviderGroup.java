package io.rpctimer.faults;

import io.rpctimer.demo.provider.DemoProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Demo providers in the test's JVM for scenarios whose consumers run in other processes ({@link ConsumerProcess}):
 * p1, p2, ... on one registry, with a {@link ProviderRecorder} on their ledgers, which count what each
 * {@code retry.id} ran. They fail every call at the RPC level until {@link #recover()}.
 *
 * <p><b>Threading:</b> use from the test thread; the recorder is thread-safe.
 */
final class ProviderGroup implements AutoCloseable {

    private final List<DemoProvider> providers = new ArrayList<>();
    private final ProviderRecorder served = new ProviderRecorder();

    private ProviderGroup() {
    }

    /** Starts {@code n} providers in parallel, every one failing every call; if one fails to start, none is left. */
    static ProviderGroup startFailing(ZooKeeperRig zk, int n) {
        ProviderGroup g = new ProviderGroup();
        try {
            List<CompletableFuture<DemoProvider>> starting = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                String name = "p" + i;
                starting.add(CompletableFuture.supplyAsync(() -> DemoProvider.start(name, zk.registryAddress(), 0)));
            }
            for (CompletableFuture<DemoProvider> f : starting) {
                DemoProvider p = f.join();
                g.providers.add(p);
                p.faults().errorRate(1.0);
            }
            g.served.attach(g.providers);
            return g;
        } catch (RuntimeException e) {
            g.close();
            throw e;
        }
    }

    /** The providers answer every call from now on. */
    void recover() {
        providers.forEach(p -> p.faults().clear());
    }

    /** @return the number of {@code ids} some provider completed at least once */
    long completed(List<String> ids) {
        return ids.stream().filter(id -> completions(id) > 0).count();
    }

    /** @return how many times the providers completed the call with this {@code retry.id} */
    int completions(String retryId) {
        return providers.stream().mapToInt(p -> p.ledger().completions(retryId)).sum();
    }

    ProviderRecorder served() {
        return served;
    }

    /** Stops every provider. */
    @Override
    public void close() {
        served.detach();
        RuntimeException failed = null;
        for (DemoProvider p : providers) {
            try {
                p.stop();
            } catch (RuntimeException e) {
                failed = failed == null ? e : failed;
            }
        }
        if (failed != null) {
            throw failed;
        }
    }
}
