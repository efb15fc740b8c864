package io.rpctimer.bench.timer;

import com.sun.management.OperatingSystemMXBean;
import io.rpctimer.bench.Figures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Stream;

/**
 * Case 1's operation (schedule a 30 s timeout, cancel it at once) measured by CPU time instead of wall-clock
 * throughput: per one-second window, the CPU nanoseconds per operation of the producer threads, of the timer's worker
 * thread and of the rest of the JVM (GC, JIT), and the context switches of the worker and the producers. On a
 * machine shared with other work, throughput says how much CPU this JVM was given; CPU per operation says what an
 * operation costs, so a slow mode that costs CPU (a busier worker, a slower code path, GC work) shows even under load,
 * and a worker woken more often than it ticks shows in its voluntary context switches.
 *
 * <pre>
 * java -Xms4g -Xmx4g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.timer.ScheduleCancelCpuHarness rpc-timer [threads pending warmupSeconds measureSeconds]
 * </pre>
 * It prints one line per window and one {@code RESULT} line ({@link HarnessIo}) with the medians of the measured
 * windows. Context switches come from {@code /proc/self/task} (Linux; -1 elsewhere). Defaults: 2 threads,
 * 1,000,000 pending, 5 s warm-up, 5 s measured, as a JMH fork of {@link ScheduleCancelBenchmark}.
 *
 * <p><b>Threading:</b> run from {@code main}; the producers are its daemon threads.
 */
public final class ScheduleCancelCpuHarness {

    private static final String PRODUCER = "sc-producer-";
    /** Counters padded apart: each producer writes its own slot. */
    private static final int SLOT = 16;

    private ScheduleCancelCpuHarness() {
    }

