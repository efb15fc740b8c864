package io.rpctimer.bench.timer;

import java.lang.ref.Reference;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Case 3: heap bytes per pending timer. Builds one timer, warms it up (10,000 schedule + cancel, so lazily built
 * structures exist), measures the heap used after GC, schedules 1,000,000 timers of one shared task due in 1–2 h,
 * waits for the worker to file them, measures again: (after − before) / timers. The caller keeps no handle, so
 * only what the timer itself retains counts. Kafka's figure includes the 24-byte {@code TimerTask} its API needs
 * per timer; Agrona's is its spoke arrays of {@code long} deadlines.
 *
 * <p>Run each implementation in its own JVM, with a non-regional collector so that "used" is exact:
 * <pre>
 * java -XX:+UseSerialGC -Xms2g -Xmx2g -cp benchmarks/target/benchmarks.jar \
 *     io.rpctimer.bench.timer.PendingMemoryHarness rpc-timer [timers]
 * </pre>
 * It prints one {@code RESULT} line ({@link HarnessIo}).
 *
 * <p><b>Threading:</b> run from {@code main}; the timer's threads run meanwhile.
 */
public final class PendingMemoryHarness {

    private PendingMemoryHarness() {
    }

    public static void main(String[] args) {
        TimerImpl impl = TimerImpl.of(args[0]);
        int timers = args.length > 1 ? Integer.parseInt(args[1]) : BenchConfig.MANY_PENDING;
        HarnessIo.printAndExit(measure(impl, timers));
    }

    static Map<String, Object> measure(TimerImpl impl, int timers) {
        BenchTimer timer = impl.create(TimerImpl.NOOP);
        try {
            timer.start();
            timer.load(() -> {
                for (int i = 0; i < 10_000; i++) {
                    timer.scheduleAndCancel(BenchConfig.CALL_TIMEOUT_NANOS);
                }
            });
            BenchConfig.settle();
            long before = usedHeapAfterGc();
            BenchConfig.fillFarFuture(timer, timers);
            long after = usedHeapAfterGc();
            Reference.reachabilityFence(timer);
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("impl", impl.label);
            result.put("timers", timers);
            result.put("heapBeforeBytes", before);
            result.put("heapAfterBytes", after);
            result.put("bytesPerTimer", (after - before) / (double) timers);
            return result;
        } finally {
            timer.close();
        }
    }

    /** @return the smallest heap use read right after each of five full collections */
    static long usedHeapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            BenchConfig.sleepMillis(Math.min(100, BenchConfig.settleMillis));
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }
}
