package io.rpctimer.bench.massfailure;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Samples the heap's used bytes every few milliseconds and keeps the highest: the peak heap of a run, garbage
 * included (what the JVM had to hold at once), as opposed to the live bytes measured after a GC.
 *
 * <p><b>Threading:</b> one daemon thread samples; {@link #peakBytes()} and {@link #close()} may be called from any
 * thread.
 */
public final class HeapSampler implements AutoCloseable {

    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final Thread thread;
    private final long periodNanos;
    private final AtomicLong peak = new AtomicLong();
    private volatile boolean stopped;

    private HeapSampler(long periodMillis) {
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(periodMillis);
        this.thread = new Thread(this::loop, "massfailure-heap-sampler");
        this.thread.setDaemon(true);
    }

    /** Starts sampling every {@code periodMillis}. */
    public static HeapSampler start(long periodMillis) {
        HeapSampler s = new HeapSampler(periodMillis);
        s.thread.start();
        return s;
    }

    private void loop() {
        while (!stopped) {
            sample();
            LockSupport.parkNanos(periodNanos);
        }
    }

    private void sample() {
        peak.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
    }

    /** @return the highest heap use sampled so far, in bytes */
    public long peakBytes() {
        sample();
        return peak.get();
    }

    @Override
    public void close() {
        stopped = true;
        LockSupport.unpark(thread);
    }
}
