package io.rpctimer.spring.boot;

import java.util.Map;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.Ordered;
import org.springframework.core.PriorityOrdered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;

/**
 * Hands the {@code rpc-timer.*} properties to Dubbo: binds and checks them ({@link DubboDefaults}) and adds the
 * resulting {@code dubbo.*} properties as the environment's last property source, {@value #SOURCE}.
 *
 * <p>Dubbo's Spring support copies every {@code dubbo.*} property of the environment into its own configuration in
 * its {@code DubboContextPostProcessor.postProcessBeanFactory}, so this runs just before, as a bean definition
 * registry post-processor: once the environment is complete (configuration files, test properties, initializers)
 * and before any bean exists. So the values reach every reference and service, a {@code dubbo.*} property the
 * application sets itself wins over the one derived here, and a bad value fails startup before Dubbo starts.
 *
 * <p><b>Threading:</b> Spring calls it once, on the thread that refreshes the context.
 */
public class RpcTimerDubboProperties implements BeanDefinitionRegistryPostProcessor, EnvironmentAware,
        BeanClassLoaderAware, PriorityOrdered {

    /** The name of the property source this adds. */
    public static final String SOURCE = "rpcTimerDubboDefaults";

    private ConfigurableEnvironment environment;
    private ClassLoader classLoader = RpcTimerDubboProperties.class.getClassLoader();

    /**
     * Adds (or replaces) the {@value #SOURCE} property source of {@code environment}.
     *
     * @param loader loads the exception classes {@code rpc-timer.failback.retry-on} names
     * @throws org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException naming the
     *         property and the value, if one is invalid
     * @throws org.springframework.boot.context.properties.bind.BindException if a value cannot be converted
     */
    public static void apply(ConfigurableEnvironment environment, ClassLoader loader) {
        environment.getPropertySources().remove(SOURCE); // a context refreshed twice derives it once
        RpcTimerProperties properties = Binder.get(environment)
                .bind(RpcTimerProperties.PREFIX, RpcTimerProperties.class).orElseGet(RpcTimerProperties::new);
        if (!properties.isEnabled()) {
            return;
        }
        Map<String, Object> dubbo = DubboDefaults.of(properties,
                environment.getProperty(DubboDefaults.CONSUMER_CLUSTER), loader);
        if (!dubbo.isEmpty()) {
            environment.getPropertySources().addLast(new MapPropertySource(SOURCE, dubbo));
        }
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = (ConfigurableEnvironment) environment;
    }

    @Override
    public void setBeanClassLoader(ClassLoader classLoader) {
        this.classLoader = classLoader;
    }

    @Override
    public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
        apply(environment, classLoader);
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        // all done before Dubbo reads the environment
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
