package io.rpctimer.spring.boot.actuate;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import org.apache.dubbo.metrics.MetricsGlobalRegistry;
import org.springframework.beans.factory.DisposableBean;

/**
 * Puts the failback meters ({@code dubbo.consumer.failback.*}) in Spring Boot's {@link MeterRegistry}. rpc-timer
 * registers them in Dubbo's own registry ({@link MetricsGlobalRegistry}); this adds Boot's registry to it, as Dubbo's
 * Actuator support does for Dubbo's own meters, so they appear in {@code /actuator/metrics}, a Prometheus scrape and
 * every other registry Boot configures. Meters registered before are copied in when the registry is added. Removed
 * again when the context closes.
 *
 * <p>With {@code dubbo.metrics.use-global-registry=true} Dubbo registers in Micrometer's global registry instead,
 * which Boot already feeds unless {@code management.metrics.use-global-registry=false}.
 *
 * <p><b>Threading:</b> Spring creates and destroys it on the context's thread.
 */
final class FailbackMeterRegistryBinder implements DisposableBean {

    private final MeterRegistry boot;
    private final CompositeMeterRegistry dubbo;

    FailbackMeterRegistryBinder(MeterRegistry boot) {
        this.boot = boot;
        this.dubbo = MetricsGlobalRegistry.getCompositeRegistry();
        if (dubbo != boot) {
            dubbo.add(boot);
        }
    }

    @Override
    public void destroy() {
        dubbo.remove(boot);
    }
}
