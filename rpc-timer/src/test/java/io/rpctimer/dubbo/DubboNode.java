package io.rpctimer.dubbo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import org.apache.dubbo.common.config.Environment;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * One Dubbo "process" in the test JVM: its own FrameworkModel and application, on 127.0.0.1, with the settings
 * that keep start and stop fast (no QoS, interface-level registration, short provider shutdown wait).
 */
final class DubboNode implements AutoCloseable {

    static {
        Loopback.force();
    }

    /** Whether {@code ApplicationModel.modelEnvironment()} exists (Dubbo 3.2+; 3.1 has only the getter). */
    private static final boolean MODEL_ENVIRONMENT = hasMethod(ApplicationModel.class, "modelEnvironment");

    private final FrameworkModel framework = new FrameworkModel();
    private final ApplicationModel app = framework.defaultApplication();
    private final DubboBootstrap bootstrap = DubboBootstrap.getInstance(app);
    final int port;

    private DubboNode(String name, int port) {
        this.port = port;
        environment(app).updateAppConfigMap(Map.of(
                "dubbo.application.migration.step", "FORCE_INTERFACE",
                "dubbo.service.shutdown.wait", "300"));
        ApplicationConfig ac = new ApplicationConfig(name);
        ac.setQosEnable(false);
        ac.setRegisterMode("interface");
        ac.setMetadataType("local");
        ac.setEnableFileCache(false);
        bootstrap.application(ac).registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE));
    }

    static DubboNode provider(String name, GreetingService impl) {
        return provider(name, impl, null);
    }

    /** A provider exporting {@code impl} as {@code version} (null: none), so one consumer can hold two references. */
    static DubboNode provider(String name, GreetingService impl, String version) {
        return provider(name, impl, version, Map.of());
    }

    /** As {@link #provider(String, GreetingService, String)}, the service carrying {@code parameters}. */
    static DubboNode provider(String name, GreetingService impl, String version, Map<String, String> parameters) {
        return provider(name, GreetingService.class, impl, version, parameters);
    }

    /** A provider of another service than {@link GreetingService}. */
    static <S> DubboNode provider(String name, Class<S> type, S impl) {
        return provider(name, type, impl, null, Map.of());
    }

    private static <S> DubboNode provider(String name, Class<S> type, S impl, String version,
                                          Map<String, String> parameters) {
        DubboNode n = new DubboNode(name, freePort());
        ProtocolConfig pc = new ProtocolConfig("dubbo", n.port);
        pc.setHost("127.0.0.1");
        ServiceConfig<S> sc = new ServiceConfig<>();
        sc.setInterface(type);
        sc.setVersion(version);
        sc.setRef(impl);
        sc.setParameters(new java.util.HashMap<>(parameters));
        try {
            n.bootstrap.protocol(pc).service(sc).start();
        } catch (RuntimeException e) {
            n.close(); // a refused export (bad parameters) leaves no server behind
            throw e;
        }
        return n;
    }

    /** A consumer whose reference goes straight to {@code providers} (two or more, so the cluster applies). */
    static DubboNode consumer(String name, ReferenceConfig<GreetingService> reference, DubboNode... providers) {
        return consumer(name, GreetingService.class, reference, providers);
    }

    /** As {@link #consumer(String, ReferenceConfig, DubboNode...)}, for another service. */
    static <S> DubboNode consumer(String name, Class<S> type, ReferenceConfig<S> reference, DubboNode... providers) {
        aim(type, reference, providers);
        return consumer(name, List.of(reference));
    }

    /** A consumer of several references, each already {@link #aim aimed} at its providers. */
    static DubboNode consumer(String name, List<? extends ReferenceConfig<?>> references) {
        DubboNode n = new DubboNode(name, -1);
        references.forEach(n.bootstrap::reference);
        n.bootstrap.start();
        return n;
    }

    /** Points {@code reference} straight at {@code providers} (two or more, so the cluster applies). */
    static void aim(ReferenceConfig<GreetingService> reference, DubboNode... providers) {
        aim(GreetingService.class, reference, providers);
    }

    private static <S> void aim(Class<S> type, ReferenceConfig<S> reference, DubboNode... providers) {
        StringBuilder urls = new StringBuilder();
        for (DubboNode p : providers) {
            urls.append(urls.length() == 0 ? "" : ";").append("dubbo://127.0.0.1:").append(p.port);
        }
        reference.setInterface(type);
        reference.setUrl(urls.toString());
        reference.setCheck(false);
    }

    /**
     * @return the application's environment, on every Dubbo line the matrix runs: {@code modelEnvironment()} since
     *         Dubbo 3.2, where the getter is deprecated, {@code getModelEnvironment()} on 3.1
     */
    @SuppressWarnings("deprecation")
    static Environment environment(ApplicationModel app) {
        return MODEL_ENVIRONMENT ? app.modelEnvironment() : app.getModelEnvironment();
    }

    /** @return whether the running Dubbo's {@code type} has a public method {@code name} without parameters */
    static boolean hasMethod(Class<?> type, String name) {
        try {
            type.getMethod(name);
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        bootstrap.stop();
        framework.destroy();
    }
}
