package io.rpctimer.dubbo;

import io.rpctimer.retry.RetryPolicy;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.constants.LoggerCodeConstants;
import org.apache.dubbo.common.logger.ErrorTypeAwareLogger;
import org.apache.dubbo.common.logger.LoggerFactory;

/**
 * A reference's {@link FailbackConfig} as its consumer URL says now. A configurator (an override URL in the registry,
 * a config-center rule) replaces the directory's consumer URL; the next read after that reads the keys again. A bad
 * dynamic value cannot fail a reference that exists: it is logged, and the previous values stay.
 *
 * <p><b>Threading:</b> thread-safe; a read is one volatile read while the URL is unchanged, and a change is read
 * once, under this object's lock.
 */
final class LiveConfig {

    /** The cluster invoker's logger: where operators already look for the reference's configuration warnings. */
    private static final ErrorTypeAwareLogger LOG =
            LoggerFactory.getErrorTypeAwareLogger(WheelFailbackClusterInvoker.class);

    private final Supplier<URL> currentUrl;
    private final Class<?> service;
    private final Consumer<FailbackConfig> onChange;
    /** The configuration and the consumer URL it was read from; written under this object's lock. */
    private volatile Configured configured;

    /**
     * @param url        the consumer URL at the reference's creation
     * @param config     the configuration read from it
     * @param currentUrl the directory's consumer URL now
     * @param service    the service interface, as {@link FailbackConfig#from} takes it
     * @param onChange   told each new configuration before it applies; may throw {@link IllegalArgumentException}
     *                   to refuse it
     */
    LiveConfig(URL url, FailbackConfig config, Supplier<URL> currentUrl, Class<?> service,
               Consumer<FailbackConfig> onChange) {
        this.configured = new Configured(url, config);
        this.currentUrl = currentUrl;
        this.service = service;
        this.onChange = onChange;
    }

    /** @return the configuration of the directory's current consumer URL */
    FailbackConfig get() {
        URL url = currentUrl.get();
        Configured c = configured;
        return c.url() == url ? c.config() : reconfigure(url);
    }

    /** @return the retry policy of {@code method} now */
    RetryPolicy policy(String method) {
        return get().policy(method);
    }

    private synchronized FailbackConfig reconfigure(URL url) {
        Configured c = configured;
        if (c.url() == url) {
            return c.config();
        }
        FailbackConfig next = c.config();
        try {
            next = FailbackConfig.from(url, service);
            onChange.accept(next);
        } catch (IllegalArgumentException e) {
            LOG.warn(LoggerCodeConstants.CLUSTER_FAILED_INVOKE_SERVICE, "invalid dynamic configuration", "",
                    "wheelfailback " + url.getServiceKey() + ": " + e.getMessage() + "; the previous values stay");
        }
        configured = new Configured(url, next);
        return next;
    }

    private record Configured(URL url, FailbackConfig config) {
    }
}
