package io.rpctimer.spring.boot;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;

/**
 * rpc-timer for a Spring Boot application with Dubbo: the typed {@code rpc-timer.*} properties, handed to Dubbo
 * by {@link RpcTimerDubboProperties}, and the DataSource-backed stores ({@link DataSourceStores}). Off with {@code rpc-timer.enabled=false}.
 *
 * <p><b>Threading:</b> configuration; Spring calls it while the context refreshes.
 */
@AutoConfiguration(afterName = "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration")
@ConditionalOnProperty(prefix = RpcTimerProperties.PREFIX, name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(RpcTimerProperties.class)
public class RpcTimerAutoConfiguration {

    /** Static: a registry post-processor, created before the configuration itself. */
    @Bean
    static RpcTimerDubboProperties rpcTimerDubboProperties() {
        return new RpcTimerDubboProperties();
    }

    /** Eager even under lazy initialization: it must run before Dubbo creates references and exports services. */
    @Bean
    @Lazy(false)
    DataSourceStores rpcTimerDataSourceStores(RpcTimerProperties properties, Environment environment,
                                                     BeanFactory beans) {
        return new DataSourceStores(properties, environment, beans);
    }
}
