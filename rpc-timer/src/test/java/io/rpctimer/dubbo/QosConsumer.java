package io.rpctimer.dubbo;

import io.rpctimer.testkit.DubboLine;
import io.rpctimer.testkit.Ports;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * A consumer application in the test JVM with its QoS port open on 127.0.0.1 ({@link QosClient#application}: a
 * caller there is PRIVATE), and, where Micrometer and Dubbo's metrics support are on the classpath, its Dubbo meter
 * registry read through a Prometheus registry ({@link PrometheusScrape}). Written against what every Dubbo line from
 * 3.1 on has.
 */
final class QosConsumer implements AutoCloseable {

    private final FrameworkModel framework = new FrameworkModel();
    private final int qosPort = Ports.free();
    private final QosClient qos = new QosClient(qosPort);
    /** Null without Micrometer (Dubbo 3.1 has no metrics registry). */
    private final PrometheusScrape scrape;

    /** Starts application {@code name} with {@code references}. */
    QosConsumer(String name, ReferenceConfig<?>... references) {
        ApplicationModel app = framework.newApplication();
        DubboLine.environment(app).updateAppConfigMap(Map.of("dubbo.application.migration.step", "FORCE_INTERFACE"));
        scrape = FailbackMeterListener.micrometerPresent() ? new PrometheusScrape(app) : null;
        DubboBootstrap bootstrap = DubboBootstrap.getInstance(app).application(QosClient.application(name, qosPort))
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
        return qos.get("/failback?" + Arrays.stream(words).map(w -> "a=" + URLEncoder.encode(w,
                StandardCharsets.UTF_8)).collect(Collectors.joining("&")));
    }

    /** @return the Prometheus scrape of the application's Dubbo registry, or null without Micrometer */
    String scrape() {
        return scrape == null ? null : scrape.scrape();
    }

    @Override
    public void close() {
        framework.destroy();
        if (scrape != null) {
            scrape.close();
        }
    }
}
