package io.rpctimer.bench.happypath;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every live thread's allocated heap bytes and CPU time, and the process CPU time, at one moment: two of them give
 * what a phase cost, whatever else runs on the machine ({@code com.sun.management.ThreadMXBean}'s counters).
 *
 * @param names           thread id to name, digits replaced by {@code #} (a pool's threads share a group)
 * @param perThread       thread id to {allocated bytes, CPU nanoseconds}
 * @param processCpuNanos the process's CPU time, which also covers GC and JIT threads
 * @param gcMillis        the collectors' accumulated collection time
 *
 * <p><b>Threading:</b> immutable once taken; {@link #take} may be called from any thread. A thread is grouped by the
 * name it had when a snapshot first saw it.
 */
record ThreadCost(Map<Long, String> names, Map<Long, long[]> perThread, long processCpuNanos, long gcMillis) {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static {
        THREADS.setThreadAllocatedMemoryEnabled(true);
        THREADS.setThreadCpuTimeEnabled(true);
    }

    /** Thread id to group name, from the thread's name when first seen: HotSpot never reuses a thread id. */
    private static final Map<Long, String> GROUPS = new ConcurrentHashMap<>();

    static ThreadCost take() {
        return take(-1);
    }

    /**
     * As {@link #take}, without the thread {@code measurer}: what the measuring thread spends taking snapshots every
     * few thousand calls is not counted.
     *
     * @param measurer the id of the thread that takes the snapshots
     */
    static ThreadCost takeWithout(long measurer) {
        return take(measurer);
    }

    /** @param leftOut the id of a thread to leave out, or -1 */
    private static ThreadCost take(long leftOut) {
        long[] ids = THREADS.getAllThreadIds();
        long[] bytes = THREADS.getThreadAllocatedBytes(ids);
        long[] cpu = THREADS.getThreadCpuTime(ids);
        Map<Long, String> names = new HashMap<>();
        Map<Long, long[]> perThread = new HashMap<>();
        for (int i = 0; i < ids.length; i++) {
            String group = ids[i] == leftOut || bytes[i] < 0 ? null : group(ids[i]);
            if (group != null) {
                names.put(ids[i], group);
                perThread.put(ids[i], new long[] {bytes[i], Math.max(0, cpu[i])});
            }
        }
        return new ThreadCost(names, perThread, processCpuNow(), gcMillisNow());
    }

    /** @return the group of thread {@code id}: its name when first seen, digits replaced; null if it has ended */
    private static String group(long id) {
        String group = GROUPS.get(id);
        if (group == null) {
            var info = THREADS.getThreadInfo(id);
            if (info == null) {
                return null;
            }
            group = info.getThreadName().replaceAll("[0-9]+", "#");
            GROUPS.put(id, group);
        }
        return group;
    }

    /** @return the process's CPU time now, every thread of this JVM included, in nanoseconds */
    static long processCpuNow() {
        return OS.getProcessCpuTime();
    }

    /** @return the collectors' accumulated collection time now, in milliseconds */
    static long gcMillisNow() {
        long gc = 0;
        for (var c : ManagementFactory.getGarbageCollectorMXBeans()) {
            gc += Math.max(0, c.getCollectionTime());
        }
        return gc;
    }

    /** @return per thread group, bytes and CPU nanoseconds since {@code earlier}; callers count from zero */
    Map<String, long[]> minus(ThreadCost earlier) {
        Map<String, long[]> groups = new TreeMap<>();
        perThread.forEach((id, v) -> {
            long[] was = earlier.perThread.getOrDefault(id, new long[2]);
            long[] g = groups.computeIfAbsent(names.get(id), k -> new long[2]);
            g[0] += v[0] - was[0];
            g[1] += v[1] - was[1];
        });
        return groups;
    }

    /** @return {heap bytes, CPU nanoseconds} of every thread since {@code earlier} */
    long[] total(ThreadCost earlier) {
        long[] sum = new long[2];
        for (long[] v : minus(earlier).values()) {
            sum[0] += v[0];
            sum[1] += v[1];
        }
        return sum;
    }

    /** @return the CPU time of every thread since {@code earlier}, per call, in microseconds */
    double cpuMicrosPerCall(ThreadCost earlier, long calls) {
        return total(earlier)[1] / 1e3 / calls;
    }

    /** @return the heap bytes every thread allocated since {@code earlier}, per call */
    double bytesPerCall(ThreadCost earlier, long calls) {
        return (double) total(earlier)[0] / calls;
    }

    /**
     * @param label  what the phase ran, printed first
     * @param calls  the calls the phase made
     * @param groups whether to add {@link #groupLines} after the line
     * @return one line: bytes allocated, thread CPU, process CPU and GC time (us) per call since {@code earlier}
     */
    String report(String label, ThreadCost earlier, long calls, boolean groups) {
        long[] total = total(earlier);
        String line = line(label, total[0], total[1], processCpuNanos - earlier.processCpuNanos,
                gcMillis - earlier.gcMillis, calls);
        return groups ? line + groupLines(minus(earlier), calls) : line;
    }

    /**
     * @param groups per thread group, bytes and CPU nanoseconds over {@code calls} calls ({@link #minus})
     * @return a line for each group that cost at least 8 B or 0.01 us a call (the wheel worker costs less than 1 us a
     *     call): its bytes and CPU time (us) per call
     */
    static String groupLines(Map<String, long[]> groups, long calls) {
        StringBuilder sb = new StringBuilder();
        groups.forEach((group, v) -> {
            if (v[0] / calls >= 8 || v[1] / calls >= 10) {
                sb.append(String.format(Locale.ROOT, "        %-44s %7d B  %8.2f us%n", group, v[0] / calls,
                        v[1] / 1e3 / calls));
            }
        });
        return sb.toString();
    }

    /**
     * @return one line: {@code label}, then bytes allocated, thread CPU, process CPU and GC time (us) per call, from
     *     totals over {@code calls} calls (bytes, nanoseconds, nanoseconds, milliseconds)
     */
    static String line(String label, long bytes, long cpuNanos, long processCpuNanos, long gcMillis, long calls) {
        return String.format(Locale.ROOT, "%s %8.0f  %17.2f  %18.2f  %9.2f%n", label, (double) bytes / calls,
                cpuNanos / 1e3 / calls, processCpuNanos / 1e3 / calls, gcMillis * 1e3 / calls);
    }
}
