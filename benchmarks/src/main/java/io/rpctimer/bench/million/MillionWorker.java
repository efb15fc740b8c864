package io.rpctimer.bench.million;

import com.zaxxer.hikari.HikariDataSource;
import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.ExecutionLedger;
import io.rpctimer.bench.durable.DrainWorker;
import io.rpctimer.bench.durable.RpcTimerInstance;
import io.rpctimer.bench.massfailure.HeapSampler;
import io.rpctimer.journal.EmbeddedJournal;
import io.rpctimer.journal.JdbcRetryJournal;
import io.rpctimer.retry.ReferenceState;
import io.rpctimer.retry.RetryBudget;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.wheel.Ticker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A child JVM of {@link MillionSpill}: one consumer instance, one phase. Prints {@code RESULT key=value ...} lines.
 *
 * <ul>
 *   <li>{@code --phase spill}: the providers are down. {@code --calls} calls fail back through the reference
 *       ({@code failbacktasks} small, {@code overflow=spill}), from 64 caller threads, in ten windows; after each, a
 *       GC and a reading of the live heap and the store's size. The heap is also sampled every 10 ms (its peak,
 *       garbage included). Then it prints {@code SPILLED} and waits to be killed (kill -9: a crash).</li>
 *   <li>{@code --phase claimall}: a restarted instance claims every call in one {@code claim} (as one with
 *       {@code failbacktasks} of a million would at start), timed; then it stops, giving the calls up.</li>
 *   <li>{@code --phase drain}: a restarted instance with the run's {@code failbacktasks}, the providers back: opens
 *       the store and resumes (timed: the claim at start), then delivers every call through a retry budget of
 *       {@code --rate} retries a second, counting each at the provider ({@link ExecutionLedger}, written to
 *       {@code --ledger}); the delivery rate is read every second.</li>
 * </ul>
 *
 * <p><b>Threading:</b> a main program.
 */
public final class MillionWorker {

    static final String PREFIX = "million_";
    private static final int WINDOWS = 10;
    private static final int CALLERS = 64;
    private static final Duration FIRST_DELAY = Duration.ofSeconds(5);
    private static final long CLAIM_PERIOD_MILLIS = 10_000;

    private final BenchArgs args;
    private final String store;
    private final int calls;
    private final int failbacktasks;
    private HikariDataSource pool;

    private MillionWorker(BenchArgs args) {
        this.args = args;
        this.store = args.option("store", "embedded");
        this.calls = args.intOption("calls", 1_000_000, 1);
        this.failbacktasks = args.intOption("failbacktasks", 100, 1);
    }

    public static void main(String[] argv) throws Exception {
        BenchArgs a = BenchArgs.parse(argv, List.of("phase", "store", "dir", "url", "calls", "failbacktasks", "rate",
                "owner", "lease", "ledger"));
        MillionWorker w = new MillionWorker(a);
        try {
            switch (a.option("phase", "spill")) {
                case "spill" -> w.spill();
                case "claimall" -> w.claimAll();
                case "drain" -> w.drain();
                default -> throw new IllegalArgumentException("--phase: " + a.option("phase", "")
                        + " (expected: spill, claimall or drain)");
            }
        } finally {
            if (w.pool != null) {
                w.pool.close();
            }
        }
        System.exit(0);
    }

    private RetryJournal open(String owner) throws RetryJournalException {
        if (store.equals("embedded")) {
            return EmbeddedJournal.open(Path.of(args.option("dir", "journal")), RpcTimerInstance.APPLICATION);
        }
        if (pool == null) {
            pool = DrainWorker.pool(args.option("url", null), 4);
        }
        return JdbcRetryJournal.builder(pool).owner(owner).tablePrefix(PREFIX)
                .lease(Duration.ofMillis(args.intOption("lease", 10_000, 30))).build();
    }

    // ------------------------------------------------------------------ spill

    private void spill() throws Exception {
        RetryJournal journal = open(args.option("owner", "spiller"));
        RpcTimerInstance instance = new RpcTimerInstance(journal, RpcTimerInstance.failing(), failbacktasks,
                RetryBudget.unlimited(), FIRST_DELAY, CLAIM_PERIOD_MILLIS);
        instance.go();
        byte[] payload = DrainWorker.payload();
        HeapSampler heap = HeapSampler.start(10);
        List<Long> live = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        long admitNanos = 0;
        long cpu0 = DrainWorker.cpuNanos();
        for (int w = 1; w <= WINDOWS; w++) {
            int from = (int) ((long) calls * (w - 1) / WINDOWS);
            int to = (int) ((long) calls * w / WINDOWS);
            long start = System.nanoTime();
            DrainWorker.admitAll(instance.reference(), from, to, payload, CALLERS);
            admitNanos += System.nanoTime() - start;
            live.add(usedAfterGc());
            sizes.add(storeBytes(journal));
            say("P " + to);
        }
        ReferenceState state = instance.reference().state();
        say("RESULT spillSeconds=" + admitNanos / 1e9 + " spillCpuSeconds=" + (DrainWorker.cpuNanos() - cpu0) / 1e9
                + " heapPeakBytes=" + heap.peakBytes()
                + " heapMaxBytes=" + Runtime.getRuntime().maxMemory() + " liveHeapBytes=" + join(live)
                + " storeBytes=" + join(sizes) + " parked=" + state.parked() + " pending=" + state.pending()
                + " rejected=" + state.stats().rejected() + " journalFailures="
                + instance.lifecycle().state().journalFailures());
        heap.close();
        say("SPILLED");
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine(); // killed meanwhile
    }

