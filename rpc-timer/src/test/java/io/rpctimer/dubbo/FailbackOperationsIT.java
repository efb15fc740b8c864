package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.dubbo.config.ApplicationConfig;
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

    private final ScriptedGreetingService s1 = new ScriptedGreetingService("p1");
    private final ScriptedGreetingService s2 = new ScriptedGreetingService("p2");
    private final PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final HttpClient http = HttpClient.newHttpClient();
    private final int qosPort = DubboNode.freePort();
    private DubboNode p1;
    private DubboNode p2;
    private FrameworkModel framework;
    private MeterRegistry dubboRegistry;

    @BeforeEach
    void start() {
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        s1.hangMillis = 30_000;
        s2.hangMillis = 30_000;
        p1 = DubboNode.provider("p1", s1);
        p2 = DubboNode.provider("p2", s2);
    }

    @AfterEach
    void stop() {
        s1.releaseHung();
        s2.releaseHung();
        if (framework != null) {
            framework.destroy();
        }
        if (dubboRegistry instanceof io.micrometer.core.instrument.composite.CompositeMeterRegistry c) {
            c.remove(prometheus);
        }
        prometheus.close();
        p1.close();
        p2.close();
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
        String overview = await().atMost(Duration.ofSeconds(10)).until(() -> qos("/failback"),
                out -> out.contains("pending=1 oldestPendingAgeMillis="));
        assertTrue(overview.contains("application " + APP + ": failedCalls=2 pending=1"), overview);
        assertTrue(overview.contains("abandoned=1"), overview);
        assertTrue(overview.contains("wheel: pending="), overview);
        String telnet = telnet("failback ops-notify-1");
        assertTrue(telnet.contains("retry.id=ops-notify-1:\n"), "the same command over telnet: " + telnet);
        String history = qos("/failback/ops-notify-1");
        assertTrue(history.startsWith("retry.id=ops-notify-1:"), history);
        assertTrue(history.contains("SCHEDULED application=" + APP + " reference=" + IFACE + " method=notify"
                + " attempt=1"), history);
        assertTrue(history.contains("FAILED"), "retries that timed out: " + history);
        print("failback (pending)", overview);
        print("failback ops-notify-1", history);

        s1.releaseHung();
        s2.releaseHung();
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
        print("failback (delivered)", qos("/failback"));
        print("Prometheus scrape", scrape.lines().filter(l -> l.contains("dubbo_consumer_failback_"))
                .collect(java.util.stream.Collectors.joining("\n")));
    }

    /** The application's first wheelfailback reference is created after the application and its module started. */
    @Test
    void referenceCreatedAfterStart_isCounted() {
        ApplicationModel app = startConsumer();
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>(app.getDefaultModule());
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(200);
        ref.setParameters(new java.util.HashMap<>(Map.of("failback.delay", "200", "failback.jitter", "0")));
        DubboNode.aim(ref, p1, p2);
        GreetingService svc = ref.get();

        assertNull(svc.notify("late"));
        s1.releaseHung();
        s2.releaseHung();
        await().atMost(Duration.ofSeconds(30)).until(() -> scrape().contains(series("outcomes_total",
                "notify", "delivered")));
    }

    private GreetingService consumer(Map<String, String> params) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(200);
        ref.setParameters(new java.util.HashMap<>(params));
        DubboNode.aim(ref, p1, p2);
        startConsumer(ref);
        return ref.get();
    }

    /** Starts the consumer application, QoS on, Dubbo's registry read through {@link #prometheus}. */
    private ApplicationModel startConsumer(ReferenceConfig<?>... references) {
        framework = new FrameworkModel();
        ApplicationModel app = framework.newApplication();
        app.modelEnvironment().updateAppConfigMap(Map.of(
                "dubbo.application.migration.step", "FORCE_INTERFACE"));
        ApplicationConfig ac = new ApplicationConfig(APP);
        ac.setQosEnable(true);
        ac.setQosHost("127.0.0.1");
        ac.setQosPort(qosPort);
        ac.setQosAcceptForeignIp(false);
        ac.setRegisterMode("interface");
        ac.setMetadataType("local");
        ac.setEnableFileCache(false);
        dubboRegistry = MetricsGlobalRegistry.getCompositeRegistry(app);
        ((io.micrometer.core.instrument.composite.CompositeMeterRegistry) dubboRegistry).add(prometheus);
        DubboBootstrap bootstrap = DubboBootstrap.getInstance(app).application(ac)
                .registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE));
        for (ReferenceConfig<?> r : references) {
            bootstrap.reference(r);
        }
        bootstrap.start();
        return app;
    }

    private String qos(String path) throws IOException, InterruptedException {
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + qosPort + path))
                .timeout(Duration.ofSeconds(10)).GET().build();
        return http.send(get, HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Sends one command line on the QoS port as a telnet client does, and reads up to the next prompt. */
    private String telnet(String line) throws IOException {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", qosPort)) {
            socket.setSoTimeout(10_000);
            java.io.InputStream in = socket.getInputStream();
            readUntilPrompt(in); // Dubbo greets a client that sends nothing first
            socket.getOutputStream().write((line + "\r\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return readUntilPrompt(in);
        }
    }

    private static String readUntilPrompt(java.io.InputStream in) throws IOException {
        StringBuilder out = new StringBuilder();
        while (!out.toString().endsWith("dubbo>")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("QoS closed the connection after: " + out);
            }
            out.append((char) b);
        }
        return out.toString();
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
