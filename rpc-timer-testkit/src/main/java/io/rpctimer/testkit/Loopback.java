package io.rpctimer.testkit;

import org.apache.dubbo.common.utils.NetUtils;

import java.lang.reflect.Field;
import java.net.InetAddress;

/**
 * Keeps every Dubbo address in this JVM on 127.0.0.1.
 *
 * <p>Dubbo 3.3 treats every {@code 127.*} host as "invalid" ({@code NetUtils.isInvalidLocalHost}) and replaces it with
 * {@code NetUtils.getLocalHost()}, the first non-loopback interface: a consumer asked for {@code dubbo://127.0.0.1:p}
 * connects to {@code <nic>:p}, and a provider with protocol host 127.0.0.1 registers {@code <nic>}. {@link #force()}
 * pre-seeds NetUtils' two private caches so that {@code getLocalHost()} answers 127.0.0.1 everywhere.
 * Providers still bind 0.0.0.0: Dubbo maps an "invalid" bind host to the wildcard address.
 *
 * <p>Call it before the first Dubbo bootstrap in the JVM; {@link DubboNode} does so in its static initializer.
 *
 * <p>Thread-safe and idempotent.
 */
public final class Loopback {
    /** The only host the kit uses. */
    public static final String HOST = "127.0.0.1";

    private Loopback() {}

    /**
     * Makes {@code NetUtils.getLocalHost()} return 127.0.0.1 for the rest of the JVM's life.
     *
     * @throws IllegalStateException if Dubbo's {@code NetUtils} no longer has the expected private fields
     */
    public static synchronized void force() {
        try {
            set("LOCAL_ADDRESS", InetAddress.getLoopbackAddress());
            set("HOST_ADDRESS", HOST);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Dubbo NetUtils layout changed: cannot force " + HOST, e);
        }
        String localHost = NetUtils.getLocalHost();
        if (!HOST.equals(localHost)) {
            throw new IllegalStateException("NetUtils.getLocalHost(): " + localHost + " (expected: " + HOST + ")");
        }
    }

    private static void set(String field, Object value) throws ReflectiveOperationException {
        Field f = NetUtils.class.getDeclaredField(field);
        f.setAccessible(true);
        f.set(null, value);
    }
}
