package io.rpctimer.bench.happypath;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.bench.TwoProviders;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.testkit.DubboNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcContext;

/**
 * The happy path measured by what does not depend on other load on the machine: heap bytes allocated and
 * CPU time per successful call, for each consumer configuration ({@link Config}), sync and async callers. The same
 * rig as {@link HappyPathComparison} (embedded ZooKeeper, two providers, one consumer per configuration, all in this
 * JVM on 127.0.0.1). Each phase makes a fixed number of calls after a warm-up; allocation and CPU are the JVM's
 * per-thread counters ({@code com.sun.management.ThreadMXBean}) summed over every thread alive at the end, grouped
 * by thread name with digits dropped, and the process CPU time (which also covers GC and JIT threads). The output
 * opens with the machine ({@link MachineInfo}: processor, cores, JVM).
 *
 * <pre>
 * java -Xms2g -Xmx2g -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.happypath.CallCost
 *      [--calls 20000] [--warmup 20000] [--rounds 3] [--threads 4] [--outstanding 32] [--configs FAILBACK,WHEEL]
 *      [--modes sync,async] [--groups 1] [--retryid id] [--first 2] [--slice 2000]
 * </pre>
 * The configurations are interleaved: each round runs every mode and configuration once, and the order of the
 * configurations rotates by one each round, so that each runs in each position equally often over a multiple of their
 * number of rounds. At the end the run prints {@link CallCostSummary}'s verdicts from round {@code --first} on:
 * {@code wheelfailback} against {@code failback}, and {@code wheelfailback+timeoutcheck} against both, where the run
 * has them.
 * A configuration may add reference parameters, {@code NAME+key=value+...}: e.g.
 * {@code WHEEL_TIMEOUTCHECK+sendAsync.timeoutcheck=false} is the {@code timeoutcheck} filter in every call's chain,
 * switched off for the method called, which tells the filter's presence in Dubbo's chain from its work. A
 * configuration may also end in {@code @key}: each of its calls then carries a client attachment {@code key} of its
 * own, a string shaped like a generated {@code retry.id}, made on the caller's thread as {@code wheelfailback} makes
 * its id: {@code FAILBACK@retry.id} is Dubbo's {@code failback} sending what a {@code wheelfailback} call adds to
 * the wire, which tells that attachment's cost from the invoker's. {@code FAILBACK@spin400} makes the caller's thread
 * busy-wait 400 ns before each call and adds nothing to it: what work on the caller's thread alone costs the other
 * threads. {@code FAILBACK+twin=1} is a second {@code failback}
 * consumer, the same but for a reference parameter nothing reads: judged against {@code failback}, it shows what the
 * rig makes of two equal configurations in one JVM.
 * With {@code --slice n} a round makes each configuration's calls {@code n} at a time, the configurations taking
 * turns ({@link #sliced}), instead of one configuration's calls after another's: a round's ratio is then taken over
 * the same stretch of time for both configurations, not over two stretches some seconds apart.
 * A thread that ends during a phase loses its counts, so the figures are a lower bound; Dubbo's pools keep their
 * threads while calls flow. The providers' ledgers count only (no entry per {@code retry.id}), as in
 * {@link HappyPathComparison}. {@code --retryid id} makes every call carry that {@code retry.id} (a client
 * attachment) instead of its own. {@code --groups 1} prints each thread group's share of a phase's bytes and CPU
 * (with {@code --slice}, summed over the configuration's turns).
 *
 * <p><b>Threading:</b> single-threaded {@code main}; each phase starts and joins its own caller threads.
 */
public final class CallCost {

    /** A reference parameter nothing reads: {@code FAILBACK+twin=1} is a second {@code failback}, the A/A control. */
    static final String TWIN = "twin=1";
    /** An attachment key that adds 400 ns of the caller's CPU a call, and nothing to the call ({@link #attach}). */
    static final String SPIN_400 = "spin400";
    /** The comparisons judged: each {configuration, the configuration it is compared with}. */
    static final List<String[]> PAIRS = List.of(new String[] {Config.WHEEL.label, Config.FAILBACK.label},
            new String[] {Config.WHEEL_TIMEOUTCHECK.label, Config.FAILBACK.label},
            new String[] {Config.WHEEL_TIMEOUTCHECK.label, Config.WHEEL.label},
            new String[] {Config.FAILOVER.label, Config.FAILBACK.label},
            new String[] {Config.FAILBACK.label + "@" + WheelFailback.RETRY_ID, Config.FAILBACK.label},
            new String[] {Config.FAILBACK.label + "+" + TWIN, Config.FAILBACK.label},
            new String[] {Config.FAILBACK.label + "@" + SPIN_400, Config.FAILBACK.label});
    /** The most thread CPU a call may cost over its reference's, as a ratio. */
    static final double THRESHOLD = 1.03;

