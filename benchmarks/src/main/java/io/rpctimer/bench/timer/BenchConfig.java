package io.rpctimer.bench.timer;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The settings every timer benchmark shares, so that each implementation gets the same tick, the same delays and the
 * same amount of pending work.
 *
 * <p><b>Threading:</b> constants and stateless helpers; thread-safe.
 */
final class BenchConfig {

    /** Tick of every hashed wheel (rpc-timer, Netty, Dubbo). */
    static final long TICK_MILLIS = 10;
    /** Buckets per wheel level for rpc-timer, Netty and Dubbo. */
    static final int TICKS_PER_WHEEL = 512;
    /**
     * Agrona's tick: its resolution must be a power of two of its time unit, so 2^23 ns = 8.39 ms, the power of two
     * nearest to 10 ms.
     */
    static final long AGRONA_TICK_NANOS = 1L << 23;
    /** Kafka's defaults ({@code new SystemTimer(name)}): 1 ms tick, 20 buckets per level. */
    static final long KAFKA_TICK_MILLIS = 1;
    static final int KAFKA_WHEEL_SIZE = 20;

    /** The per-call timeout of case 1: scheduled, then cancelled at once, as when the call answers in time. */
    static final long CALL_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** Far-future pending timers are due in [1 h, 2 h), spread uniformly in the order they are scheduled. */
    static final long FAR_FUTURE_NANOS = TimeUnit.HOURS.toNanos(1);
    /** The 1,000,000 pending timers of cases 1, 3 and 5. */
    static final int MANY_PENDING = 1_000_000;

    /**
     * How long {@link #settle()} lets the workers catch up. Only the smoke test lowers it; written before any
     * benchmark thread starts.
     */
    static volatile long settleMillis = 1_000;

    private BenchConfig() {
    }

    /** @return the delay of far-future timer {@code i} of {@code n}: 1 h + i/n h, in nanoseconds */
    static long farFutureDelayNanos(int i, int n) {
        return FAR_FUTURE_NANOS + (long) ((double) i / n * FAR_FUTURE_NANOS);
    }

    /**
     * Schedules {@code n} far-future timers of the shared task on {@code timer}, on the thread allowed to schedule,
     * and waits for the worker to have filed them.
     */
    static void fillFarFuture(BenchTimer timer, int n) {
        if (n <= 0) {
            return;
        }
        timer.load(() -> {
            for (int i = 0; i < n; i++) {
                timer.scheduleShared(farFutureDelayNanos(i, n));
            }
        });
        settle();
    }

    /**
     * Sleeps long enough for every wheel worker to take the hand-off queue into its buckets (Netty and Dubbo move
     * at most 100,000 per 10 ms tick, so 1M need 100 ms), then collects garbage so that the measurement starts clean.
     */
    static void settle() {
        sleepMillis(settleMillis);
        System.gc();
        sleepMillis(settleMillis / 5);
    }

    /**
     * @return whole-millisecond delays, {@code n} of them spread uniformly over {@code [fromMillis, toMillis]} and
     *     shuffled with a fixed seed, so every implementation gets the same sequence
     */
    static long[] uniformDelaysMillis(int n, long fromMillis, long toMillis, long seed) {
        long span = toMillis - fromMillis + 1;
        long[] delays = new long[n];
        for (int i = 0; i < n; i++) {
            delays[i] = fromMillis + (long) i * span / n;
        }
        Random random = new Random(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            long t = delays[i];
            delays[i] = delays[j];
            delays[j] = t;
        }
        return delays;
    }

    /**
     * @return a factory of daemon threads: the first is named {@code name} (the worker the idle-CPU harness looks
     *     for), later ones {@code name-2}, {@code name-3}...
     */
    static ThreadFactory daemonThreads(String name) {
        AtomicInteger count = new AtomicInteger();
        return r -> {
            int n = count.incrementAndGet();
            Thread t = new Thread(r, n == 1 ? name : name + "-" + n);
            t.setDaemon(true);
            return t;
        };
    }

    /** The first JDK release on which {@code sun.misc.Unsafe}'s memory access warns by default (JEP 498). */
    static final int UNSAFE_WARNING_FEATURE = 24;

    /**
     * @return the flags every benchmark JVM gets on this JVM's release: on JDK 24 and later,
     *     {@code --sun-misc-unsafe-memory-access=allow}. Without it Netty 4.2 turns its use of {@code Unsafe} off
     *     by itself ({@code io.netty.noUnsafe=true by default on Java 24+}) and falls back to slower atomic queues,
     *     while rpc-timer's JCTools and Agrona keep using {@code Unsafe}: the flag gives every implementation the
     *     code paths it has on JDK 17.
     */
    static List<String> jvmFlags() {
        return Runtime.version().feature() >= UNSAFE_WARNING_FEATURE
                ? List.of("--sun-misc-unsafe-memory-access=allow") : List.of();
    }

    /**
     * @return {@code "-" + bench.jvmLabel} (e.g. {@code -jdk25}) when {@code run.sh --jdk} set that property, else
     *     empty: the suffix of the result files, so that runs on two JVMs do not overwrite each other
     */
    static String jvmSuffix() {
        String label = System.getProperty("bench.jvmLabel", "");
        return label.isBlank() ? "" : "-" + label;
    }

    /** @return the {@code java} launcher of this JVM: JMH forks and harness JVMs run on the runner's own JVM */
    static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
