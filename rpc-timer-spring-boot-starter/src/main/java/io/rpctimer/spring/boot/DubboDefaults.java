package io.rpctimer.spring.boot;

import io.rpctimer.retry.RetryOn;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.spring.boot.RpcTimerProperties.Budget;
import io.rpctimer.spring.boot.RpcTimerProperties.Dedup;
import io.rpctimer.spring.boot.RpcTimerProperties.Failback;
import io.rpctimer.spring.boot.RpcTimerProperties.Overflow;
import io.rpctimer.spring.boot.RpcTimerProperties.Store;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Turns the {@code rpc-timer.*} properties into the Dubbo properties that carry them to every reference and service:
 * consumer-level parameters ({@code dubbo.consumer.parameters.failback.delay=2000}), provider-level parameters for
 * {@code retrydedup}, and Dubbo's consumer-level {@code cluster} and {@code retries}. Only the properties that are
 * set are written, so the library's defaults and Dubbo's precedence (method, then reference, then consumer) stay as
 * they are.
 *
 * <p>Every value is checked against the range the library accepts for its URL key, and the cross-property rules
 * (max-delay not below delay, spill needs a journal, a budget that allows some retries); a bad value throws
 * {@link InvalidConfigurationPropertyValueException}, which names the property and the value.
 *
 * <p><b>Threading:</b> stateless.
 */
final class DubboDefaults {

    static final String CLUSTER = "wheelfailback";
    static final String CONSUMER_CLUSTER = "dubbo.consumer.cluster";
    static final String CONSUMER_RETRIES = "dubbo.consumer.retries";
    static final String CONSUMER_PARAMETERS = "dubbo.consumer.parameters.";
    static final String PROVIDER_PARAMETERS = "dubbo.provider.parameters.";
    /** The name the DataSource-backed dedup store is registered under, and the value of {@code retrydedup.store}. */
    static final String DATASOURCE_DEDUP_STORE = "datasource";

    private static final String P = RpcTimerProperties.PREFIX + ".";
    private static final String F = P + "failback.";
    private static final String D = P + "dedup.";
    private static final long DEFAULT_DELAY_MILLIS = RetryPolicy.DEFAULT_FIRST_DELAY_MILLIS;
    private static final long DEFAULT_MAX_DELAY_MILLIS = RetryPolicy.DEFAULT_MAX_DELAY_MILLIS;
    /** The library's defaults of failback.budget.ratio and minrate (FailbackConfig's, which is not public). */
    static final double DEFAULT_BUDGET_RATIO = 0.2;
    static final double DEFAULT_BUDGET_MIN_RATE = 10;

    private DubboDefaults() {
    }

    /**
     * @param properties      the bound {@code rpc-timer.*} properties
     * @param consumerCluster the application's own {@code dubbo.consumer.cluster}, or null
     * @param loader          loads the exception classes {@code failback.retry-on} names
     * @return Dubbo property name to value, in a stable order
     * @throws InvalidConfigurationPropertyValueException naming the property and the value, if one is invalid
     */
    static Map<String, Object> of(RpcTimerProperties properties, String consumerCluster, ClassLoader loader) {
        Map<String, Object> out = new LinkedHashMap<>();
        consumer(properties, consumerCluster, out);
        Failback f = properties.getFailback();
        policy(f, loader, out);
        budget(f.getBudget(), out);
        store(f, out);
        dedup(properties.getDedup(), out);
        return out;
    }

