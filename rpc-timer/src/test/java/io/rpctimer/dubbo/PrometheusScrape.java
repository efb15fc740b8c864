package io.rpctimer.dubbo;

import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.dubbo.metrics.MetricsGlobalRegistry;
import org.apache.dubbo.rpc.model.ApplicationModel;

/**
 * An application's Dubbo meter registry read through a Prometheus registry, as Dubbo's Prometheus reporter reads it.
 * Load it only where Micrometer and Dubbo's metrics support are present
 * ({@link FailbackMeterListener#micrometerPresent}).
 */
final class PrometheusScrape implements AutoCloseable {

    private final PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    PrometheusScrape(ApplicationModel app) {
        ((CompositeMeterRegistry) MetricsGlobalRegistry.getCompositeRegistry(app)).add(prometheus);
    }

    String scrape() {
        return prometheus.scrape();
    }

    @Override
    public void close() {
        prometheus.close();
    }
}
