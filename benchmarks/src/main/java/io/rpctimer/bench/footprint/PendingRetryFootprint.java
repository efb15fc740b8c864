package io.rpctimer.bench.footprint;

import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.dubbo.WheelFailbackCluster;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.List;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.logger.Level;
import org.apache.dubbo.common.logger.LoggerFactory;
import org.apache.dubbo.common.profiler.Profiler;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.cluster.directory.StaticDirectory;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.apache.dubbo.rpc.model.ModuleModel;

/**
 * How many bytes of heap one pending {@code wheelfailback} retry holds, beyond its arguments: 100,000 calls go
 * through a real {@code wheelfailback} cluster invoker to a directory whose every provider is gone, so each one fails
 * back with "no provider available" and waits on the shared wheel (first retry an hour away). Used heap is taken
 * after forced collections before and after; the arguments are allocated before the first measure and stay
 * reachable, so the difference is what the pending retries themselves hold. Run it on the {@code memory} store: the
 * embedded journal would add its write path to the measure.
 *
 * <p>Run (with a fixed heap so that collections settle, and nothing else in the JVM):
 * <pre>
 * mvn -B -q -pl benchmarks -am package -DskipTests
 * java -Xms1g -Xmx1g -XX:+UseG1GC -Drpctimer.failback.store=memory -cp benchmarks/target/benchmarks.jar \
 *     io.rpctimer.bench.footprint.PendingRetryFootprint [calls]
 * </pre>
 *
 * <p><b>Threading:</b> a single-threaded program.
 */
public final class PendingRetryFootprint {

    /** The service the calls are made to; never implemented: no provider is ever up. */
    public interface Notifier {
        String notify(String event);
    }

    private static final int DEFAULT_CALLS = 100_000;
    private static final int WARM_UP_CALLS = 2_000;

    private PendingRetryFootprint() {
    }

    public static void main(String[] args) throws Exception {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : DEFAULT_CALLS;
        LoggerFactory.setLevel(Level.ERROR); // every retry handed over at the end is logged at warn
        WheelFailback.setRetryStore(retry -> { }); // keep nothing after the measure
        FrameworkModel framework = new FrameworkModel();
        ModuleModel module = framework.newApplication().newModule();
        WheelFailbackCluster cluster = new WheelFailbackCluster();
        try {
            Invoker<Notifier> invoker = cluster.join(new NoProviderDirectory(url(module, calls + WARM_UP_CALLS),
                    new GoneProvider(url(module, 1))), true);
            for (int i = 0; i < WARM_UP_CALLS; i++) {
                invoker.invoke(call("warm-up-" + i));
            }
            Object[][] arguments = new Object[calls][];
            for (int i = 0; i < calls; i++) {
                arguments[i] = new Object[] {"order-" + i};
            }
            long before = usedHeapAfterGc();
            for (int i = 0; i < calls; i++) {
                invoker.invoke(call(arguments[i]));
            }
            long after = usedHeapAfterGc();
            System.out.printf("pending retries: %,d%nheap before: %,d bytes%nheap after:  %,d bytes%n"
                    + "per pending retry, beyond its arguments: %,d bytes%n", WheelFailback.stats().pending(),
                    before, after, (after - before) / calls);
            if (arguments.length != calls) {
                throw new AssertionError("the arguments must stay reachable until measured");
            }
        } finally {
            cluster.destroy();
            framework.destroy();
        }
    }

    private static URL url(ModuleModel module, int maxPending) {
        String service = Notifier.class.getName();
        return URL.valueOf("consumer://127.0.0.1/" + service + "?interface=" + service + "&failbacktasks="
                + maxPending + "&failback.delay=3600000&failback.maxdelay=3600000").setScopeModel(module);
    }

    /** A call as Dubbo's proxy makes it, with the profiler entry it puts in every invocation. */
    private static RpcInvocation call(Object... arguments) {
        RpcInvocation inv = new RpcInvocation(null, "notify", Notifier.class.getName(), "",
                new Class<?>[] {String.class}, arguments);
        inv.put(Profiler.PROFILER_KEY, Profiler.start("Receive request. Client invoke begin. ServiceKey: "
                + Notifier.class.getName() + " MethodName:notify"));
        return inv;
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100); // let the collector's concurrent phases finish between rounds
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /** A directory whose providers have all gone: every list is empty, so every call finds no provider. */
    private static final class NoProviderDirectory extends StaticDirectory<Notifier> {

        NoProviderDirectory(URL url, Invoker<Notifier> gone) {
            super(url, List.of(gone));
        }

        @Override
        public List<Invoker<Notifier>> list(Invocation invocation) {
            return List.of();
        }
    }

    /** The provider that was there once; never called. */
    private record GoneProvider(URL url) implements Invoker<Notifier> {

        @Override
        public Class<Notifier> getInterface() {
            return Notifier.class;
        }

        @Override
        public Result invoke(Invocation invocation) throws RpcException {
            throw new IllegalStateException("a provider of an empty directory was called");
        }

        @Override
        public URL getUrl() {
            return url;
        }

        @Override
        public boolean isAvailable() {
            return false;
        }

        @Override
        public void destroy() {
        }
    }
}
