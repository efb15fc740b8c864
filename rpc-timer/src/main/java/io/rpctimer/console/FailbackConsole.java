package io.rpctimer.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.rpctimer.retry.RetryLifecycle;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The live page of one application's retries, on the JDK's built-in HTTP server: pending retries by service, the
 * oldest pending call, outcomes per minute over the last hour (inline SVG), the newest dead letters with replay and
 * purge buttons, and one call's history. Paths:
 * <ul>
 *   <li>{@code GET /}: the page (HTML and a small inline script that polls {@code state.json});</li>
 *   <li>{@code GET /state.json}, {@code GET /call.json?id=<retry.id>}: what the page shows;</li>
 *   <li>{@code POST /replay}, {@code POST /purge}: form fields {@code token}, {@code target} (a {@code retry.id},
 *       {@code all}, or filter words as the QoS command takes them) and, for a replay, {@code rate}.</li>
 * </ul>
 * A state-changing request is refused (403, nothing changes) unless it is a POST carrying the process's
 * {@link ConsoleToken}; every request is refused whose {@code Host} header is not an address, {@code localhost}, or the
 * configured host (a DNS-rebinding page would send its own name). See {@link ConsoleRequests}.
 *
 * <p><b>Threading:</b> the server answers on two daemon threads of its own ({@code rpc-timer-console}); dead-letter
 * requests block one of them on the store. {@link #close()} is idempotent and may be called from any thread.
 */
public final class FailbackConsole implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(FailbackConsole.class.getName());

    private final HttpServer server;
    private final ExecutorService threads;
    private final String application;

    private FailbackConsole(HttpServer server, ExecutorService threads, String application) {
        this.server = server;
        this.threads = threads;
        this.application = application;
    }

    /**
     * Starts the console of {@code lifecycle}'s application and feeds its outcome chart from the lifecycle's events.
     *
     * @param host the address to bind, such as {@code 127.0.0.1}
     * @param port the TCP port, 0 for any free one
     * @throws UncheckedIOException if the port cannot be bound
     */
    public static FailbackConsole start(RetryLifecycle lifecycle, String host, int port) {
        OutcomesPerMinute outcomes = new OutcomesPerMinute();
        lifecycle.addListener(outcomes);
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (IOException e) {
            throw new UncheckedIOException("failback.console: cannot listen on " + host + ":" + port + ": " + e, e);
        }
        ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "rpc-timer-console");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(threads);
        server.createContext("/", new ConsoleRequests(lifecycle, outcomes, ConsoleToken.PROCESS, host)::handle);
        server.start();
        FailbackConsole console = new FailbackConsole(server, threads, lifecycle.application());
        LOG.log(Level.INFO, "rpc-timer console of application {0} at {1}", lifecycle.application(), console.url());
        return console;
    }

    /** @return the page's address, such as {@code http://127.0.0.1:8089/} */
    public String url() {
        InetSocketAddress a = server.getAddress();
        String host = a.getAddress().getHostAddress();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + "/";
    }

    /** @return the port the console listens on */
    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
        LOG.log(Level.DEBUG, "rpc-timer console of application {0} stopped", application);
    }

    /** @return the body of a request, at most {@code max} bytes */
    static String body(HttpExchange exchange, int max) throws IOException {
        try (InputStream in = exchange.getRequestBody()) {
            byte[] bytes = in.readNBytes(max + 1);
            if (bytes.length > max) {
                throw new IOException("body: more than " + max + " bytes");
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
