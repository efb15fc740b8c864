package io.rpctimer.dubbo;

import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.metrics.MetricsGlobalRegistry;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * A consumer application in the test JVM with its QoS port open on 127.0.0.1 (so a caller there is PRIVATE) and its
 * Dubbo meter registry read through a Prometheus registry, as Dubbo's Prometheus reporter reads it.
 */
final class QosConsumer implements AutoCloseable {

    private final FrameworkModel framework = new FrameworkModel();
    private final PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final HttpClient http = HttpClient.newHttpClient();
    private final int qosPort = DubboNode.freePort();

    /** Starts application {@code name} with {@code references}. */
    QosConsumer(String name, ReferenceConfig<?>... references) {
        ApplicationModel app = framework.newApplication();
        app.modelEnvironment().updateAppConfigMap(Map.of("dubbo.application.migration.step", "FORCE_INTERFACE"));
        ApplicationConfig ac = new ApplicationConfig(name);
        ac.setQosEnable(true);
        ac.setQosHost("127.0.0.1");
        ac.setQosPort(qosPort);
        ac.setQosAcceptForeignIp(false);
        ac.setRegisterMode("interface");
        ac.setMetadataType("local");
        ac.setEnableFileCache(false);
        ((CompositeMeterRegistry) MetricsGlobalRegistry.getCompositeRegistry(app)).add(prometheus);
        DubboBootstrap bootstrap = DubboBootstrap.getInstance(app).application(ac)
                .registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE));
        Arrays.stream(references).forEach(bootstrap::reference);
        bootstrap.start();
    }

    /**
     * Runs {@code failback word word ...} over HTTP as a script would: {@code GET /failback?a=word&a=word}, which
     * Dubbo's QoS front reads as the words in order.
     *
     * @return the answer's body
     */
    String failback(String... words) throws IOException, InterruptedException {
        String query = Arrays.stream(words).map(w -> "a=" + URLEncoder.encode(w, StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + qosPort + "/failback?" + query))
                .timeout(Duration.ofSeconds(30)).GET().build();
        return http.send(get, HttpResponse.BodyHandlers.ofString()).body();
    }

    String scrape() {
        return prometheus.scrape();
    }

    @Override
    public void close() {
        framework.destroy();
        prometheus.close();
    }
}
