package io.rpctimer.testkit;

import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * A standalone ZooKeeper server inside this JVM, for demos and tests: listens on 127.0.0.1 only, on a free
 * port, admin server off, data in a temporary directory that {@link #close()} deletes.
 *
 * <pre>{@code
 * try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start()) {
 *     String registry = zk.registryAddress();   // "zookeeper://127.0.0.1:41234", for Dubbo's RegistryConfig
 *     ...
 * }
 * }</pre>
 *
 * <p>The kit declares ZooKeeper {@code provided}: whoever starts one brings {@code org.apache.zookeeper:zookeeper}, and
 * at run time {@code io.dropwizard.metrics:metrics-core} and {@code org.xerial.snappy:snappy-java} (ZooKeeper declares
 * them {@code provided}). A Dubbo node that registers there also needs Curator ({@code curator-framework},
 * {@code curator-x-discovery}).
 *
 * <p>Caveat: ZooKeeper turns unknown configuration keys into JVM-wide system properties, so starting one sets
 * {@code zookeeper.admin.enableServer=false} for the whole JVM.
 *
 * <p>Thread-safe: {@link #close()} may be called from any thread, more than once.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    private static final long START_TIMEOUT_MILLIS = 30_000;
    private static final int START_ATTEMPTS = 3; // the free port may be taken before ZooKeeper binds it

    private final ZooKeeperServerEmbedded server;
    private final Path baseDir;
    private final int port;
    private boolean closed; // guarded by this

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, Path baseDir, int port) {
        this.server = server;
        this.baseDir = baseDir;
        this.port = port;
    }

    /**
     * Starts a server on 127.0.0.1 and a free port, and waits until it accepts clients (at most 30 s).
     *
     * @return the running server
     * @throws IllegalStateException if it cannot start (after 3 port choices)
     */
    public static EmbeddedZooKeeper start() {
        Exception last = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
            int port = Ports.free();
            Path dir = null;
            try {
                dir = Files.createTempDirectory("rpc-timer-zk-");
                ZooKeeperServerEmbedded server = ZooKeeperServerEmbedded.builder()
                        .baseDir(dir)
                        .configuration(config(port))
                        .exitHandler(ExitHandler.LOG_ONLY) // never System.exit() the caller's JVM
                        .build();
                server.start(START_TIMEOUT_MILLIS);
                return new EmbeddedZooKeeper(server, dir, port);
            } catch (Exception e) {
                last = e;
                deleteQuietly(dir);
            }
        }
        throw new IllegalStateException("cannot start an embedded ZooKeeper on 127.0.0.1: " + last, last);
    }

    private static Properties config(int port) {
        Properties p = new Properties();
        p.setProperty("clientPort", String.valueOf(port));
        p.setProperty("clientPortAddress", Loopback.HOST);
        p.setProperty("tickTime", "500"); // ms; sessions expire after 2..20 ticks
        p.setProperty("initLimit", "10");
        p.setProperty("syncLimit", "5");
        p.setProperty("admin.enableServer", "false"); // no Jetty admin server on :8080
        p.setProperty("4lw.commands.whitelist", "ruok,srvr,stat");
        return p;
    }

    /** @return the client port on 127.0.0.1 */
    public int port() {
        return port;
    }

    /** @return {@code "127.0.0.1:<port>"}, a ZooKeeper connect string */
    public String connectString() {
        return Loopback.HOST + ":" + port;
    }

    /** @return {@code "zookeeper://127.0.0.1:<port>"}, for Dubbo's {@code RegistryConfig} and {@link DubboNode} */
    public String registryAddress() {
        return "zookeeper://" + connectString();
    }

    /** @return the temporary directory holding configuration and data; deleted by {@link #close()} */
    public Path baseDir() {
        return baseDir;
    }

    /** Stops the server, closing its port, and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.close();
        deleteQuietly(baseDir);
    }

    private static void deleteQuietly(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // best effort: a leftover temp directory is harmless
        }
    }

    @Override
    public String toString() {
        return "EmbeddedZooKeeper[" + registryAddress() + "]";
    }
}
