package io.rpctimer.dubbo;

import java.util.HashMap;
import java.util.Map;
import org.apache.dubbo.config.ServiceConfig;

/** The export of a {@link GreetingService} with a version or parameters, for {@code DubboNode.provider(name, config)}. */
final class GreetingExport {

    private GreetingExport() {
    }

    /** @return a new config exporting {@code impl} as {@code version} (null: none) with {@code parameters} */
    static ServiceConfig<GreetingService> config(GreetingService impl, String version, Map<String, String> parameters) {
        ServiceConfig<GreetingService> sc = new ServiceConfig<>();
        sc.setInterface(GreetingService.class);
        sc.setVersion(version);
        sc.setRef(impl);
        sc.setParameters(new HashMap<>(parameters));
        return sc;
    }
}
