package io.rpctimer.demo.provider;

import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.cluster.Directory;
import org.apache.dubbo.rpc.cluster.support.AbstractClusterInvoker;
import org.apache.dubbo.rpc.cluster.support.FailoverClusterInvoker;
import org.apache.dubbo.rpc.cluster.support.wrapper.AbstractCluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Test-only Cluster SPI {@code probefailover}: Dubbo's failover cluster, recording per {@code callId} argument what
 * each attempt's provider invoker handed back to the cluster invoker (its {@code invokeWithContext}): an exception
 * thrown, or a result, done or pending, whose future holds a value, an exception inside the {@code AppResponse}, or
 * failed. This is exactly what a cluster such as failback decides on.
 *
 * <p>Thread-safe.
 */
public final class ProbeCluster extends AbstractCluster {
    /** How one attempt reached the cluster invoker. */
    public enum Kind {
        /** {@code invoke()} threw. */
        THROWN,
        /** Done result, its future completed with an AppResponse carrying an exception. */
        RESULT_EXCEPTION,
        /** Done result, its future completed exceptionally ({@code hasException()} would throw). */
        RESULT_FAILED,
        /** Done result with a value. */
        RESULT_VALUE,
        /** Pending result; its future later completed with an AppResponse carrying an exception. */
        FUTURE_RESULT_EXCEPTION,
        /** Pending result; its future later completed exceptionally. */
        FUTURE_FAILED,
        /** Pending result; its future later completed with a value. */
        FUTURE_VALUE
    }

    /** One attempt: its kind and, if any, the error exactly as seen (a CompletionException is not unwrapped). */
    public record Seen(Kind kind, Throwable error, String note) {
        Seen(Kind kind, Throwable error) {
            this(kind, error, null);
        }

        /** @return the RpcException code of the error without its CompletionException wrapper, or -1 */
        public int code() {
            return unwrapped() instanceof RpcException e ? e.getCode() : -1;
        }

        /** @return the error without a CompletionException wrapper */
        public Throwable unwrapped() {
            return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        }

        @Override
        public String toString() {
            if (error == null) {
                return kind.toString();
            }
            List<String> chain = new ArrayList<>();
            for (Throwable t = error; t != null && chain.size() < 4; t = t.getCause()) {
                chain.add(t.getClass().getName() + (t instanceof RpcException e ? "(code " + e.getCode() + ")" : ""));
            }
            return kind + " " + String.join(" <- ", chain) + (note == null ? "" : " [" + note + "]");
        }
    }

    private static final Map<String, List<Seen>> SEEN = new ConcurrentHashMap<>();

    /** @return what the cluster invoker got for each attempt of this call id, in order */
    public static List<Seen> seen(String callId) {
        return SEEN.getOrDefault(callId, List.of());
    }

    /** Forgets everything recorded. */
    public static void clear() {
        SEEN.clear();
    }

    @Override
    protected <T> AbstractClusterInvoker<T> doJoin(Directory<T> directory) {
        return new FailoverClusterInvoker<>(directory) {
            @Override
            protected Result invokeWithContext(Invoker<T> invoker, Invocation invocation) {
                String callId = String.valueOf(invocation.getArguments()[0]);
                Result r;
                try {
                    r = super.invokeWithContext(invoker, invocation);
                } catch (RuntimeException e) {
                    add(callId, new Seen(Kind.THROWN, e));
                    throw e;
                }
                observe(callId, r);
                return r;
            }
        };
    }

    private static void observe(String callId, Result r) {
        CompletableFuture<AppResponse> f = ((AsyncRpcResult) r).getResponseFuture();
        boolean done = f.isDone();
        String note = done && f.isCompletedExceptionally() ? hasExceptionOutcome(r) : null;
        f.whenComplete((appResponse, t) -> add(callId, t != null
                ? new Seen(done ? Kind.RESULT_FAILED : Kind.FUTURE_FAILED, t, note)
                : appResponse.hasException()
                        ? new Seen(done ? Kind.RESULT_EXCEPTION : Kind.FUTURE_RESULT_EXCEPTION,
                                appResponse.getException())
                        : new Seen(done ? Kind.RESULT_VALUE : Kind.FUTURE_VALUE, null)));
    }

    /** What {@code Result.hasException()} does on a result whose future failed. */
    private static String hasExceptionOutcome(Result r) {
        try {
            return "hasException() returned " + r.hasException();
        } catch (RpcException e) {
            return "hasException() threw RpcException(code " + e.getCode() + ")";
        }
    }

    private static void add(String callId, Seen seen) {
        SEEN.computeIfAbsent(callId, k -> new CopyOnWriteArrayList<>()).add(seen);
    }
}
