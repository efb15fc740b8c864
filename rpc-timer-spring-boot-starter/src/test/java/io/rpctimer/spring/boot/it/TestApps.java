package io.rpctimer.spring.boot.it;

import io.rpctimer.spring.boot.it.provider.GreetingProvider;
import io.rpctimer.testkit.Loopback;
import java.util.ArrayList;
import java.util.List;
import org.apache.dubbo.config.annotation.DubboReference;
import org.apache.dubbo.config.spring.ReferenceBean;
import org.apache.dubbo.config.spring.context.annotation.EnableDubbo;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The consumer and the provider application of the starter's integration tests, and what both need: Dubbo on
 * 127.0.0.1, a ZooKeeper registry, and properties that keep start and stop fast.
 */
public final class TestApps {

    static {
        Loopback.force(); // before any Dubbo application of the test JVM starts
    }

    private TestApps() {
    }

    /** A consumer of {@link GreetingApi}; its cluster comes from {@code rpc-timer.default-cluster}. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    public static class Consumer {

        @Bean
        @DubboReference(check = false, timeout = 1000)
        ReferenceBean<GreetingApi> greeting() {
            return new ReferenceBean<>();
        }
    }

    /** A provider of {@link GreetingApi} ({@link GreetingProvider}). */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @EnableDubbo(scanBasePackageClasses = GreetingProvider.class)
    public static class Provider {
    }

    /** @return properties every test application has: its name, the registry, loopback, no QoS, fast stop */
    public static List<String> common(String application, String zooKeeper) {
        return new ArrayList<>(List.of(
                "dubbo.application.name=" + application,
                "dubbo.application.qos-enable=false",
                "dubbo.application.register-mode=interface",
                "dubbo.application.metadata-type=local",
                "dubbo.application.enable-file-cache=false",
                "dubbo.application.service-discovery.migration=FORCE_INTERFACE",
                "dubbo.registry.address=zookeeper://" + zooKeeper,
                "dubbo.protocol.name=dubbo",
                "dubbo.protocol.host=127.0.0.1",
                "dubbo.protocol.port=-1",
                "dubbo.service.shutdown.wait=300"));
    }

    /**
     * Registers a consumer's properties: {@link #common}, the database as its {@code DataSource}, the Actuator's
     * {@code health} and {@code failback} over HTTP with details, Tomcat's working directory under {@code target}
     * (by default a directory in the system's temporary directory that outlives the JVM), then {@code extra}.
     */
    public static void consumer(DynamicPropertyRegistry registry, String application, Infrastructure infrastructure,
                                String... extra) {
        List<String> all = common(application, infrastructure.zooKeeper());
        all.addAll(infrastructure.dataSource());
        all.addAll(List.of("management.endpoints.web.exposure.include=health,failback",
                "management.endpoint.health.show-details=always",
                "server.tomcat.basedir=target/tomcat"));
        all.addAll(List.of(extra));
        register(registry, all);
    }

    /** Gives each {@code key=value} of {@code properties} to a {@code @DynamicPropertySource} registry. */
    public static void register(DynamicPropertyRegistry registry, List<String> properties) {
        for (String p : properties) {
            int eq = p.indexOf('=');
            registry.add(p.substring(0, eq), () -> p.substring(eq + 1));
        }
    }
}
