package io.rpctimer.bench.timer;

import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Case 1, the per-call timeout pattern: schedule a 30 s timeout, cancel it at once (the call answered in time), on
 * one timer shared by 1 or 2 producer threads, with the timer otherwise empty or holding 1,000,000 timers due in
 * 1–2 h. Throughput in operations (schedule + cancel) per microsecond, all producer threads together.
 *
 * <p>Each timer's worker thread runs meanwhile (filing, unlinking, walking buckets): on a 2-core machine, 2
 * producers plus the worker contend for the cores, and that contention is part of what is measured. Agrona's
 * single-threaded wheel is measured by {@link AgronaScheduleCancelBenchmark}.
 *
 * <p><b>Fairness.</b> Every adapter creates its timer once per trial ({@code @Setup(Level.Trial)}), with the same
 * 10 ms tick and 512 buckets (Kafka and Agrona: their nearest equivalents), schedules one shared task created once,
 * and cancels through the timer's own handle ({@code Timeout.cancel()}, {@code Future.cancel(false)}); none does
 * work per operation beyond the timer's API (Kafka allocates its task per timer because its API requires it). Netty
 * is built with its plain constructor: leak detection tracks the timer once, not per timeout, and no pending limit
 * is checked. Every implementation gets the same warm-up ({@link TimerBenchRunner#WARMUP_ITERATIONS} × 1 s, past
 * Netty's 2–4 s climb), forks, measurement, heap ({@link TimerBenchRunner#JMH_HEAP}) and JVM flags
 * ({@link BenchConfig#jvmFlags()}).
 *
 * <p>What remains, and is measured as it is: Netty's and Dubbo's workers take at most 100,000 new timeouts per tick
 * (10 M/s here). A producer faster than that grows their hand-off queue; the queued timeouts (cancelled or not)
 * survive young collections, and GC pauses then take a share of the run that grows with the run's length and
 * depends on the heap (40% of Netty's measured time in the published full run, against 0.3% for rpc-timer). The
 * report shows each cell's GC share and the JSON every iteration's score, so a rate held by that backlog is visible.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar 'timer.ScheduleCancelBenchmark' -prof gc
 * java -jar benchmarks/target/benchmarks.jar 'timer.ScheduleCancelBenchmark.oneThread' -p impl=rpc-timer,netty -p pending=0
 * </pre>
 *
 * <p><b>Threading:</b> JMH's: one state for the whole benchmark, shared by its threads.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class ScheduleCancelBenchmark {

    @Param({"rpc-timer", "netty", "dubbo", "kafka", "jdk-stpe"})
    public String impl;

    /** Far-future timers pending on the timer while it is measured. */
    @Param({"0", "1000000"})
    public int pending;

    private BenchTimer timer;

    @Setup(Level.Trial)
    public void setUp() {
        timer = TimerImpl.of(impl).create(TimerImpl.NOOP);
        timer.start();
        BenchConfig.fillFarFuture(timer, pending);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timer.close();
    }

    @Benchmark
    @Threads(1)
    public boolean oneThread() {
        return timer.scheduleAndCancel(BenchConfig.CALL_TIMEOUT_NANOS);
    }

    @Benchmark
    @Threads(2)
    public boolean twoThreads() {
        return timer.scheduleAndCancel(BenchConfig.CALL_TIMEOUT_NANOS);
    }
}
