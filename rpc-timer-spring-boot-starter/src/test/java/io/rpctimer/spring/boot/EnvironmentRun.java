package io.rpctimer.spring.boot;

import java.util.Map;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;

/** Runs {@link RpcTimerDubboProperties} on an environment holding only the given properties. */
public final class EnvironmentRun {

    private EnvironmentRun() {
    }

    /** @return the {@code dubbo.*} properties the starter derives, empty if none */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> dubboProperties(Map<String, Object> properties) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
        RpcTimerDubboProperties.apply(environment, EnvironmentRun.class.getClassLoader());
        PropertySource<?> source = environment.getPropertySources().get(RpcTimerDubboProperties.SOURCE);
        return source == null ? Map.of() : (Map<String, Object>) source.getSource();
    }
}
