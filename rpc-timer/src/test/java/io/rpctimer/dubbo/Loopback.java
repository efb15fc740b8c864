package io.rpctimer.dubbo;

import java.lang.reflect.Field;
import java.net.InetAddress;
import org.apache.dubbo.common.utils.NetUtils;

/**
 * Keeps Dubbo on 127.0.0.1. Dubbo 3.3 treats 127.x as an "invalid local host" and substitutes the first network
 * card's address, both for where a consumer connects and for what a provider registers; seeding NetUtils' cached
 * local address makes it answer 127.0.0.1 everywhere. Call before any Dubbo bootstrap in the JVM.
 */
final class Loopback {

    private Loopback() {
    }

    static synchronized void force() {
        try {
            set("LOCAL_ADDRESS", InetAddress.getLoopbackAddress());
            set("HOST_ADDRESS", "127.0.0.1");
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Dubbo's NetUtils changed: cannot pin 127.0.0.1", e);
        }
    }

    private static void set(String field, Object value) throws ReflectiveOperationException {
        Field f = NetUtils.class.getDeclaredField(field);
        f.setAccessible(true);
        f.set(null, value);
    }
}
