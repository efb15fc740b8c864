package io.rpctimer.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * TCP port helpers on 127.0.0.1.
 *
 * <p>Thread-safe (stateless).
 */
public final class Ports {
    private static final int CONNECT_TIMEOUT_MILLIS = 200;

    private Ports() {}

    /**
     * Returns a port that was free on 127.0.0.1 a moment ago (the kernel's choice for port 0). Another process may
     * take it before the caller binds it; callers that bind at once rarely lose that race.
     *
     * @return a port number in 1..65535
     * @throws UncheckedIOException if no socket can be opened
     */
    public static int free() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port on 127.0.0.1", e);
        }
    }

    /**
     * Tells whether something accepts connections on 127.0.0.1:{@code port}.
     *
     * @param port the port, 1..65535
     * @return true if a connection was accepted within 200 ms
     * @throws IllegalArgumentException if {@code port} is out of range
     */
    public static boolean isListening(int port) {
        checkPort("port", port);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), CONNECT_TIMEOUT_MILLIS);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Checks a port argument.
     *
     * @param name the parameter name used in the message
     * @param port the value
     * @return {@code port}
     * @throws IllegalArgumentException {@code "<name>: <port> (expected: 1..65535)"}
     */
    public static int checkPort(String name, int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(name + ": " + port + " (expected: 1..65535)");
        }
        return port;
    }
}
