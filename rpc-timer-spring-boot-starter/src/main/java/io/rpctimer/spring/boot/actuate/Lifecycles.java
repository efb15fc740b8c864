package io.rpctimer.spring.boot.actuate;

import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.RetryLifecycle;
import java.util.List;
import org.springframework.core.env.Environment;

/**
 * The retry lifecycles an Actuator component reports: those of this Spring application's Dubbo application
 * ({@code dubbo.application.name}), or every one in the JVM when it has no name. Another application in the same JVM
 * has its own context and its own endpoint.
 *
 * <p><b>Threading:</b> immutable; each call reads the live list.
 */
final class Lifecycles {

    private final String application;

    Lifecycles(Environment environment) {
        this.application = environment.getProperty("dubbo.application.name");
    }

    /** @return the lifecycles reported, a snapshot */
    List<RetryLifecycle> current() {
        List<RetryLifecycle> all = WheelFailback.lifecycles();
        return application == null ? all : all.stream().filter(l -> application.equals(l.application())).toList();
    }
}
