package io.rpctimer.demo.consumer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.apache.dubbo.metrics.MetricsGlobalRegistry;
import org.apache.dubbo.rpc.model.ApplicationModel;

/**
 * The demo's {@code --metrics}: a Micrometer registry of its own, added to Dubbo's registry of the consumer's
 * application before it starts, that keeps the failback meters ({@code dubbo.consumer.failback.*}) of that
 * application only, and prints them at the end, one line per meter, sorted by name and tags.
 *
 * <p>The application removes its meters when it stops. So the gauges and function counters, which read the live
 * retry state and the wheel, are {@link #readBeforeStop() read before the consumer stops} (as the report's wheel
 * stats); counters and timers count until their removal, and are read then, so calls handed over as the consumer
 * stops are in them.
 *
 * <p><b>Threading:</b> thread-safe: meters are removed on Dubbo's thread, the run's thread reads.
 */
final class FailbackMeters implements AutoCloseable {

    /** The prefix of the failback meters' names. */
    static final String PREFIX = "dubbo.consumer.failback.";
    private static final String APPLICATION_TAG = "application.name";

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Map<String, String> lines = new ConcurrentHashMap<>(); // by meter name, a tab, and tags
    private volatile CompositeMeterRegistry dubbo;

    /** @param application the consumer's application name: other applications' meters are left out */
    FailbackMeters(String application) {
        registry.config().meterFilter(MeterFilter.denyUnless(id -> id.getName().startsWith(PREFIX)
                && application.equals(id.getTag(APPLICATION_TAG))));
        registry.config().onMeterRemoved(m -> {
            if (m instanceof Counter || m instanceof Timer) {
                lines.put(key(m), line(m));
            }
        });
    }

    /** Adds this registry to Dubbo's registry of {@code app}: call before the application starts. */
    void attach(ApplicationModel app) {
        CompositeMeterRegistry d = MetricsGlobalRegistry.getCompositeRegistry(app);
        d.add(registry);
        dubbo = d;
    }

    /** Reads every meter now: the gauges' values at the end of the run, while the consumer is still up. */
    void readBeforeStop() {
        registry.getMeters().forEach(m -> lines.put(key(m), line(m)));
    }

    /** @return one line per meter, sorted: {@code name{tag=value,...}  statistic=value ...} */
    List<String> lines() {
        return new ArrayList<>(new TreeMap<>(lines).values());
    }

    /** @return the sort key: by name, then tags ({@code pending} before {@code pending.budget}) */
    private static String key(Meter m) {
        return m.getId().getName() + "\t" + tags(m);
    }

    private static String line(Meter m) {
        List<String> values = new ArrayList<>();
        for (Measurement x : m.measure()) {
            values.add(x.getStatistic().getTagValueRepresentation() + "=" + number(x.getValue()));
        }
        return String.format(Locale.ROOT, "  %s%s  %s", m.getId().getName(), tags(m), String.join(" ", values));
    }

    /** @return {@code 3}, {@code 0.8}, {@code 0.003025}: four significant digits, no trailing zeros */
    static String number(double v) {
        if (!Double.isFinite(v)) {
            return String.valueOf(v);
        }
        return new BigDecimal(v, new MathContext(4)).stripTrailingZeros().toPlainString();
    }

    /** @return {@code {interface=...,method=...}} without the application; empty if no other tag */
    private static String tags(Meter m) {
        String tags = m.getId().getTags().stream().filter(t -> !t.getKey().equals(APPLICATION_TAG))
                .map(t -> t.getKey() + "=" + t.getValue()).collect(Collectors.joining(","));
        return tags.isEmpty() ? "" : "{" + tags + "}";
    }

    /** Takes this registry out of Dubbo's. Idempotent. */
    @Override
    public void close() {
        CompositeMeterRegistry d = dubbo;
        if (d != null) {
            d.remove(registry);
        }
        registry.close();
    }
}
