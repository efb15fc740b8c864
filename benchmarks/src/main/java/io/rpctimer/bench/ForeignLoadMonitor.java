package io.rpctimer.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Watches how much CPU the rest of the machine uses while the benchmarks run: every 500 ms it reads
 * {@code /proc/<pid>/stat} of every process that is not this JVM or one of its descendants (the JMH forks and
 * harness JVMs) and adds up their CPU time. On a 2-core machine another build running alongside skews every
 * number: the timer runner waits for a quiet machine before each measurement, records the foreign load during it and
 * repeats a disturbed one; the failback comparison records the foreign load of every run.
 *
 * <p>Linux only; elsewhere {@link #available()} is false and loads read as NaN.
 *
 * <p><b>Threading:</b> one daemon sampling thread writes; any thread reads.
 */
public final class ForeignLoadMonitor implements AutoCloseable {

    private static final Path PROC = Path.of("/proc");
    private static final long SAMPLE_MILLIS = 500;
    /** Kernel clock ticks per second of {@code /proc} CPU times (USER_HZ, 100 on Linux). */
    private static final double TICKS_PER_SECOND = 100;

    private final boolean available;
    private final Thread sampler;
    /** Foreign CPU ticks since start; written by the sampler. */
    private final AtomicLong foreignTicks = new AtomicLong();
    /** Foreign load of the last sample, in cores (as double bits); written by the sampler. */
    private final AtomicLong lastLoadBits = new AtomicLong(Double.doubleToLongBits(Double.NaN));
    private volatile boolean running = true;

    private ForeignLoadMonitor() {
        this.available = Files.isReadable(PROC.resolve("self/stat"));
        this.sampler = new Thread(this::sampleLoop, "foreign-load-monitor");
        this.sampler.setDaemon(true);
        if (available) {
            sampler.start();
        }
    }

    public static ForeignLoadMonitor start() {
        return new ForeignLoadMonitor();
    }

    public boolean available() {
        return available;
    }

    /** @return a mark to pass to {@link #coresSince} */
    public Mark mark() {
        return new Mark(System.nanoTime(), foreignTicks.get());
    }

    /** @return the average foreign load since {@code mark}, in cores (1.0 = one core busy), or NaN */
    public double coresSince(Mark mark) {
        if (!available) {
            return Double.NaN;
        }
        double seconds = (System.nanoTime() - mark.nanos) / 1e9;
        return seconds <= 0 ? 0 : (foreignTicks.get() - mark.ticks) / TICKS_PER_SECOND / seconds;
    }

    /** @return the foreign load of the last 500 ms sample, in cores, or NaN */
    public double lastCores() {
        return Double.longBitsToDouble(lastLoadBits.get());
    }

    /**
     * Waits until {@code quietSamples} consecutive 500 ms samples show at most {@code maxCores} of foreign load, for
     * at most {@code maxWaitMillis}.
     *
     * @return the seconds waited
     */
    public double awaitQuiet(double maxCores, int quietSamples, long maxWaitMillis) {
        long start = System.nanoTime();
        if (!available) {
            return 0;
        }
        int quiet = 0;
        while (quiet < quietSamples && (System.nanoTime() - start) / 1_000_000 < maxWaitMillis) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(SAMPLE_MILLIS)); // about one fresh sample
            quiet = lastCores() <= maxCores ? quiet + 1 : 0;
        }
        return (System.nanoTime() - start) / 1e9;
    }

    private void sampleLoop() {
        Map<Long, Long> previous = readForeignTicks();
        long previousNanos = System.nanoTime();
        while (running) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(SAMPLE_MILLIS));
            Map<Long, Long> current = readForeignTicks();
            long nanos = System.nanoTime();
            long delta = 0;
            for (Map.Entry<Long, Long> e : current.entrySet()) {
                Long before = previous.get(e.getKey());
                if (before != null && e.getValue() >= before) {
                    delta += e.getValue() - before;
                }
            }
            foreignTicks.addAndGet(delta);
            double cores = delta / TICKS_PER_SECOND / ((nanos - previousNanos) / 1e9);
            lastLoadBits.set(Double.doubleToLongBits(cores));
            previous = current;
            previousNanos = nanos;
        }
    }

    /** @return utime + stime in ticks of every process outside this JVM's process tree */
    private static Map<Long, Long> readForeignTicks() {
        ProcessHandle self = ProcessHandle.current();
        Set<Long> ours = Stream.concat(Stream.of(self), self.descendants())
                .map(ProcessHandle::pid).collect(Collectors.toSet());
        Map<Long, Long> ticks = new HashMap<>();
        try (Stream<Path> entries = Files.list(PROC)) {
            entries.forEach(p -> {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    return;
                }
                long pid = Long.parseLong(name);
                if (!ours.contains(pid)) {
                    long t = cpuTicks(p.resolve("stat"));
                    if (t >= 0) {
                        ticks.put(pid, t);
                    }
                }
            });
        } catch (IOException e) {
            return ticks;
        }
        return ticks;
    }

    /** @return utime + stime of one {@code /proc/<pid>/stat}, or -1 if it vanished */
    private static long cpuTicks(Path stat) {
        try {
            String line = Files.readString(stat);
            // the command name may hold spaces and parentheses: fields are counted after the last ')'
            String[] fields = line.substring(line.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** @return "1.18 0.85 2.19", the 1, 5 and 15 minute load averages, or "unknown" */
    public static String loadAverages() {
        try {
            String[] f = Files.readString(PROC.resolve("loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    @Override
    public void close() {
        running = false;
    }

    /** A point in time and the foreign CPU ticks counted until then. */
    public record Mark(long nanos, long ticks) {
    }
}
