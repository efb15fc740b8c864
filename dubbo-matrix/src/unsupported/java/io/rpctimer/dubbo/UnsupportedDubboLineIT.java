package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.HashMap;
import java.util.Map;
import org.apache.dubbo.common.Version;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * On a Dubbo line rpc-timer does not support (the matrix's profiles {@code dubbo-2.7} and {@code dubbo-3.0}), each of
 * its extensions fails where Dubbo first uses it, with one message that names the running Dubbo and the supported
 * range, and never with a {@link LinkageError} ({@code NoClassDefFoundError}, {@code NoSuchMethodError}). Compiled
 * against that line's Dubbo, with only the API Dubbo 2.7 and 3.x share. Each test runs in its own JVM (failsafe).
 */
@Timeout(60)
class UnsupportedDubboLineIT {

    /** The Dubbo on the classpath, as the profile names it. */
    private static final String LINE = System.getProperty("matrix.dubbo.version");
    /** One application for the JVM: Dubbo 2.7 and 3.0 keep one JVM-wide config manager that refuses a second. */
    private static final ApplicationConfig APPLICATION = application();

    @Test
    void theRunningDubboIsTheProfilesLine() {
        assertNotNull(LINE, "run by the dubbo-matrix profiles, which set matrix.dubbo.version");
        assertEquals(LINE, Version.getVersion());
    }

    @Test
    void creatingAWheelfailbackReference_failsNamingTheLine() {
        ReferenceConfig<GreetingService> ref = reference(Map.of());
        ref.setCluster("wheelfailback");
        assertUnsupported(assertThrows(RuntimeException.class, ref::get), "cluster wheelfailback");
    }

    @Test
    void activatingTimeoutcheck_failsNamingTheLine() {
        ReferenceConfig<GreetingService> ref = reference(Map.of("timeoutcheck", "true"));
        assertUnsupported(assertThrows(RuntimeException.class, ref::get), "filter timeoutcheck");
    }

    @Test
    void exportingARetrydedupService_failsNamingTheLine() {
        ProtocolConfig protocol = new ProtocolConfig("dubbo", freePort());
        protocol.setHost("127.0.0.1");
        ServiceConfig<GreetingService> service = new ServiceConfig<>();
        service.setApplication(APPLICATION);
        service.setRegistry(new RegistryConfig(RegistryConfig.NO_AVAILABLE));
        service.setProtocol(protocol);
        service.setInterface(GreetingService.class);
        service.setRef(new ScriptedGreetingService("p"));
        service.setParameters(new HashMap<>(Map.of("retrydedup", "true")));
        try {
            assertUnsupported(assertThrows(RuntimeException.class, service::export), "filter retrydedup");
        } finally {
            service.unexport();
        }
    }

    /** A reference straight to two providers that are never connected (lazy), so that a cluster joins them. */
    private static ReferenceConfig<GreetingService> reference(Map<String, String> parameters) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setApplication(APPLICATION);
        ref.setInterface(GreetingService.class);
        ref.setUrl("dubbo://127.0.0.1:" + freePort() + ";dubbo://127.0.0.1:" + freePort());
        ref.setCheck(false);
        ref.setLazy(true);
        ref.setParameters(new HashMap<>(parameters));
        return ref;
    }

    private static ApplicationConfig application() {
        ApplicationConfig ac = new ApplicationConfig("unsupported-line");
        ac.setQosEnable(false);
        return ac;
    }

    /**
     * The failure carries rpc-timer's message, and nothing on the way is a linkage error. Dubbo may wrap it: 2.7 reports
     * a filter whose constructor threw as "Extension instance (name: timeoutcheck, ...) couldn't be instantiated: null",
     * with rpc-timer's exception as the cause.
     */
    private static void assertUnsupported(Throwable thrown, String feature) {
        Throwable ours = null;
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            assertNull(t instanceof LinkageError ? t : null, "a linkage error on the way");
            if (t instanceof IllegalStateException && t.getMessage() != null
                    && t.getMessage().startsWith("rpc-timer supports")) {
                ours = t;
            }
        }
        assertNotNull(ours, "rpc-timer's message in the failure: " + thrown);
        String expected = "rpc-timer supports Dubbo 3.1 to 3.3; this is Dubbo " + LINE + ", which has no ";
        assertTrue(ours.getMessage().startsWith(expected), ours.getMessage());
        assertTrue(ours.getMessage().endsWith(", so " + feature + " cannot run on it"), ours.getMessage());
        System.out.println("---8<--- Dubbo " + LINE + ", " + feature + "\n" + thrown + "\n---8<---");
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
