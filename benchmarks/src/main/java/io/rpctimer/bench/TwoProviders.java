package io.rpctimer.bench;

import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.testkit.EmbeddedZooKeeper;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What every end-to-end comparison runs against: a fresh embedded ZooKeeper and two fresh {@link DemoProvider}s,
 * {@code p1} and {@code p2}, registered in it, on free ports of 127.0.0.1 in this JVM.
 *
 * <p><b>Threading:</b> start and close from one thread; the providers are thread-safe.
 */
public final class TwoProviders implements AutoCloseable {

    private final EmbeddedZooKeeper zk;
    private final List<DemoProvider> providers;

    private TwoProviders(EmbeddedZooKeeper zk, List<DemoProvider> providers) {
        this.zk = zk;
        this.providers = providers;
    }

    /**
     * Starts the ZooKeeper, then both providers at once.
     *
     * @throws RuntimeException if one cannot start; what did start is stopped
     */
    public static TwoProviders start() {
        EmbeddedZooKeeper zk = EmbeddedZooKeeper.start();
        String registry = zk.registryAddress();
        CompletableFuture<DemoProvider> p1 = CompletableFuture.supplyAsync(() -> DemoProvider.start("p1", registry, 0));
        CompletableFuture<DemoProvider> p2 = CompletableFuture.supplyAsync(() -> DemoProvider.start("p2", registry, 0));
        try {
            CompletableFuture.allOf(p1, p2).join();
        } catch (RuntimeException e) {
            p1.thenAccept(DemoProvider::stop);
            p2.thenAccept(DemoProvider::stop);
            zk.close();
            throw e;
        }
        return new TwoProviders(zk, List.of(p1.join(), p2.join()));
    }

    /** @return the registry address, e.g. {@code zookeeper://127.0.0.1:2181} */
    public String registry() {
        return zk.registryAddress();
    }

    /** @return {@code p1} and {@code p2} */
    public List<DemoProvider> providers() {
        return providers;
    }

    /** Clears the providers' faults (releasing held calls), stops them, then the ZooKeeper. */
    @Override
    public void close() {
        for (DemoProvider p : providers) {
            p.faults().clear();
            p.stop();
        }
        zk.close();
    }
}
