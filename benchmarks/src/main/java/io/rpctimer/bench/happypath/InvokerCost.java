package io.rpctimer.bench.happypath;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.dubbo.TimeoutCheckFilter;
import io.rpctimer.dubbo.WheelFailbackCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.profiler.Profiler;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.InvokeMode;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.cluster.Cluster;
import org.apache.dubbo.rpc.cluster.directory.StaticDirectory;
import org.apache.dubbo.rpc.cluster.support.FailbackCluster;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.apache.dubbo.rpc.model.ModuleModel;

/**
 * The happy path without the network: what the cluster invoker alone costs per successful call, in heap
 * bytes allocated and CPU time on every thread of this JVM ({@link ThreadCost}), for Dubbo's {@code failback},
 * {@code wheelfailback}, and {@code wheelfailback} with the {@code timeoutcheck} filter in front of each provider, for
 * sync and async calls. Two in-process providers answer at once (sync) or after the invoker returned (async: the
 * reply completes the future the provider returned, as Dubbo's I/O thread would). Each call is a fresh
 * {@link RpcInvocation} with the profiler entry Dubbo's proxy puts in every call, as in a real call; that part is the
 * same for every configuration, so differences between rows are the invokers' and the filter's own.
 *
 * <pre>
 * java -Drpctimer.failback.store=memory -cp benchmarks/target/benchmarks.jar \
 *      io.rpctimer.bench.happypath.InvokerCost [--calls 2000000] [--warmup 1000000] [--rounds 3] [--groups 1]
 *      [--only wheelfailback] [--modes sync,async]
 * </pre>
 *
 * <p><b>Threading:</b> a single-threaded program (the shared wheel's threads run timeouts for {@code timeoutcheck}).
 */
public final class InvokerCost {

    /** The service called; the providers answer for it without implementing it. */
    public interface Notifier {
        String notify(String event);
    }

    private static final String SERVICE = Notifier.class.getName();

    private InvokerCost() {
    }

    public static void main(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse(args, List.of("calls", "warmup", "rounds", "groups", "only", "modes"));
        int calls = a.intOption("calls", 2_000_000, 1);
        int warmup = a.intOption("warmup", 1_000_000, 0);
        int rounds = a.intOption("rounds", 3, 1);
        boolean groups = a.intOption("groups", 0, 0) > 0;
        String only = a.option("only", "");
        List<String> modes = List.of(a.option("modes", "sync,async").split(","));
        FrameworkModel framework = new FrameworkModel();
        ModuleModel module = framework.newApplication().newModule();
        WheelFailbackCluster wheel = new WheelFailbackCluster();
        TimeoutCheckFilter filter = new TimeoutCheckFilter();
        try {
            Row[] rows = {
                new Row("failback", new FailbackCluster(), module, null),
                new Row("wheelfailback", wheel, module, null),
                new Row("wheelfailback+timeoutcheck", wheel, module, filter),
            };
            System.out.printf(Locale.ROOT, "%d calls a phase after %d warm-up calls, one calling thread%n", calls,
                    warmup);
            System.out.println("round mode  config                       B/call  threadCPU us/call  processCPU us/call  GC us/call");
            for (int round = 1; round <= rounds; round++) {
                for (String mode : modes) {
                    boolean sync = mode.equals("sync");
                    for (Row row : rows) {
                        if (!only.isEmpty() && !only.equals(row.label)) {
                            continue;
                        }
                        row.drive(sync, warmup);
                        System.gc();
                        ThreadCost before = ThreadCost.take();
                        row.drive(sync, calls);
                        ThreadCost after = ThreadCost.take();
                        System.out.print(after.report(String.format(Locale.ROOT, "%5d %-5s %-26s", round,
                                sync ? "sync" : "async", row.label), before, calls, groups));
                    }
                }
            }
        } finally {
            filter.destroy();
            wheel.destroy();
            framework.destroy();
        }
    }