    private static void consumer(RpcTimerProperties p, String consumerCluster, Map<String, Object> out) {
        if (p.isDefaultCluster()) {
            out.put(CONSUMER_CLUSTER, CLUSTER);
        }
        String cluster = consumerCluster != null ? consumerCluster.trim() : p.isDefaultCluster() ? CLUSTER : null;
        Integer retries = p.getRetries();
        if (retries != null) {
            require(retries >= 0, P + "retries", retries, ">= 0 (0: no retry)");
            require(CLUSTER.equals(cluster), P + "retries", retries, "a consumer-level cluster of wheelfailback,"
                    + " since Dubbo's consumer-level retries applies to failover references too (the consumer cluster"
                    + " is " + cluster + "); set " + P + "default-cluster=true, or retries on the wheelfailback"
                    + " references");
            out.put(CONSUMER_RETRIES, retries);
        }
        Integer tasks = p.getFailbacktasks();
        if (tasks != null) {
            require(tasks >= 1, P + "failbacktasks", tasks, ">= 1");
            out.put(CONSUMER_PARAMETERS + "failbacktasks", tasks);
        }
        if (p.getTimeoutcheck() != null) {
            out.put(CONSUMER_PARAMETERS + "timeoutcheck", p.getTimeoutcheck());
        }
    }

    private static void policy(Failback f, ClassLoader loader, Map<String, Object> out) {
        long delay = f.getDelay() == null ? DEFAULT_DELAY_MILLIS
                : consumerParam(out, "failback.delay", millis(F + "delay", f.getDelay(), 1, Long.MAX_VALUE));
        long maxDelay = f.getMaxDelay() == null ? DEFAULT_MAX_DELAY_MILLIS
                : consumerParam(out, "failback.maxdelay", millis(F + "max-delay", f.getMaxDelay(), 1, Long.MAX_VALUE));
        if (maxDelay < delay) {
            throw f.getMaxDelay() != null
                    ? invalid(F + "max-delay", f.getMaxDelay(), ">= " + F + "delay (" + delay + " ms)")
                    : invalid(F + "delay", f.getDelay(), "<= " + F + "max-delay (default " + maxDelay + " ms)");
        }
        if (f.getMultiplier() != null) {
            consumerParam(out, "failback.multiplier", between(F + "multiplier", f.getMultiplier(), 1, 1e6));
        }
        if (f.getJitter() != null) {
            consumerParam(out, "failback.jitter", between(F + "jitter", f.getJitter(), 0, 1));
        }
        if (f.getRetryOn() != null) {
            consumerParam(out, "failback.retryon", retryOn(f.getRetryOn(), loader));
        }
        if (f.getOverflow() != null) {
            require(f.getOverflow() != Overflow.SPILL || f.getStore() != Store.MEMORY, F + "overflow", "spill",
                    "reject or log: spill needs a journal (" + F + "store=embedded or datasource)");
            consumerParam(out, "failback.overflow", f.getOverflow().name().toLowerCase(Locale.ROOT));
        }
        if (f.getStoreDown() != null) {
            consumerParam(out, "failback.store.down", f.getStoreDown().name().toLowerCase(Locale.ROOT));
        }
    }

