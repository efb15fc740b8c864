package io.rpctimer.spring.boot.actuate;

import io.micrometer.core.instrument.MeterRegistry;
import io.rpctimer.spring.boot.RpcTimerAutoConfiguration;
import io.rpctimer.spring.boot.RpcTimerProperties;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The failback meters in Boot's {@link MeterRegistry} ({@link FailbackMeterRegistryBinder}), when the application
 * has one and Dubbo's metrics support is on the class path.
 *
 * <p><b>Threading:</b> configuration; Spring calls it while the context refreshes.
 */
@AutoConfiguration(after = RpcTimerAutoConfiguration.class, afterName = {
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass(name = {"io.micrometer.core.instrument.MeterRegistry", "org.apache.dubbo.metrics.MetricsGlobalRegistry"})
@ConditionalOnProperty(prefix = RpcTimerProperties.PREFIX, name = "enabled", matchIfMissing = true)
@ConditionalOnBean(type = "io.micrometer.core.instrument.MeterRegistry")
public class FailbackMetricsAutoConfiguration {

    @Bean
    FailbackMeterRegistryBinder failbackMeterRegistryBinder(MeterRegistry registry) {
        return new FailbackMeterRegistryBinder(registry);
    }
}
