package io.rpctimer.bench.happypath;

import io.rpctimer.dubbo.TimeoutCheckFilter;
import io.rpctimer.dubbo.WheelFailbackCluster;
import java.util.Map;

/**
 * The consumer configurations the happy path compares, each a cluster and the reference parameters it adds. Every
 * one has the same call timeout (1 s) and Dubbo's defaults for everything else.
 *
 * <p><b>Threading:</b> immutable; thread-safe.
 */
enum Config {
    /** Dubbo's default cluster. */
    FAILOVER("failover", "failover", Map.of()),
    /** Dubbo's own failback: the reference every ratio is taken against. */
    FAILBACK("failback", "failback", Map.of()),
    /** rpc-timer's failback cluster. */
    WHEEL("wheelfailback", WheelFailbackCluster.NAME, Map.of()),
    /** rpc-timer's failback cluster with the consumer filter that times every call out on the shared wheel. */
    WHEEL_TIMEOUTCHECK("wheelfailback+timeoutcheck", WheelFailbackCluster.NAME,
            Map.of(TimeoutCheckFilter.KEY, "true"));

    final String label;
    final String cluster;
    final Map<String, String> parameters;

    Config(String label, String cluster, Map<String, String> parameters) {
        this.label = label;
        this.cluster = cluster;
        this.parameters = parameters;
    }
}