    /** Parses as the library does, and loads each named class, so that a misspelt name fails now. */
    private static String retryOn(Iterable<String> names, ClassLoader loader) {
        String spec = String.join(",", names);
        RetryOn parsed;
        try {
            parsed = RetryOn.parse(spec);
        } catch (IllegalArgumentException e) {
            throw invalid(F + "retry-on", spec, "rpc, all, or exception class names");
        }
        for (String name : parsed.classNames()) {
            Class<?> type;
            try {
                type = Class.forName(name, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                throw invalid(F + "retry-on", spec, "exception classes the application can load; " + name
                        + " was not found");
            }
            require(Throwable.class.isAssignableFrom(type), F + "retry-on", spec, "exception classes; " + name
                    + " is not a Throwable");
        }
        return spec;
    }

    private static void budget(Budget b, Map<String, Object> out) {
        double ratio = b.getRatio() == null ? DEFAULT_BUDGET_RATIO
                : consumerParam(out, "failback.budget.ratio", between(F + "budget.ratio", b.getRatio(), 0, 1e6));
        double minRate = b.getMinRate() == null ? DEFAULT_BUDGET_MIN_RATE
                : consumerParam(out, "failback.budget.minrate", between(F + "budget.min-rate", b.getMinRate(), 0, 1e9));
        if (ratio == 0 && minRate == 0) {
            throw b.getMinRate() != null
                    ? invalid(F + "budget.min-rate", b.getMinRate(), "> 0 when " + F + "budget.ratio is 0")
                    : invalid(F + "budget.ratio", b.getRatio(), "> 0 unless " + F + "budget.min-rate is above 0");
        }
    }

    private static void store(Failback f, Map<String, Object> out) {
        if (f.getStore() != null) {
            // datasource is the library's jdbc store on the DataSource DataSourceStores hands it, never a URL
            consumerParam(out, "failback.store", f.getStore() == Store.DATASOURCE ? "jdbc"
                    : f.getStore().name().toLowerCase(Locale.ROOT));
        }
        if (f.getStoreDir() != null) {
            require(!f.getStoreDir().isBlank(), F + "store-dir", f.getStoreDir(), "a directory");
            require(f.getStore() == null || f.getStore() == Store.EMBEDDED, F + "store-dir", f.getStoreDir(),
                    "unset unless " + F + "store is embedded (it is " + f.getStore() + ")");
            consumerParam(out, "failback.store.dir", f.getStoreDir());
        }
    }

    private static void dedup(Dedup d, Map<String, Object> out) {
        if (d.getEnabled() != null) {
            out.put(PROVIDER_PARAMETERS + "retrydedup", d.getEnabled());
        }
        if (d.getStore() != null) {
            out.put(PROVIDER_PARAMETERS + "retrydedup.store", d.getStore() == RpcTimerProperties.DedupStore.DATASOURCE
                    ? DATASOURCE_DEDUP_STORE : "memory");
        }
        if (d.getSize() != null) {
            require(d.getSize() >= 1 && d.getSize() <= 100_000_000, D + "size", d.getSize(), "1..100000000 entries");
            out.put(PROVIDER_PARAMETERS + "retrydedup.size", d.getSize());
        }
        if (d.getStarted() != null) {
            out.put(PROVIDER_PARAMETERS + "retrydedup.started", millis(D + "started", d.getStarted(), 1, 86_400_000));
        }
        if (d.getDone() != null) {
            out.put(PROVIDER_PARAMETERS + "retrydedup.done", millis(D + "done", d.getDone(), 1, 2_592_000_000L));
        }
    }

    private static <V> V consumerParam(Map<String, Object> out, String key, V value) {
        out.put(CONSUMER_PARAMETERS + key, value);
        return value;
    }

    /**
     * @return {@code d} in whole milliseconds within [min, max]
     * @throws InvalidConfigurationPropertyValueException otherwise, a sub-millisecond rest included
     */
    static long millis(String property, Duration d, long min, long max) {
        long ms;
        try {
            ms = d.toMillis();
        } catch (ArithmeticException e) {
            throw invalid(property, d, "milliseconds in " + min + ".." + max);
        }
        require(ms >= min && ms <= max, property, d, "milliseconds in " + min + ".." + max);
        require(Duration.ofMillis(ms).equals(d), property, d, "whole milliseconds");
        return ms;
    }

    private static double between(String property, double value, double min, double max) {
        require(value >= min && value <= max, property, value, "a number in [" + plain(min) + ", " + plain(max) + "]");
        return value;
    }

    private static String plain(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
    }

    static void require(boolean ok, String property, Object value, String expected) {
        if (!ok) {
            throw invalid(property, value, expected);
        }
    }

    static InvalidConfigurationPropertyValueException invalid(String property, Object value, String expected) {
        return new InvalidConfigurationPropertyValueException(property, show(value), "expected: " + expected);
    }

    /** Durations as written in properties ({@code 1500ms}) where that loses nothing, else ISO-8601. */
    private static Object show(Object value) {
        if (value instanceof Duration d && d.getNano() % 1_000_000 == 0 && d.abs().getSeconds() < Long.MAX_VALUE / 1000) {
            return d.toMillis() + "ms";
        }
        return value;
    }
}
