package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.mock;

import java.lang.reflect.InvocationTargetException;
import org.apache.dubbo.common.Version;
import org.apache.dubbo.rpc.Exporter;
import org.apache.dubbo.rpc.ExporterListener;
import org.apache.dubbo.rpc.cluster.Cluster;
import org.apache.dubbo.rpc.cluster.Directory;
import org.junit.jupiter.api.Test;

/**
 * Which Dubbo lines rpc-timer runs on, decided by the APIs the running Dubbo has. The baseline Dubbo on the test
 * classpath has them all; a Dubbo without one is simulated by hiding that class from rpc-timer's classes (a separate
 * class loader), and each extension then fails where Dubbo first uses it, with the message naming the line. The real
 * Dubbo 2.7 and 3.0 are run by the dubbo-matrix module ({@code UnsupportedDubboLineIT}).
 */
class DubboSupportTest {

    private static final String HIDDEN = "org.apache.dubbo.common.logger.ErrorTypeAwareLogger";

    @Test
    void onTheBaseline_everyRequiredApiAndEveryCapabilityIsFound() {
        assertNull(DubboSupport.problem("cluster wheelfailback"));
        assertTrue(DubboCompat.INVOKED_INVOKERS, "Invocation.addInvokedInvoker");
        assertTrue(DubboCompat.SERIALIZATION_OR_DEFAULT, "UrlUtils.serializationOrDefault");
    }

    @Test
    void firstMissing_namesTheFirstApiTheLoaderLacks() {
        ClassLoader loader = getClass().getClassLoader();
        assertNull(DubboSupport.firstMissing(loader, "org.apache.dubbo.rpc.RpcServiceContext",
                "org.apache.dubbo.rpc.support.RpcUtils#getTimeout(org.apache.dubbo.common.URL,java.lang.String,"
                        + "org.apache.dubbo.rpc.RpcContext,org.apache.dubbo.rpc.Invocation,long)"));
        assertEquals("org.apache.dubbo.rpc.support.RpcUtils#getTimeout(long)", DubboSupport.firstMissing(loader,
                "org.apache.dubbo.rpc.RpcServiceContext", "org.apache.dubbo.rpc.support.RpcUtils#getTimeout(long)",
                "org.example.Absent"));
    }

    @Test
    void withoutARequiredApi_joiningAWheelfailbackReferenceFailsNamingTheLine() throws Exception {
        try (HidingLoader loader = new HidingLoader(HIDDEN)) {
            Cluster cluster = (Cluster) newInstance(loader, WheelFailbackCluster.class);
            @SuppressWarnings("unchecked")
            Directory<GreetingService> directory = mock(Directory.class);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> cluster.join(directory, false));
            assertUnsupported(e, "cluster wheelfailback");
        }
    }

    @Test
    void withoutARequiredApi_activatingTimeoutcheckFailsNamingTheLine() throws Exception {
        try (HidingLoader loader = new HidingLoader(HIDDEN)) {
            InvocationTargetException e = assertThrows(InvocationTargetException.class,
                    () -> newInstance(loader, TimeoutCheckFilter.class));
            assertUnsupported(assertInstanceOf(IllegalStateException.class, e.getCause()), "filter timeoutcheck");
        }
    }

    @Test
    void withoutARequiredApi_exportingARetrydedupServiceFailsNamingTheLine() throws Exception {
        try (HidingLoader loader = new HidingLoader(HIDDEN)) {
            ExporterListener check = (ExporterListener) newInstance(loader, RetryDedupExportCheck.class);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> check.exported(
                    mock(Exporter.class)));
            assertUnsupported(e, "filter retrydedup");
        }
    }

    private static Object newInstance(HidingLoader loader, Class<?> type) throws ReflectiveOperationException {
        return loader.loadClass(type.getName()).getConstructor().newInstance();
    }

    private static void assertUnsupported(IllegalStateException e, String feature) {
        assertEquals("rpc-timer supports Dubbo 3.1 to 3.3; this is Dubbo " + Version.getVersion() + ", which has no "
                + HIDDEN + ", so " + feature + " cannot run on it", e.getMessage());
    }
}
