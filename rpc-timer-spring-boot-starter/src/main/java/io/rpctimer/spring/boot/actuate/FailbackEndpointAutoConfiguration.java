package io.rpctimer.spring.boot.actuate;

import io.rpctimer.spring.boot.RpcTimerAutoConfiguration;
import io.rpctimer.spring.boot.RpcTimerProperties;
import java.util.List;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The {@code failback} Actuator endpoint ({@link FailbackEndpoint}) and its {@code calls} and {@code dead} sections, when the
 * application has the Actuator and the endpoint is available ({@code management.endpoint.failback.*}).
 *
 * <p><b>Threading:</b> configuration; Spring calls it while the context refreshes.
 */
@AutoConfiguration(after = RpcTimerAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnProperty(prefix = RpcTimerProperties.PREFIX, name = "enabled", matchIfMissing = true)
@ConditionalOnAvailableEndpoint(endpoint = FailbackEndpoint.class)
public class FailbackEndpointAutoConfiguration {

    @Bean
    CallHistorySection failbackCallsSection(Environment environment) {
        return new CallHistorySection(new Lifecycles(environment));
    }

    @Bean
    DeadLettersSection failbackDeadSection(Environment environment) {
        return new DeadLettersSection(new Lifecycles(environment));
    }

    @Bean
    @ConditionalOnMissingBean
    FailbackEndpoint failbackEndpoint(Environment environment, List<FailbackSection> sections) {
        return new FailbackEndpoint(new Lifecycles(environment), sections);
    }
}
