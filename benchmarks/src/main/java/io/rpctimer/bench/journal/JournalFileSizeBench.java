package io.rpctimer.bench.journal;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.journal.EmbeddedJournal;
import io.rpctimer.retry.CallKey;
import io.rpctimer.retry.RetryJournalEntry;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The size of the embedded journal's H2 file through a burst of failed calls: {@code --calls} entries of
 * {@code --payload} random bytes each are appended by {@code --threads} threads at once (failing callers, whose
 * appends the journal group-commits), then removed the same way (their retries delivered). It prints the size of
 * {@code journal-0.mv.db} after the appends (the peak of live data), after the removes, every second of
 * {@code --idle} seconds with no writes, and while, during the idle time, one caller appends and removes an entry
 * every 500 ms (the slowest of these writes is printed: what a caller waits when it meets a compaction); then
 * after close and after a reopen. Appends/s and removes/s are printed with the load average: on a shared machine
 * the sizes are reliable, the rates are not.
 *
 * <p>Run: {@code mvn -B -q -pl benchmarks -am package -DskipTests && java -cp benchmarks/target/benchmarks.jar
 * io.rpctimer.bench.journal.JournalFileSizeBench [--calls 200000] [--payload 1024] [--threads 64] [--idle 10]}
 *
 * <p><b>Threading:</b> a main program; its phases run one after the other.
 */
public final class JournalFileSizeBench {

    private static final String APP = "bench";
    private static final String SVC = "bench/io.rpctimer.Greeting:1.0";
    private static final String METHOD = "greet";
    private static final long PROBE_EVERY_MILLIS = 500;

    private final int calls;
    private final int payloadBytes;
    private final int threads;
    private final int idleSeconds;

    private JournalFileSizeBench(BenchArgs args) {
        this.calls = args.intOption("calls", 200_000, 1);
        this.payloadBytes = args.intOption("payload", 1024, 0);
        this.threads = args.intOption("threads", 64, 1);
        this.idleSeconds = args.intOption("idle", 10, 0);
    }

    public static void main(String[] args) throws Exception {
        JournalFileSizeBench bench = new JournalFileSizeBench(BenchArgs.parse(args,
                List.of("calls", "payload", "threads", "idle")));
        Path dir = Files.createTempDirectory("journal-size");
        try {
            bench.run(dir);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    private void run(Path dir) throws Exception {
        System.out.printf(Locale.ROOT, "journal file size: %,d calls of %,d bytes, %d threads; %d cores, load"
                        + " averages %s, java %s%n", calls, payloadBytes, threads,
                Runtime.getRuntime().availableProcessors(), ForeignLoadMonitor.loadAverages(),
                System.getProperty("java.version"));
        Path file;
        try (EmbeddedJournal journal = EmbeddedJournal.open(dir, APP)) {
            file = journal.file();
            double appends = timed(calls, i -> journal.append(entry(i), false));
            print("after the appends", file, String.format(Locale.ROOT, "%,.0f appends/s, load averages %s",
                    appends, ForeignLoadMonitor.loadAverages()));
            double removes = timed(calls, i -> removed(journal, i));
            print("after the removes", file, String.format(Locale.ROOT, "%,.0f removes/s, load averages %s",
                    removes, ForeignLoadMonitor.loadAverages()));
            idle(journal, file);
        }
        print("after close", file, "");
        try (EmbeddedJournal journal = EmbeddedJournal.open(dir, APP)) {
            print("after reopen", file, journal.claim(APP, SVC, Integer.MAX_VALUE).size() + " entries");
        }
        print("after reopen and close", file, "");
    }

    /** Samples the size every second for {@code idleSeconds}, while one caller writes every 500 ms. */
    private void idle(EmbeddedJournal journal, Path file) throws Exception {
        ExecutorService prober = Executors.newSingleThreadExecutor(daemon("size-bench-probe"));
        long[] slowestNanos = new long[1];
        Future<?> probe = prober.submit(() -> {
            for (int i = calls; !Thread.currentThread().isInterrupted(); i++) {
                long start = System.nanoTime();
                journal.append(entry(i), false);
                removed(journal, i);
                slowestNanos[0] = Math.max(slowestNanos[0], System.nanoTime() - start);
                Thread.sleep(PROBE_EVERY_MILLIS);
            }
            return null;
        });
        for (int s = 1; s <= idleSeconds; s++) {
            Thread.sleep(1_000);
            print("  " + s + " s later", file, "");
        }
        probe.cancel(true);
        prober.shutdown();
        prober.awaitTermination(10, TimeUnit.SECONDS);
        if (probe.isDone() && !probe.isCancelled()) {
            probe.get(); // a failed write ends the run with its exception
        }
        System.out.printf(Locale.ROOT, "slowest append+remove of the writer meanwhile: %d ms%n",
                TimeUnit.NANOSECONDS.toMillis(slowestNanos[0]));
    }

    private interface Write {
        void run(int i) throws Exception;
    }

    /** Removes entry {@code i} and waits for its commit, as a caller whose retry was delivered. */
    private void removed(EmbeddedJournal journal, int i) throws Exception {
        if (!journal.remove(new CallKey(APP, SVC, METHOD, id(i))).toCompletableFuture().get(1, TimeUnit.MINUTES)) {
            throw new IllegalStateException("remove of " + id(i) + ": no such entry");
        }
    }

    /** @return writes per second of {@code count} writes spread over {@link #threads} threads */
    private double timed(int count, Write write) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads, daemon("size-bench-caller"));
        List<Future<?>> runs = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int first = t;
            runs.add(pool.submit(() -> {
                for (int i = first; i < count; i += threads) {
                    write.run(i);
                }
                return null;
            }));
        }
        for (Future<?> r : runs) {
            r.get();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        pool.shutdown();
        return count / seconds;
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    private static String id(int i) {
        return "size-" + i;
    }

    /** @return entry {@code i}: its own random payload, so that no two pages compress alike */
    private RetryJournalEntry entry(int i) {
        byte[] payload = new byte[payloadBytes];
        new SplittableRandom(i).nextBytes(payload);
        long now = System.currentTimeMillis();
        return new RetryJournalEntry(id(i), APP, SVC, METHOD, payload, 1, now + 5_000, "dubbo://10.0.0.1:20880",
                "RpcException: connection refused", now);
    }

    private static void print(String when, Path file, String note) throws IOException {
        System.out.printf(Locale.ROOT, "%-26s %,15d bytes  %s%n", when, Files.size(file), note);
    }
}