    public static void main(String[] args) throws InterruptedException {
        TimerImpl impl = TimerImpl.of(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int pending = args.length > 2 ? Integer.parseInt(args[2]) : BenchConfig.MANY_PENDING;
        int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        int measured = args.length > 4 ? Integer.parseInt(args[4]) : 5;
        HarnessIo.printAndExit(measure(impl, threads, pending, warmup, measured, 1_000));
    }

    /** One window's figures: ops/µs, CPU ns per operation by thread group, context switches per second. */
    record Window(double opsPerUs, double producerNsPerOp, double workerNsPerOp, double otherNsPerOp,
                  double workerVoluntaryPerSec, double producerInvoluntaryPerSec) {

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "ops/us=%.2f CPU ns/op: producers=%.1f worker=%.2f other=%.2f;"
                    + " context switches/s: worker voluntary=%.0f, producers involuntary=%.0f", opsPerUs,
                    producerNsPerOp, workerNsPerOp, otherNsPerOp, workerVoluntaryPerSec, producerInvoluntaryPerSec);
        }
    }

    static Map<String, Object> measure(TimerImpl impl, int threads, int pending, int warmup, int measured,
                                       long windowMillis) throws InterruptedException {
        BenchTimer timer = impl.create(TimerImpl.NOOP);
        try {
            timer.start();
            BenchConfig.fillFarFuture(timer, pending);
            AtomicLongArray ops = new AtomicLongArray(threads * SLOT);
            List<Thread> producers = startProducers(timer, threads, ops);
            Thread worker = IdleTickCpuHarness.findThread(timer.workerThreadName());
            List<Window> windows = new ArrayList<>();
            Sample previous = Sample.take(producers, worker, ops, timer.workerThreadName());
            for (int w = 0; w < warmup + measured; w++) {
                BenchConfig.sleepMillis(windowMillis);
                Sample now = Sample.take(producers, worker, ops, timer.workerThreadName());
                Window window = now.since(previous);
                previous = now;
                System.out.printf("%s %s %s%n", impl.label, w < warmup ? "warm-up" : "measured", window);
                if (w >= warmup) {
                    windows.add(window);
                }
            }
            producers.forEach(Thread::interrupt);
            return summary(impl, threads, pending, windows);
        } finally {
            timer.close();
        }
    }

    private static List<Thread> startProducers(BenchTimer timer, int threads, AtomicLongArray ops) {
        List<Thread> producers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int slot = i * SLOT;
            Thread t = new Thread(() -> {
                long n = 0;
                while (!Thread.currentThread().isInterrupted()) {
                    for (int k = 0; k < 1_000; k++) {
                        timer.scheduleAndCancel(BenchConfig.CALL_TIMEOUT_NANOS);
                    }
                    n += 1_000;
                    ops.lazySet(slot, n);
                }
            }, PRODUCER + i);
            t.setDaemon(true);
            t.start();
            producers.add(t);
        }
        return producers;
    }

    private static Map<String, Object> summary(TimerImpl impl, int threads, int pending, List<Window> windows) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("impl", impl.label);
        result.put("threads", threads);
        result.put("pending", pending);
        result.put("windows", windows.size());
        result.put("opsPerUs", Figures.median(windows.stream().map(Window::opsPerUs).toList()));
        result.put("producerNsPerOp", Figures.median(windows.stream().map(Window::producerNsPerOp).toList()));
        result.put("workerNsPerOp", Figures.median(windows.stream().map(Window::workerNsPerOp).toList()));
        result.put("otherNsPerOp", Figures.median(windows.stream().map(Window::otherNsPerOp).toList()));
        result.put("workerVoluntaryPerSec",
                Figures.median(windows.stream().map(Window::workerVoluntaryPerSec).toList()));
        return result;
    }

    /** Cumulative counters at one instant. */
    private record Sample(long ops, long producerCpuNanos, long workerCpuNanos, long processCpuNanos,
                          long workerVoluntary, long producerInvoluntary, long nanoTime) {

        static Sample take(List<Thread> producers, Thread worker, AtomicLongArray ops, String workerName) {
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            long n = 0;
            long cpu = 0;
            for (int i = 0; i < producers.size(); i++) {
                n += ops.get(i * SLOT);
                cpu += mx.getThreadCpuTime(producers.get(i).getId());
            }
            OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            return new Sample(n, cpu, mx.getThreadCpuTime(worker.getId()), os.getProcessCpuTime(),
                    contextSwitches(workerName, "voluntary_ctxt_switches"),
                    contextSwitches(PRODUCER, "nonvoluntary_ctxt_switches"), System.nanoTime());
        }

        Window since(Sample p) {
            double ops = Math.max(1, this.ops - p.ops);
            double seconds = (nanoTime - p.nanoTime) / 1e9;
            long producers = producerCpuNanos - p.producerCpuNanos;
            long worker = workerCpuNanos - p.workerCpuNanos;
            return new Window(ops / seconds / 1e6, producers / ops, worker / ops,
                    (processCpuNanos - p.processCpuNanos - producers - worker) / ops,
                    (workerVoluntary - p.workerVoluntary) / seconds,
                    (producerInvoluntary - p.producerInvoluntary) / seconds);
        }
    }

    /**
     * @return the sum of {@code field} in {@code /proc/self/task/<tid>/status} over the threads whose name (the
     *     kernel keeps its first 15 characters) starts as {@code namePrefix} does; -1 without {@code /proc}
     */
    static long contextSwitches(String namePrefix, String field) {
        String comm = namePrefix.substring(0, Math.min(15, namePrefix.length()));
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            long sum = 0;
            for (Path task : tasks.toList()) {
                if (Files.readString(task.resolve("comm")).trim().startsWith(comm)) {
                    sum += statusField(task.resolve("status"), field);
                }
            }
            return sum;
        } catch (IOException | UncheckedIOException e) {
            return -1; // no /proc (not Linux), or a thread ended while it was read
        }
    }

    private static long statusField(Path status, String field) throws IOException {
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).trim());
            }
        }
        return 0;
    }
}
