package io.rpctimer.bench.timer;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Case 5: what an idle timer costs. Measures the CPU time of the timer's time-moving thread (worker, reaper or
 * driver, found by name) over a window while nothing falls due: first with the timer empty, then holding
 * 1,000,000 timers due in 1–2 h. A wheel whose tick walks its far-future timers (Netty and Dubbo decrement each
 * timeout's remaining rounds as its bucket comes round) pays for them on every tick. The control
 * ({@value #CONTROL}) is a bare thread parking 10 ms at a time: what merely waking up every tick costs here.
 *
 * <pre>
 * java -Xms2g -Xmx2g -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.timer.IdleTickCpuHarness rpc-timer [windowMillis timers]
 * </pre>
 * It prints one {@code RESULT} line ({@link HarnessIo}): CPU milliseconds per wall-clock second.
 *
 * <p><b>Threading:</b> run from {@code main}.
 */
public final class IdleTickCpuHarness {

    /** The control's label: a bare thread that parks 10 ms in a loop, the floor of any 10 ms ticker. */
    static final String CONTROL = "control:park-10ms";

    private IdleTickCpuHarness() {
    }

    public static void main(String[] args) {
        long windowMillis = args.length > 1 ? Long.parseLong(args[1]) : 5_000;
        if (args[0].equals(CONTROL)) {
            HarnessIo.printAndExit(measureControl(windowMillis));
        }
        TimerImpl impl = TimerImpl.of(args[0]);
        int timers = args.length > 2 ? Integer.parseInt(args[2]) : BenchConfig.MANY_PENDING;
        HarnessIo.printAndExit(measure(impl, windowMillis, timers));
    }

    static Map<String, Object> measure(TimerImpl impl, long windowMillis, int timers) {
        BenchTimer timer = impl.create(TimerImpl.NOOP);
        try {
            timer.start();
            BenchConfig.settle();
            Thread worker = findThread(timer.workerThreadName());
            double emptyCpu = cpuMillisPerSecond(worker, windowMillis);
            BenchConfig.fillFarFuture(timer, timers);
            double pendingCpu = cpuMillisPerSecond(worker, windowMillis);
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("impl", impl.label);
            result.put("thread", worker.getName());
            result.put("windowMs", windowMillis);
            result.put("timers", timers);
            result.put("emptyCpuMsPerSec", emptyCpu);
            result.put("pendingCpuMsPerSec", pendingCpu);
            return result;
        } finally {
            timer.close();
        }
    }

    /** Measures a thread that does nothing but park one tick (10 ms) at a time: the cost of waking up. */
    static Map<String, Object> measureControl(long windowMillis) {
        Thread parker = new Thread(() -> {
            long tickNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.TICK_MILLIS);
            while (!Thread.currentThread().isInterrupted()) {
                LockSupport.parkNanos(tickNanos);
            }
        }, "bench-control-parker");
        parker.setDaemon(true);
        parker.start();
        BenchConfig.settle();
        double cpu = cpuMillisPerSecond(parker, windowMillis);
        parker.interrupt();
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("impl", CONTROL);
        result.put("thread", parker.getName());
        result.put("windowMs", windowMillis);
        result.put("timers", 0);
        result.put("emptyCpuMsPerSec", cpu);
        result.put("pendingCpuMsPerSec", cpu);
        return result;
    }

    static double cpuMillisPerSecond(Thread thread, long windowMillis) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpu0 = threads.getThreadCpuTime(thread.getId());
        long t0 = System.nanoTime();
        BenchConfig.sleepMillis(windowMillis);
        long cpu1 = threads.getThreadCpuTime(thread.getId());
        long t1 = System.nanoTime();
        if (cpu0 < 0 || cpu1 < 0) {
            throw new IllegalStateException("thread CPU time unavailable for " + thread.getName());
        }
        return (cpu1 - cpu0) / 1e6 / ((t1 - t0) / 1e9);
    }

    static Thread findThread(String name) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("thread: " + name + " (expected: alive)"));
    }
}
