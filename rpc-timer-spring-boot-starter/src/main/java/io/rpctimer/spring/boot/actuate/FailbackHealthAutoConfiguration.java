package io.rpctimer.spring.boot.actuate;

import io.rpctimer.spring.boot.RpcTimerAutoConfiguration;
import io.rpctimer.spring.boot.RpcTimerProperties;
import java.time.Duration;
import java.util.Locale;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The health contributor {@code failback} ({@link FailbackHealthIndicator}), when the application has the Actuator;
 * off with {@code management.health.failback.enabled=false}. Checks {@code rpc-timer.health.*} at startup.
 *
 * <p><b>Threading:</b> configuration; Spring calls it while the context refreshes.
 */
@AutoConfiguration(after = RpcTimerAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnProperty(prefix = RpcTimerProperties.PREFIX, name = "enabled", matchIfMissing = true)
@ConditionalOnEnabledHealthIndicator("failback")
public class FailbackHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "failbackHealthIndicator")
    FailbackHealthIndicator failbackHealthIndicator(RpcTimerProperties properties, Environment environment) {
        RpcTimerProperties.Health health = properties.getHealth();
        String prefix = RpcTimerProperties.PREFIX + ".health.";
        Duration maxAge = health.getMaxPendingAge();
        if (maxAge == null || maxAge.compareTo(Duration.ofMillis(1)) < 0) {
            throw new InvalidConfigurationPropertyValueException(prefix + "max-pending-age", maxAge,
                    "expected: a duration of at least 1 ms");
        }
        String late = health.getLateStatus();
        if (late == null || !late.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw new InvalidConfigurationPropertyValueException(prefix + "late-status", late,
                    "expected: a status code such as DEGRADED or OUT_OF_SERVICE (letters, digits, '_')");
        }
        Duration window = health.getJournalFailureWindow();
        if (window == null || window.compareTo(Duration.ofMillis(1)) < 0) {
            throw new InvalidConfigurationPropertyValueException(prefix + "journal-failure-window", window,
                    "expected: a duration of at least 1 ms");
        }
        return new FailbackHealthIndicator(new Lifecycles(environment), maxAge,
                new Status(late.toUpperCase(Locale.ROOT)),
                new JournalFailures(window.toMillis(), System::currentTimeMillis));
    }
}
