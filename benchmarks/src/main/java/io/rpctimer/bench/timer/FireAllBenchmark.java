package io.rpctimer.bench.timer;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Case 2: schedule 100,000 timers due uniformly over 0–200 ms (whole milliseconds, the same shuffled sequence for
 * every timer) and measure the time from the first schedule until the last task has run. The ideal is 200 ms plus
 * up to one tick; everything above is scheduling cost, worker lag and task hand-off. Each task counts down one
 * shared latch. One timer per trial, reused by every iteration; the report is the median of the single shots.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar 'timer.FireAllBenchmark'
 * </pre>
 *
 * <p><b>Threading:</b> the benchmark thread schedules (for Agrona: hands the scheduling to the wheel's driver
 * thread) and waits; tasks count down from the timer's threads.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5)
@Measurement(iterations = 10)
public class FireAllBenchmark {

    static final long MAX_DELAY_MILLIS = 200;

    @Param({"rpc-timer", "netty", "dubbo", "kafka", "jdk-stpe", "agrona"})
    public String impl;

    @Param({"100000"})
    public int timers;

    private BenchTimer timer;
    private long[] delaysNanos;
    private volatile CountDownLatch fired;

    @Setup(Level.Trial)
    public void setUp() {
        timer = TimerImpl.of(impl).create(this::onFire);
        timer.start();
        long[] delaysMillis = BenchConfig.uniformDelaysMillis(timers, 0, MAX_DELAY_MILLIS, 42);
        delaysNanos = new long[timers];
        for (int i = 0; i < timers; i++) {
            delaysNanos[i] = TimeUnit.MILLISECONDS.toNanos(delaysMillis[i]);
        }
    }

    @Setup(Level.Iteration)
    public void newLatch() {
        fired = new CountDownLatch(timers);
        // Start each shot at a random phase of the tick. Back to back, every shot would start just after the
        // previous shot's last tick, so the last timer would always land about one tick minus that gap after its
        // deadline, for every timer alike: the result would measure the phase, not the timer.
        LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(BenchConfig.TICK_MILLIS)));
    }

    private void onFire() {
        fired.countDown();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timer.close();
    }

    @Benchmark
    public void fireAll() throws InterruptedException {
        timer.load(() -> {
            for (long delay : delaysNanos) {
                timer.scheduleShared(delay);
            }
        });
        if (!fired.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(impl + ": " + fired.getCount() + " timers never fired");
        }
    }
}