    /** One configuration: a cluster invoker over two providers, each behind the filter or not. */
    private static final class Row {
        final String label;
        final Invoker<Notifier> invoker;
        final List<Provider> providers = new ArrayList<>();

        Row(String label, Cluster cluster, ModuleModel module, TimeoutCheckFilter filter) {
            this.label = label;
            List<Invoker<Notifier>> invokers = new ArrayList<>();
            for (int port : new int[] {20880, 20881}) {
                Provider p = new Provider(URL.valueOf("dubbo://127.0.0.1:" + port + "/" + SERVICE + "?interface="
                        + SERVICE + "&timeout=1000" + (filter == null ? "" : "&" + TimeoutCheckFilter.KEY + "=true"))
                        .setScopeModel(module));
                providers.add(p);
                invokers.add(filter == null ? p : new Filtered(p, filter));
            }
            // the reference's URL names the filter's key too, as a reference configured with it does
            URL url = URL.valueOf("consumer://127.0.0.1/" + SERVICE + "?interface=" + SERVICE + "&timeout=1000"
                    + (filter == null ? "" : "&" + TimeoutCheckFilter.KEY + "=true")).setScopeModel(module);
            this.invoker = cluster.join(new StaticDirectory<>(url, invokers), false);
        }

        void drive(boolean sync, int calls) {
            for (int i = 0; i < calls; i++) {
                RpcInvocation inv = call(sync);
                Result r = invoker.invoke(inv);
                if (!sync) {
                    for (Provider p : providers) {
                        p.answer();
                    }
                }
                if (!(r instanceof AsyncRpcResult async) || !"ok".equals(async.getResponseFuture().join().getValue())) {
                    throw new IllegalStateException(label + ": the call did not succeed: " + r);
                }
            }
        }

        /** A call as Dubbo's proxy makes it, with the profiler entry it puts in every invocation. */
        private static RpcInvocation call(boolean sync) {
            RpcInvocation inv = new RpcInvocation(null, "notify", SERVICE, "", new Class<?>[] {String.class},
                    new Object[] {"event"});
            inv.setInvokeMode(sync ? InvokeMode.SYNC : InvokeMode.FUTURE);
            inv.put(Profiler.PROFILER_KEY, Profiler.start("Receive request. Client invoke begin."));
            return inv;
        }
    }

    /** A provider invoker that answers "ok": at once for a sync call, at {@link #answer()} for an async one. */
    private static final class Provider implements Invoker<Notifier> {
        private final URL url;
        private CompletableFuture<AppResponse> pending;

        Provider(URL url) {
            this.url = url;
        }

        @Override
        public Result invoke(Invocation invocation) throws RpcException {
            if (((RpcInvocation) invocation).getInvokeMode() == InvokeMode.SYNC) {
                return AsyncRpcResult.newDefaultAsyncResult("ok", invocation);
            }
            pending = new CompletableFuture<>();
            AsyncRpcResult result = new AsyncRpcResult(pending, invocation);
            result.setExecutor(Runnable::run);
            return result;
        }

        void answer() {
            if (pending != null) {
                pending.complete(new AppResponse("ok"));
                pending = null;
            }
        }

        @Override
        public Class<Notifier> getInterface() {
            return Notifier.class;
        }

        @Override
        public URL getUrl() {
            return url;
        }

        @Override
        public boolean isAvailable() {
            return true;
        }

        @Override
        public void destroy() {
        }
    }

    /** A provider behind a consumer filter, as Dubbo's filter chain puts it. */
    private record Filtered(Invoker<Notifier> next, TimeoutCheckFilter filter) implements Invoker<Notifier> {

        @Override
        public Result invoke(Invocation invocation) throws RpcException {
            return filter.invoke(next, invocation);
        }

        @Override
        public Class<Notifier> getInterface() {
            return Notifier.class;
        }

        @Override
        public URL getUrl() {
            return next.getUrl();
        }

        @Override
        public boolean isAvailable() {
            return true;
        }

        @Override
        public void destroy() {
        }
    }
}
