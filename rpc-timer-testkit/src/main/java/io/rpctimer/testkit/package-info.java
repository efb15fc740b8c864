/**
 * Dubbo "processes" inside one JVM for tests, demos and benchmarks: {@link io.rpctimer.testkit.DubboNode} (direct
 * URLs or a registry), {@link io.rpctimer.testkit.EmbeddedZooKeeper}, {@link io.rpctimer.testkit.Loopback} (Dubbo on
 * 127.0.0.1), {@link io.rpctimer.testkit.Ports} and {@link io.rpctimer.testkit.DubboLine} (what differs between the
 * Dubbo lines). Compiled against Dubbo 3.3, runs on 3.1, 3.2 and 3.3; the caller brings Dubbo.
 */
package io.rpctimer.testkit;