    // ------------------------------------------------------------------ claim all

    private void claimAll() throws Exception {
        long start = System.nanoTime();
        RetryJournal journal = open("claimer");
        long opened = System.nanoTime();
        long cpu0 = DrainWorker.cpuNanos();
        int claimed = journal.claim(RpcTimerInstance.APPLICATION, RpcTimerInstance.SERVICE, calls).size();
        long done = System.nanoTime();
        say("RESULT openSeconds=" + (opened - start) / 1e9 + " claimAllSeconds=" + (done - opened) / 1e9
                + " claimAllCpuSeconds=" + (DrainWorker.cpuNanos() - cpu0) / 1e9
                + " claimed=" + claimed + " heapPeakBytes=" + ManagementFactory.getMemoryMXBean()
                .getHeapMemoryUsage().getUsed());
        journal.close(); // a graceful stop: its calls stay, and its lease is given up
    }

    // ------------------------------------------------------------------ drain

    private void drain() throws Exception {
        long start = System.nanoTime();
        RetryJournal journal = open("restarted");
        long opened = System.nanoTime();
        ExecutionLedger ledger = new ExecutionLedger(calls);
        double rate = Double.parseDouble(args.option("rate", "5000"));
        RpcTimerInstance instance = new RpcTimerInstance(journal, RpcTimerInstance.delivering(ledger), failbacktasks,
                RetryBudget.tokenBucket(0, rate, 10, TimeUnit.SECONDS, Ticker.system()), FIRST_DELAY,
                CLAIM_PERIOD_MILLIS);
        HeapSampler heap = HeapSampler.start(10);
        long resumeStart = System.nanoTime();
        long cpu0 = DrainWorker.cpuNanos();
        int resumed = instance.reference().resume();
        long resumeNanos = System.nanoTime() - resumeStart;
        long resumeCpu = DrainWorker.cpuNanos() - cpu0;
        long deliveryStart = System.nanoTime();
        instance.go();
        List<Long> perSecond = awaitDelivered(ledger, instance);
        long deliveredNanos = System.nanoTime() - deliveryStart;
        long deliveryCpu = DrainWorker.cpuNanos() - cpu0 - resumeCpu;
        long rowsLeft = awaitEmpty(journal);
        ledger.write(Path.of(args.option("ledger", "ledger.bin")));
        say("RESULT openSeconds=" + (opened - start) / 1e9 + " resumeSeconds=" + resumeNanos / 1e9
                + " resumeCpuSeconds=" + resumeCpu / 1e9 + " resumed=" + resumed + " deliverySeconds="
                + deliveredNanos / 1e9 + " deliveryCpuSeconds=" + deliveryCpu / 1e9 + " budgetRate=" + rate
                + " executions=" + ledger.executions() + " heapPeakBytes=" + heap.peakBytes()
                + " liveHeapBytes=" + usedAfterGc() + " storeBytes=" + storeBytes(journal) + " rowsLeft=" + rowsLeft
                + " deliveredPerSecond=" + join(perSecond) + " delivered=" + instance.lifecycle().stats().delivered()
                + " journalFailures=" + instance.lifecycle().state().journalFailures()
                + " sendsDeferred=" + instance.reference().state().sendsDeferred()
                + " budgetWaits=" + instance.reference().state().budgetWaits());
        heap.close();
        instance.close();
        say("BYE");
    }

    /** @return deliveries counted in each second, until every call was delivered (bounded: 2 hours) */
    private List<Long> awaitDelivered(ExecutionLedger ledger, RpcTimerInstance instance) {
        List<Long> perSecond = new ArrayList<>();
        long last = 0;
        long next = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        long deadline = System.nanoTime() + TimeUnit.HOURS.toNanos(2);
        while (instance.lifecycle().stats().delivered() < calls && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Math.max(0, next - System.nanoTime()));
            next += TimeUnit.SECONDS.toNanos(1);
            long n = ledger.executions();
            perSecond.add(n - last);
            last = n;
            say("P " + n);
        }
        long n = ledger.executions();
        if (n > last) {
            perSecond.add(n - last);
        }
        return perSecond;
    }

    /** @return the calls left in the store once its removes are committed (bounded wait: 2 minutes) */
    private long awaitEmpty(RetryJournal journal) throws SQLException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        long rows;
        while ((rows = rows(journal)) > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        return rows;
    }

    private long rows(RetryJournal journal) throws SQLException {
        try (Connection c = connection(journal); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private String table() {
        return store.equals("embedded") ? "rpctimer_call" : PREFIX + "call";
    }

    /** A connection to the store: the embedded file is shared with this JVM's other connections to it. */
    private Connection connection(RetryJournal journal) throws SQLException {
        if (journal instanceof EmbeddedJournal e) {
            String base = e.file().toString().replaceAll("\\.mv\\.db$", "");
            return DriverManager.getConnection("jdbc:h2:file:" + base + ";WRITE_DELAY=0;DB_CLOSE_ON_EXIT=FALSE",
                    "sa", "");
        }
        return pool.getConnection();
    }

    /** @return the embedded file's size, or the PostgreSQL table's with its indexes and TOAST, in bytes */
    private long storeBytes(RetryJournal journal) throws Exception {
        if (journal instanceof EmbeddedJournal e) {
            return java.nio.file.Files.size(e.file());
        }
        try (Connection c = pool.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT pg_total_relation_size('" + table() + "')")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long usedAfterGc() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static String join(List<Long> values) {
        StringBuilder b = new StringBuilder();
        for (long v : values) {
            b.append(b.length() == 0 ? "" : ",").append(v);
        }
        return b.toString();
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
