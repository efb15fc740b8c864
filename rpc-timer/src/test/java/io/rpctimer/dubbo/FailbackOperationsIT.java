package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rpctimer.testkit.Ports;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.metrics.MetricsGlobalRegistry;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Operating wheelfailback over real Dubbo RPC on 127.0.0.1: the meters in Dubbo's own registry (read through a
 * Prometheus registry added to it, as Dubbo's Prometheus reporter does) and the QoS command {@code failback} on the
 * consumer's real QoS port. Two hanging providers make every attempt time out; {@code sayHello} may retry once and
 * is abandoned, {@code notify} keeps retrying until the providers answer and is delivered.
 *
 * <p>The scrape and the command's output are printed (between {@code ---8<---} lines) for docs/operations.md.
 */
@org.junit.jupiter.api.Timeout(120)
class FailbackOperationsIT {

    private static final String APP = "ops-consumer";
    private static final String IFACE = GreetingService.class.getName();

    private final PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final int qosPort = Ports.free();
    private final QosClient qos = new QosClient(qosPort);
    private HangingProviders providers;
    private FrameworkModel framework;
    private MeterRegistry dubboRegistry;

    @BeforeEach
    void start() {
        providers = new HangingProviders();
    }

    @AfterEach
    void stop() {
        providers.release();
        if (framework != null) {
            framework.destroy();
        }
        if (dubboRegistry instanceof io.micrometer.core.instrument.composite.CompositeMeterRegistry c) {
            c.remove(prometheus);
        }
        prometheus.close();
        providers.close();
    }

    @Test
    void failuresAndDeliveries_showInDubbosMeterRegistryAndTheFailbackCommand() throws Exception {
        GreetingService svc = consumer(Map.of("failback.delay", "400", "failback.jitter", "0",
                "failback.multiplier", "1", "retries", "1000", "sayHello.retries", "1"));

        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "ops-notify-1");
        assertNull(svc.notify("order-1"), "failback: the caller gets the empty result");
        assertNull(svc.sayHello("bob"));

        await().atMost(Duration.ofSeconds(30)).until(() -> scrape().contains(series("outcomes_total",
                "sayHello", "abandoned")));
        String overview = await().atMost(Duration.ofSeconds(10)).until(() -> qos.get("/failback"),
                out -> out.contains("pending=1 oldestPendingAgeMillis="));
        assertTrue(overview.contains("application " + APP + ": failedCalls=2 pending=1"), overview);
        assertTrue(overview.contains("abandoned=1"), overview);
        assertTrue(overview.contains("wheel: pending="), overview);
        String telnet = qos.telnet("failback ops-notify-1");
        assertTrue(telnet.contains("retry.id=ops-notify-1:\n"), "the same command over telnet: " + telnet);
        String history = qos.get("/failback/ops-notify-1");
        assertTrue(history.startsWith("retry.id=ops-notify-1:"), history);
        assertTrue(history.contains("SCHEDULED application=" + APP + " reference=" + IFACE + " method=notify"
                + " attempt=1"), history);
        assertTrue(history.contains("FAILED"), "retries that timed out: " + history);
        print("failback (pending)", overview);
        print("failback ops-notify-1", history);

        providers.release();
        await().atMost(Duration.ofSeconds(30)).until(() -> scrape().contains(series("outcomes_total",
                "notify", "delivered")));
        String scrape = scrape();
        assertTrue(gauge(scrape, "dubbo_consumer_failback_pending", IFACE) == 0.0, scrape);
        assertTrue(counter(scrape, "attempt_timeouts_total", "notify") >= 2, "original + at least one retry");
        assertTrue(counter(scrape, "attempt_timeouts_total", "sayHello") == 2, "original + its one retry");
        assertTrue(counter(scrape, "retries_total", "notify") >= 2, scrape);
        assertTrue(scrape.contains("dubbo_consumer_failback_retry_delay_seconds_count{application_name=\"" + APP
                + "\",interface=\"" + IFACE + "\",method=\"notify\"}"), scrape);
        assertTrue(scrape.contains("dubbo_consumer_failback_wheel_pending{application_name=\"" + APP + "\"}"),
                scrape);
        assertTrue(!scrape.contains("dubbo_consumer_failback_wheel_pending{application_name=\"p1\"}"),
                "an application without a wheelfailback reference has no failback meters");
        print("failback (delivered)", qos.get("/failback"));
        print("Prometheus scrape", scrape.lines().filter(l -> l.contains("dubbo_consumer_failback_"))
                .collect(java.util.stream.Collectors.joining("\n")));
    }

    /** The application's first wheelfailback reference is created after the application and its module started. */
    @Test
    void referenceCreatedAfterStart_isCounted() {
        ApplicationModel app = startConsumer();
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>(app.getDefaultModule());
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(2_000); // far below the 30 s hang, and room for a loaded machine to answer a retry
        ref.setParameters(new java.util.HashMap<>(Map.of("failback.delay", "200", "failback.jitter", "0")));
        providers.aim(ref);
        GreetingService svc = ref.get();

        assertNull(svc.notify("late"));
        providers.release();
        await().atMost(Duration.ofSeconds(30)).until(() -> scrape().contains(series("outcomes_total",
                "notify", "delivered")));
    }

    private GreetingService consumer(Map<String, String> params) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(200);
        ref.setParameters(new java.util.HashMap<>(params));
        providers.aim(ref);
        startConsumer(ref);
        return ref.get();
    }

    /** Starts the consumer application, QoS on, Dubbo's registry read through {@link #prometheus}. */
    private ApplicationModel startConsumer(ReferenceConfig<?>... references) {
        framework = new FrameworkModel();
        ApplicationModel app = framework.newApplication();
        app.modelEnvironment().updateAppConfigMap(Map.of(
                "dubbo.application.migration.step", "FORCE_INTERFACE"));
        dubboRegistry = MetricsGlobalRegistry.getCompositeRegistry(app);
        ((io.micrometer.core.instrument.composite.CompositeMeterRegistry) dubboRegistry).add(prometheus);
        DubboBootstrap bootstrap = DubboBootstrap.getInstance(app).application(QosClient.application(APP, qosPort))
                .registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE));
        for (ReferenceConfig<?> r : references) {
            bootstrap.reference(r);
        }
        bootstrap.start();
        return app;
    }

    private String scrape() {
        return prometheus.scrape();
    }

    private static String series(String meter, String method, String outcome) {
        return "dubbo_consumer_failback_" + meter + "{application_name=\"" + APP + "\",interface=\"" + IFACE
                + "\",method=\"" + method + "\",outcome=\"" + outcome + "\"} 1.0";
    }

    private static double counter(String scrape, String meter, String method) {
        return value(scrape, "dubbo_consumer_failback_" + meter + "{application_name=\"" + APP + "\",interface=\""
                + IFACE + "\",method=\"" + method + "\"} ");
    }

    private static double gauge(String scrape, String name, String iface) {
        return value(scrape, name + "{application_name=\"" + APP + "\",interface=\"" + iface + "\"} ");
    }

    private static double value(String scrape, String series) {
        Matcher m = Pattern.compile("^" + Pattern.quote(series) + "(\\S+)$", Pattern.MULTILINE).matcher(scrape);
        if (!m.find()) {
            throw new AssertionError("no " + series + " in\n" + scrape);
        }
        return Double.parseDouble(m.group(1));
    }

    private static void print(String title, String text) {
        System.out.println("---8<--- " + title + "\n" + text + "\n---8<---");
    }
}
