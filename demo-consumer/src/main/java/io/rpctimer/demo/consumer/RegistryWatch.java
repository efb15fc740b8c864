package io.rpctimer.demo.consumer;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * Reads what Dubbo's ZooKeeper registry holds, with a client of its own: the providers of a service (Dubbo's
 * interface-level layout, {@code /dubbo/<interface>/providers/<url-encoded provider URL>}), once or every time they
 * change. The demo prints what ZooKeeper tells consumers; the standalone consumer finds the providers'
 * {@code ProviderControl} groups.
 *
 * <p><b>Threading:</b> thread-safe. Change callbacks run on the ZooKeeper client's event thread, one at a time; keep
 * them short.
 */
public final class RegistryWatch implements AutoCloseable {

    /** One provider as registered: {@code host:port}, and its Dubbo group if any. */
    public record Provider(String address, Optional<String> group) implements Comparable<Provider> {
        @Override
        public int compareTo(Provider o) {
            return address.compareTo(o.address) != 0 ? address.compareTo(o.address)
                    : group.orElse("").compareTo(o.group.orElse(""));
        }
    }

    private static final Pattern ADDRESS = Pattern.compile("^[a-z][a-z0-9+.-]*://([^/?]+)");
    private static final Pattern GROUP = Pattern.compile("[?&]group=([^&]+)");

    private final CuratorFramework client;
    private volatile boolean closed;

    private RegistryWatch(CuratorFramework client) {
        this.client = client;
    }

    /**
     * Connects to the registry.
     *
     * @param registryAddress {@code zookeeper://host:port}
     * @param timeout         the longest wait for the connection
     * @return the connected watch
     * @throws IllegalArgumentException if the address is not {@code zookeeper://host:port}
     * @throws IllegalStateException    if no connection came within {@code timeout}
     */
    public static RegistryWatch connect(String registryAddress, Duration timeout) {
        if (registryAddress == null || !registryAddress.matches("zookeeper://[^:/\\s]+:\\d{1,5}")) {
            throw new IllegalArgumentException("registryAddress: \"" + registryAddress
                    + "\" (expected: zookeeper://HOST:PORT)");
        }
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(registryAddress.substring("zookeeper://".length()))
                .retryPolicy(new RetryOneTime(200))
                .connectionTimeoutMs((int) timeout.toMillis())
                .sessionTimeoutMs(10_000)
                .build();
        c.start();
        try {
            if (!c.blockUntilConnected((int) timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                c.close();
                throw new IllegalStateException(registryAddress + ": no connection within " + Human.duration(timeout));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.close();
            throw new IllegalStateException(registryAddress + ": interrupted while connecting", e);
        }
        return new RegistryWatch(c);
    }

    /**
     * @param serviceInterface e.g. {@code io.rpctimer.demo.provider.api.NotificationService}
     * @return its providers now, sorted; empty if none
     */
    public List<Provider> providers(String serviceInterface) {
        try {
            return parse(client.getChildren().forPath(path(serviceInterface)));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + path(serviceInterface) + ": " + e, e);
        }
    }

    /**
     * Calls {@code onChange} with the providers of a service now, and again every time they change, until
     * {@link #close()}.
     *
     * @param serviceInterface the service
     * @param onChange         receives the providers, sorted; on the client's event thread
     */
    public void watch(String serviceInterface, Consumer<List<Provider>> onChange) {
        String path = path(serviceInterface);
        CuratorWatcher rearm = new CuratorWatcher() {
            @Override
            public void process(org.apache.zookeeper.WatchedEvent event) {
                if (!closed && event.getType() != Watcher.Event.EventType.None) {
                    read(path, this, onChange);
                }
            }
        };
        read(path, rearm, onChange);
    }

    private void read(String path, CuratorWatcher watcher, Consumer<List<Provider>> onChange) {
        try {
            onChange.accept(parse(client.getChildren().usingWatcher(watcher).forPath(path)));
        } catch (KeeperException.NoNodeException e) {
            onChange.accept(List.of());
            try {
                client.checkExists().usingWatcher(watcher).forPath(path);
            } catch (Exception ignored) {
                // closing
            }
        } catch (Exception e) {
            if (!closed) {
                onChange.accept(List.of());
            }
        }
    }

    private static String path(String serviceInterface) {
        return "/dubbo/" + serviceInterface + "/providers";
    }

    static List<Provider> parse(List<String> children) {
        TreeSet<Provider> providers = new TreeSet<>();
        for (String child : children) {
            String url = URLDecoder.decode(child, StandardCharsets.UTF_8);
            Matcher a = ADDRESS.matcher(url);
            if (a.find()) {
                Matcher g = GROUP.matcher(url);
                providers.add(new Provider(a.group(1), g.find() ? Optional.of(g.group(1)) : Optional.empty()));
            }
        }
        return new ArrayList<>(providers);
    }

    /** Stops watching and closes the client. Idempotent. */
    @Override
    public void close() {
        closed = true;
        client.close();
    }

    /**
     * Prints the providers of {@code service} now, then a timed line each time they change.
     *
     * @param labels provider names by address, read at each change
     */
    void printProviders(String service, Console console, Supplier<Map<String, String>> labels) {
        String simpleName = service.substring(service.lastIndexOf('.') + 1);
        AtomicBoolean first = new AtomicBoolean(true); // the first call comes at once, before the clock starts
        watch(service, providers -> {
            String names = describe(labels.get(), providers);
            if (first.getAndSet(false)) {
                console.line(String.format(Locale.ROOT, "  %-10s %-36s %s", "zookeeper", simpleName,
                        "providers: " + names));
            } else {
                console.timed("zookeeper: " + simpleName + " providers are now " + names);
            }
        });
    }

    /**
     * @param labels    provider names by address
     * @param providers the providers listed
     * @return the providers by name (their address when unnamed), comma-separated, or {@code none}
     */
    private static String describe(Map<String, String> labels, List<Provider> providers) {
        if (providers.isEmpty()) {
            return "none";
        }
        List<String> names = new ArrayList<>();
        for (Provider p : providers) {
            names.add(labels.getOrDefault(p.address(), p.address()));
        }
        return String.join(", ", names);
    }
}
