package io.rpctimer.bench.timer;

import java.util.concurrent.TimeUnit;
import org.agrona.DeadlineTimerWheel;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Case 1 for Agrona's single-threaded {@link DeadlineTimerWheel}: the same schedule-30-s-then-cancel operation as
 * {@link ScheduleCancelBenchmark}, on one thread only, the deadline taken from {@link System#nanoTime()} per
 * operation as the other timers do. The wheel is used in place: no other thread, and no poll during the
 * measurement (a real owner would poll it between operations, on the same thread).
 *
 * <p>Agrona's tick must be a power of two: 2^23 ns (8.39 ms), 512 spokes. With 1,000,000 timers pending, each
 * spoke holds about 1,950 of them and scheduling scans the spoke's array for a free slot.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar 'timer.AgronaScheduleCancelBenchmark' -prof gc
 * </pre>
 *
 * <p><b>Threading:</b> one benchmark thread owns the wheel.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class AgronaScheduleCancelBenchmark {

    /** Far-future timers pending on the wheel while it is measured. */
    @Param({"0", "1000000"})
    public int pending;

    private DeadlineTimerWheel wheel;

    @Setup(Level.Trial)
    public void setUp() {
        wheel = new DeadlineTimerWheel(TimeUnit.NANOSECONDS, System.nanoTime(), BenchConfig.AGRONA_TICK_NANOS,
                BenchConfig.TICKS_PER_WHEEL);
        long now = System.nanoTime();
        for (int i = 0; i < pending; i++) {
            wheel.scheduleTimer(now + BenchConfig.farFutureDelayNanos(i, pending));
        }
        BenchConfig.settle();
    }

    @Benchmark
    @Threads(1)
    public boolean oneThread() {
        return wheel.cancelTimer(wheel.scheduleTimer(System.nanoTime() + BenchConfig.CALL_TIMEOUT_NANOS));
    }
}
