package io.rpctimer.dubbo;

import io.rpctimer.console.FailbackConsole;
import io.rpctimer.retry.RetryLifecycle;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import org.apache.dubbo.common.URL;

/**
 * Whether and where an application serves its console ({@link FailbackConsole}), read once from the consumer URL of
 * its first {@code wheelfailback} reference, like the store's keys ({@link FailbackStore#value}: the URL, else the JVM
 * system property {@code rpctimer.<key>}):
 * <ul>
 *   <li>{@value #PORT}: the TCP port of the page, 1 to 65535 (default: none, no console);</li>
 *   <li>{@value #HOST}: the address it binds (default {@value #DEFAULT_HOST}: only this host's browsers reach it).</li>
 * </ul>
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param port the port, or -1 for no console
 * @param host the address to bind
 */
record ConsoleConfig(int port, String host) {

    static final String PORT = "failback.console.port";
    static final String HOST = "failback.console.host";
    static final String DEFAULT_HOST = "127.0.0.1";

    private static final System.Logger LOG = System.getLogger(ConsoleConfig.class.getName());

    /** @throws IllegalArgumentException naming key and value, if {@value #PORT} or {@value #HOST} is invalid */
    static ConsoleConfig of(URL url) {
        String host = FailbackStore.value(url, HOST, DEFAULT_HOST).trim();
        if (host.isEmpty()) {
            throw FailbackStore.invalid(url, HOST, host, "an address to bind, such as 127.0.0.1");
        }
        String raw = FailbackStore.value(url, PORT, null);
        if (raw == null) {
            return new ConsoleConfig(-1, host);
        }
        try {
            int port = Integer.parseInt(raw.trim());
            if (port >= 1 && port <= 65_535) {
                return new ConsoleConfig(port, host);
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw FailbackStore.invalid(url, PORT, raw, "a TCP port, 1 to 65535");
    }

    /**
     * Starts the console of {@code lifecycle}'s application, if one is configured. A port that cannot be bound is
     * logged and leaves the application without a console: the retries matter more than their page.
     *
     * @return the console, or null
     */
    FailbackConsole start(RetryLifecycle lifecycle) {
        if (port < 0) {
            return null;
        }
        try {
            return FailbackConsole.start(lifecycle, host, port);
        } catch (UncheckedIOException e) {
            LOG.log(Level.WARNING, "wheelfailback: no console for application " + lifecycle.application() + ": "
                    + e.getMessage());
            return null;
        }
    }
}