    /** The sync callers: alive from phase to phase, so that their counters are not lost when a phase ends. */
    private static final ThreadPoolExecutor CALLERS = new ThreadPoolExecutor(64, 64, 1, TimeUnit.HOURS,
            new LinkedBlockingQueue<>(), r -> new Thread(r, "callcost-caller"));

    /** A retry.id every call sets as its own client attachment, or null (each call gets its own). */
    private static String fixedRetryId;
    /** The prefix of the values of a configuration's own per-call attachment ({@code @key}). */
    private static final String ATTACHMENT_PREFIX =
            Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16) + "-";
    private static final AtomicLong ATTACHMENT_VALUES = new AtomicLong();

    private CallCost() {
    }

    public static void main(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse(args, List.of("calls", "warmup", "rounds", "threads", "outstanding",
                "configs", "modes", "groups", "retryid", "first", "slice"));
        int calls = a.intOption("calls", 20_000, 1);
        int warmup = a.intOption("warmup", 20_000, 0);
        int rounds = a.intOption("rounds", 3, 1);
        int threads = a.intOption("threads", 4, 1);
        int outstanding = a.intOption("outstanding", 32, 1);
        boolean groups = a.intOption("groups", 0, 0) > 0;
        int slice = a.intOption("slice", 0, 0);
        CallCostSummary summary = new CallCostSummary(a.intOption("first", Math.min(2, rounds), 1));
        List<Variant> configs = new ArrayList<>();
        for (String c : a.option("configs", "FAILBACK,WHEEL,WHEEL_TIMEOUTCHECK").split(",")) {
            configs.add(Variant.parse(c.trim()));
        }
        List<String> modes = List.of(a.option("modes", "sync,async").split(","));
        fixedRetryId = a.option("retryid", null);
        if (System.getProperty("dubbo.application.logger") == null) {
            System.setProperty("dubbo.application.logger", "slf4j");
        }
        DubboNode.disableDubboShutdownHooks();
        CALLERS.prestartAllCoreThreads();
        TwoProviders rig = TwoProviders.start();
        rig.providers().forEach(p -> p.ledger().setCountsOnly(true));
        Map<Variant, DubboNode> nodes = new LinkedHashMap<>();
        try {
            Map<Variant, NotificationService> services = new LinkedHashMap<>();
            for (Variant c : configs) {
                ReferenceConfig<NotificationService> ref = HappyPathComparison.reference(c.config());
                ref.getParameters().putAll(c.parameters());
                nodes.put(c, DubboNode.create("callcost-" + nodes.size(), rig.registry()).reference(ref).start());
                services.put(c, ref.get());
                services.get(c).send(LoadPhase.CALL_ID, LoadPhase.MESSAGE);
            }
            System.out.println("machine: " + MachineInfo.collect());
            System.out.printf(Locale.ROOT, "%d calls a phase after %d warm-up calls; sync: %d threads, async: %d "
                    + "in flight%s%n", calls, warmup, threads, outstanding, slice == 0 ? ""
                    : String.format(Locale.ROOT, "; in turns of %d calls", slice));
            System.out.println("round mode  config                      B/call  threadCPU us/call  processCPU us/call"
                    + "  GC us/call");
            for (int round = 1; round <= rounds; round++) {
                for (String mode : modes) {
                    if (slice > 0) {
                        sliced(round, mode.trim(), configs, services, rig, summary, threads, outstanding, warmup,
                                calls, slice, groups);
                        continue;
                    }
                    for (int i = 0; i < configs.size(); i++) {
                        Variant c = configs.get((i + round - 1) % configs.size());
                        boolean sync = mode.trim().equals("sync");
                        int concurrency = sync ? threads : outstanding;
                        drive(services.get(c), c.attachment(), sync, concurrency, warmup);
                        rig.providers().forEach(p -> p.ledger().reset());
                        System.gc();
                        ThreadCost before = ThreadCost.take();
                        drive(services.get(c), c.attachment(), sync, concurrency, calls);
                        ThreadCost after = ThreadCost.take();
                        System.out.print(after.report(String.format(Locale.ROOT, "%5d %-5s %-26s", round,
                                mode.trim(), c.label()), before, calls, groups));
                        summary.add(new CallCostSummary.Phase(0, round, mode.trim(), c.label(),
                                after.cpuMicrosPerCall(before, calls), after.bytesPerCall(before, calls)));
                    }
                }
            }
            System.out.println();
            System.out.print(CallCostSummary.markdown(summary.verdicts(PAIRS), THRESHOLD));
        } finally {
            nodes.values().forEach(DubboNode::close);
            rig.close();
        }
        System.exit(0); // Dubbo's and ZooKeeper's leftover threads are not all daemons
    }

    /**
     * One round of one mode in slices: each configuration's warm-up, then its {@code calls} calls made
     * {@code slice} at a time, the configurations taking turns, forwards in even slices and backwards in odd ones,
     * so that a change of the machine's speed over the round falls on every configuration alike. Each configuration's
     * counts are summed over its slices. The callers run on pool threads, the async one too; the thread that measures
     * is left out of the counts ({@link ThreadCost#takeWithout}). With {@code groups}, each configuration's thread
     * groups are summed over its slices too.
     */
    private static void sliced(int round, String mode, List<Variant> configs,
                               Map<Variant, NotificationService> services, TwoProviders rig,
                               CallCostSummary summary, int threads, int outstanding, int warmup, int calls, int slice,
                               boolean groups) throws InterruptedException {
        boolean sync = mode.equals("sync");
        int concurrency = sync ? threads : outstanding;
        List<Variant> order = new ArrayList<>();
        for (int i = 0; i < configs.size(); i++) {
            order.add(configs.get((i + round - 1) % configs.size()));
        }
        for (Variant c : order) {
            driveOnPool(services.get(c), c.attachment(), sync, concurrency, warmup);
        }
        rig.providers().forEach(p -> p.ledger().reset());
        System.gc();
        long measurer = Thread.currentThread().getId();
        Map<Variant, long[]> totals = new LinkedHashMap<>(); // bytes, thread CPU ns, process CPU ns, GC ms
        Map<Variant, Map<String, long[]>> groupTotals = new LinkedHashMap<>(); // per group: bytes, thread CPU ns
        order.forEach(c -> {
            totals.put(c, new long[4]);
            groupTotals.put(c, new TreeMap<>());
        });
        for (Turn<Variant> turn : turns(order, calls, slice)) {
            Variant c = turn.config();
            ThreadCost before = ThreadCost.takeWithout(measurer);
            driveOnPool(services.get(c), c.attachment(), sync, concurrency, turn.calls());
            ThreadCost after = ThreadCost.takeWithout(measurer);
            long[] t = totals.get(c);
            after.minus(before).forEach((group, d) -> {
                long[] g = groupTotals.get(c).computeIfAbsent(group, k -> new long[2]);
                g[0] += d[0];
                g[1] += d[1];
                t[0] += d[0];
                t[1] += d[1];
            });
            t[2] += after.processCpuNanos() - before.processCpuNanos();
            t[3] += after.gcMillis() - before.gcMillis();
        }
        totals.forEach((c, t) -> {
            System.out.print(ThreadCost.line(String.format(Locale.ROOT, "%5d %-5s %-26s", round, mode, c.label()),
                    t[0], t[1], t[2], t[3], calls));
            if (groups) {
                System.out.print(ThreadCost.groupLines(groupTotals.get(c), calls));
            }
            summary.add(new CallCostSummary.Phase(0, round, mode, c.label(), t[1] / 1e3 / calls,
                    (double) t[0] / calls));
        });
    }

    /**
     * One configuration's turn in a sliced round.
     *
     * @param calls the calls it makes, {@code >= 1}
     */
    record Turn<T>(T config, int calls) {
    }

    /**
     * @param order the configurations in the round's order
     * @param calls each configuration's calls in the round, {@code >= 1}
     * @param slice the calls of one turn, {@code >= 1}; the last turns of a round make what is left
     * @return the round's turns: slice after slice, every configuration once in each, in {@code order} in even slices
     *     and backwards in odd ones
     */
    static <T> List<Turn<T>> turns(List<T> order, int calls, int slice) {
        List<T> backwards = new ArrayList<>(order);
        Collections.reverse(backwards);
        List<Turn<T>> turns = new ArrayList<>();
        for (int s = 0, done = 0; done < calls; s++, done += slice) {
            for (T c : s % 2 == 0 ? order : backwards) {
                turns.add(new Turn<>(c, Math.min(slice, calls - done)));
            }
        }
        return turns;
    }

    /** {@link #drive}, on a pool thread for async calls too, so that the calling thread stays out of the counts. */
    private static void driveOnPool(NotificationService service, String attachment, boolean sync, int concurrency,
                                    int calls) throws InterruptedException {
        if (sync) {
            drive(service, attachment, true, concurrency, calls);
            return;
        }
        try {
            CALLERS.submit(() -> {
                drive(service, attachment, false, concurrency, calls);
                return null;
            }).get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("an async call failed", e.getCause());
        }
    }

    /**
     * One consumer configuration of a run: a {@link Config}, the reference parameters it adds, and the client
     * attachment each of its calls carries.
     *
     * @param attachment the key of an attachment each call carries with a value of its own, or null
     * @param label      the configuration's label, then each added parameter, then {@code @attachment}
     */
    record Variant(Config config, Map<String, String> parameters, String attachment, String label) {

        /**
         * @param spec {@code NAME}, {@code NAME+key=value+...}, then optionally {@code @key}; NAME a {@link Config}
         * @throws IllegalArgumentException naming the spec, if NAME is no configuration, a parameter has no
         *     {@code =}, or the attachment's key is empty
         */
        static Variant parse(String spec) {
            int at = spec.indexOf('@');
            String attachment = at < 0 ? null : spec.substring(at + 1);
            if (attachment != null && attachment.isEmpty()) {
                throw new IllegalArgumentException("configs: " + spec + " (expected: an attachment key after @)");
            }
            String[] parts = (at < 0 ? spec : spec.substring(0, at)).split("\\+");
            Config config;
            try {
                config = Config.valueOf(parts[0]);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("configs: " + spec + " (expected: one of "
                        + Arrays.toString(Config.values()) + ", then +key=value...)");
            }
            Map<String, String> parameters = new LinkedHashMap<>();
            StringBuilder label = new StringBuilder(config.label);
            for (int i = 1; i < parts.length; i++) {
                int eq = parts[i].indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("configs: " + spec + " (expected: key=value after a +, got "
                            + parts[i] + ")");
                }
                parameters.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
                label.append('+').append(parts[i]);
            }
            if (attachment != null) {
                label.append('@').append(attachment);
            }
            return new Variant(config, Map.copyOf(parameters), attachment, label.toString());
        }
    }

    /**
     * Sets this call's client attachments: the configuration's own one ({@code @key}), and with {@code --retryid}
     * that {@code retry.id}. A key {@code spin} and a number N ({@code @spin400}) sets no attachment: the caller's
     * thread busy-waits N nanoseconds instead, work on the caller's thread alone, with nothing added to the call.
     */
    static void attach(String attachment) {
        long spin = spinNanos(attachment);
        if (spin >= 0) {
            long end = System.nanoTime() + spin;
            while (System.nanoTime() < end) {
                Thread.onSpinWait();
            }
        } else if (attachment != null) {
            RpcContext.getClientAttachment().setAttachment(attachment,
                    ATTACHMENT_PREFIX + ATTACHMENT_VALUES.incrementAndGet());
        }
        if (fixedRetryId != null) {
            RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, fixedRetryId);
        }
    }

    /** @return N for an attachment key {@code spin} and N (1 to 12 decimal digits), else -1; allocates nothing */
    static long spinNanos(String key) {
        if (key == null || !key.startsWith("spin") || key.length() < 5 || key.length() > 16) {
            return -1;
        }
        for (int i = 4; i < key.length(); i++) {
            if (key.charAt(i) < '0' || key.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(key, 4, key.length(), 10);
    }

    /**
     * Makes {@code calls} calls: sync on {@code concurrency} threads, or async with {@code concurrency} in flight.
     *
     * @param attachment the key of the attachment each call carries with a value of its own, or null
     */
    private static void drive(NotificationService service, String attachment, boolean sync, int concurrency,
                              int calls)
            throws InterruptedException {
        if (calls == 0) {
            return;
        }
        AtomicInteger left = new AtomicInteger(calls);
        if (!sync) {
            Semaphore inFlight = new Semaphore(concurrency);
            while (left.getAndDecrement() > 0) {
                inFlight.acquire();
                CompletableFuture<String> f;
                try {
                    attach(attachment);
                    f = service.sendAsync(LoadPhase.CALL_ID, LoadPhase.MESSAGE);
                } catch (RuntimeException e) {
                    inFlight.release();
                    throw e;
                }
                f.whenComplete((r, e) -> inFlight.release());
            }
            inFlight.acquire(concurrency);
            return;
        }
        List<Future<?>> callers = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
            callers.add(CALLERS.submit(() -> {
                while (left.getAndDecrement() > 0) {
                    attach(attachment);
                    service.send(LoadPhase.CALL_ID, LoadPhase.MESSAGE);
                }
            }));
        }
        for (Future<?> f : callers) {
            try {
                f.get();
            } catch (ExecutionException e) {
                throw new IllegalStateException("a sync call failed", e.getCause());
            }
        }
    }
}
