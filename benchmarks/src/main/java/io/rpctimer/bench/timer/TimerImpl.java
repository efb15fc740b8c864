package io.rpctimer.bench.timer;

import java.util.Arrays;
import java.util.function.Function;

/**
 * The timer implementations under comparison, by the label used in JMH {@code @Param}s, harness arguments and result
 * files.
 *
 * <p><b>Threading:</b> immutable; thread-safe.
 */
enum TimerImpl {
    /** {@code io.rpctimer.wheel.WheelTimer}: 10 ms tick, 512 buckets per level, default executor (2 threads here). */
    RPC_TIMER("rpc-timer", RpcTimerAdapter::new),
    /** {@code io.netty.util.HashedWheelTimer} 4.2.2: 10 ms tick, 512 buckets; tasks run on the worker (default). */
    NETTY("netty", onFire -> new NettyAdapter(onFire, 0)),
    /** {@code org.apache.dubbo.common.timer.HashedWheelTimer} 3.3.6: 10 ms tick, 512 buckets; tasks run on the worker. */
    DUBBO("dubbo", DubboAdapter::new),
    /** {@code org.apache.kafka.server.util.timer.SystemTimer} 4.1.1, defaults, driven by a {@code SystemTimerReaper}. */
    KAFKA("kafka", KafkaAdapter::new),
    /** {@code ScheduledThreadPoolExecutor}, one thread, {@code setRemoveOnCancelPolicy(true)}. */
    JDK_STPE("jdk-stpe", onFire -> new JdkStpeAdapter(onFire, 1)),
    /** {@code org.agrona.DeadlineTimerWheel} 2.3.2, single-threaded, on a driver thread that polls every tick. */
    AGRONA("agrona", AgronaAdapter::new),
    /** Case 4 only: Netty with a 2-thread {@code taskExecutor}, the option that keeps tasks off its worker. */
    NETTY_EXECUTOR("netty+executor", onFire -> new NettyAdapter(onFire, 2)),
    /** Case 4 only: the JDK scheduler with 2 threads, so one blocking task does not stall the rest. */
    JDK_STPE_2("jdk-stpe-2", onFire -> new JdkStpeAdapter(onFire, 2));

    /** The implementations of every case (Agrona only where single-threaded use applies). */
    static final TimerImpl[] MAIN = {RPC_TIMER, NETTY, DUBBO, KAFKA, JDK_STPE, AGRONA};

    final String label;
    private final Function<Runnable, BenchTimer> factory;

    TimerImpl(String label, Function<Runnable, BenchTimer> factory) {
        this.label = label;
        this.factory = factory;
    }

    /**
     * @param onFire what the shared task does when it runs; {@link #NOOP} for nothing
     * @return a new timer of this implementation, not started yet
     */
    BenchTimer create(Runnable onFire) {
        return factory.apply(onFire);
    }

    /** The shared task's action when the benchmark needs none; adapters may recognise it to allocate less. */
    static final Runnable NOOP = () -> { };

    /**
     * @return the implementation labelled {@code label}
     * @throws IllegalArgumentException if none is
     */
    static TimerImpl of(String label) {
        return Arrays.stream(values()).filter(i -> i.label.equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("impl: " + label + " (expected one of: "
                        + Arrays.stream(values()).map(i -> i.label).toList() + ")"));
    }
}
