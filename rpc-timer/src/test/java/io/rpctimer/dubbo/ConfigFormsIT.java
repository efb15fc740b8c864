package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.testkit.DubboLine;
import io.rpctimer.testkit.DubboNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.annotation.DubboReference;
import org.apache.dubbo.config.spring.ReferenceBean;
import org.apache.dubbo.config.spring.context.annotation.EnableDubbo;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.support.ClassPathXmlApplicationContext;

/**
 * The configuration forms docs/configuration.md shows, each against real providers: a failed call must come back empty and
 * its retry be delivered, which only {@code wheelfailback} does.
 */
@org.junit.jupiter.api.Timeout(120)
class ConfigFormsIT {

    private final ScriptedGreetingService s1 = new ScriptedGreetingService("p1");
    private final ScriptedGreetingService s2 = new ScriptedGreetingService("p2");
    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();
    private final RetryListener listener = events::add;
    private DubboNode p1;
    private DubboNode p2;
    /** Spring's consumer runs in Dubbo's default model; created first so that no provider's model becomes it. */
    private FrameworkModel springModel;

    @BeforeEach
    void start() {
        springModel = FrameworkModel.defaultModel();
        p1 = DubboNode.provider("p1", GreetingService.class, s1);
        p2 = DubboNode.provider("p2", GreetingService.class, s2);
        // a hang far past the consumers' timeout (2 s: long enough for a loaded machine to answer the retry)
        s1.hangMillis = 60_000;
        s2.hangMillis = 60_000;
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        System.setProperty("providers", "dubbo://127.0.0.1:" + p1.protocolPort() + ";dubbo://127.0.0.1:" + p2.protocolPort());
        WheelFailback.addListener(listener);
    }

    @AfterEach
    void stop() {
        s1.releaseHung();
        s2.releaseHung();
        p1.close();
        p2.close();
        WheelFailback.removeListener(listener);
        System.clearProperty("providers");
    }

    private void assertFailsBackThenDelivers(GreetingService svc) {
        assertNull(svc.notify("form"));
        assertEquals(1, events.stream().filter(e -> e.type() == RetryEvent.Type.SCHEDULED).count());
        s1.releaseHung();
        s2.releaseHung();
        await().atMost(Duration.ofSeconds(30)).until(() -> events.stream()
                .anyMatch(e -> e.type() == RetryEvent.Type.DELIVERED));
    }

    @Test
    void xml() {
        try (ClassPathXmlApplicationContext ctx = new ClassPathXmlApplicationContext("io/rpctimer/dubbo/consumer.xml")) {
            assertFailsBackThenDelivers(ctx.getBean("greeting", GreetingService.class));
        } finally {
            springModel.destroy();
        }
    }

    @Configuration
    @EnableDubbo
    static class AnnotationConsumer {
        @Bean
        @DubboReference(url = "${providers}", cluster = "wheelfailback", timeout = 2000, check = false,
                parameters = {"failback.delay", "300"})
        ReferenceBean<GreetingService> greeting() {
            return new ReferenceBean<>();
        }

        @Bean
        org.apache.dubbo.config.ApplicationConfig application() {
            org.apache.dubbo.config.ApplicationConfig app = new org.apache.dubbo.config.ApplicationConfig("ann");
            app.setQosEnable(false);
            return app;
        }

        @Bean
        org.apache.dubbo.config.RegistryConfig registry() {
            return new org.apache.dubbo.config.RegistryConfig("N/A");
        }
    }

    @Test
    void annotation() {
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext(AnnotationConsumer.class)) {
            assertFailsBackThenDelivers(ctx.getBean(GreetingService.class));
        } finally {
            springModel.destroy();
        }
    }

    /** The keys a Spring Boot application.properties gives dubbo-spring-boot-starter, here fed to Dubbo directly. */
    @Test
    void properties() {
        FrameworkModel framework = new FrameworkModel();
        ApplicationModel app = framework.defaultApplication();
        DubboLine.environment(app).updateAppConfigMap(Map.of(
                "dubbo.application.name", "props-consumer",
                "dubbo.application.qos-enable", "false",
                "dubbo.registry.address", "N/A",
                "dubbo.consumer.cluster", "wheelfailback",
                "dubbo.consumer.timeout", "2000",
                "dubbo.consumer.check", "false",
                "dubbo.consumer.parameters.failback.delay", "300"));
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>(app.getDefaultModule());
        ref.setInterface(GreetingService.class);
        ref.setUrl(System.getProperty("providers"));
        try {
            org.apache.dubbo.config.bootstrap.DubboBootstrap.getInstance(app).reference(ref).start();
            GreetingService svc = ref.get();
            assertFailsBackThenDelivers(svc);
            long delay = events.stream().filter(e -> e.type() == RetryEvent.Type.SCHEDULED).findFirst()
                    .orElseThrow().delayMillis();
            assertEquals(300, delay, 300 * 0.2 + 1, "failback.delay from the properties");
        } finally {
            framework.destroy();
            springModel.destroy();
        }
    }
}
