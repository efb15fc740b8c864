package io.rpctimer.demo.provider.fault;

import io.rpctimer.demo.provider.api.NotificationRejectedException;
import io.rpctimer.demo.provider.ledger.CallLedger;
import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.demo.provider.ledger.CallRecord;

import org.apache.dubbo.rpc.Filter;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.ScopeModelAware;

import java.util.Optional;

/**
 * The provider-side Dubbo {@link Filter} that records every call in the provider's {@link CallLedger} and injects the
 * RPC-level "error" fault of its {@link FaultInjector}. SPI name {@value #NAME}; the demo provider enables it on
 * {@code NotificationService} only ({@code ServiceConfig.setFilter("faultinjection")}), and registers its injector and
 * ledger as beans of the application ({@code ApplicationModel.getBeanFactory().registerBean}); without them the
 * filter passes calls through.
 *
 * <h3>What the consumer sees</h3>
 * Verified by {@code DemoProviderIntegrationTest} (Dubbo 3.3.6, dubbo protocol, hessian2, failover with retries=1).
 * "Cluster" is what a cluster invoker gets back from the provider invoker it calls ({@code invokeWithContext}), which
 * is what failover or failback decide on; "caller" is what application code gets.
 * <ul>
 *   <li><b>error</b> (this filter throws {@link InjectedRpcException} before the service runs; the provider answers
 *       with an error status whose message is the exception's text).
 *       <br>Sync: the cluster's call <em>throws</em> {@code RpcException} code 1 ({@code NETWORK_EXCEPTION},
 *       {@code isNetwork()}) caused by {@code ExecutionException <- org.apache.dubbo.remoting.RemotingException};
 *       failover retried it; the caller gets {@code RpcException} code 1.
 *       <br>Async ({@code CompletableFuture} method): the cluster gets a pending result whose future completes
 *       exceptionally with {@code CompletionException <- RemotingException}; failover does not retry it; the caller's
 *       future fails with {@code RemotingException} (not an {@code RpcException}).</li>
 *   <li><b>fail</b> (the service throws {@code NotificationRejectedException}; the provider answers normally with the
 *       exception inside the result).
 *       <br>Sync: the cluster gets a done result with {@code hasException()}, nothing thrown, so failover does not
 *       retry it (tested), nor does Dubbo's failback (it retries only what {@code invoke} throws); the caller gets
 *       {@code NotificationRejectedException} thrown.
 *       <br>Async: a pending result whose future completes <em>normally</em> with that exception inside; the caller's
 *       future fails with {@code NotificationRejectedException}.</li>
 *   <li><b>An {@code RpcException} thrown by a service implementation</b> (not something this demo injects; tested
 *       with code 1) is sent inside a normal response, code intact; then the consumer's {@code RpcExceptionFilter}
 *       (active by default) rethrows it from its {@code onResponse}, which fails the result's future (Dubbo logs an
 *       ERROR for it).
 *       <br>Sync: the cluster gets a <em>done</em> result whose future failed with
 *       {@code CompletionException <- RpcException(code 1)}; nothing was thrown, so failover does not retry it although
 *       {@code isNetwork()}; on that result {@code hasException()} itself throws {@code RpcException} code 0; the
 *       caller gets {@code RpcException} code 0 caused by {@code ExecutionException}.
 *       <br>Async: a pending result whose future fails with {@code CompletionException <- RpcException(code 1)}; the
 *       caller's future fails with the {@code RpcException} code 1.
 *       <br>So a provider cannot make a call "RPC-failed" by throwing; that is why "error" is injected here.</li>
 *   <li><b>hang</b> longer than the consumer timeout.
 *       <br>Sync: the cluster's call throws {@code RpcException} code 2 ({@code isTimeout()}) caused by
 *       {@code java.util.concurrent.TimeoutException}; failover retried it.
 *       <br>Async: the future fails with {@code CompletionException <- org.apache.dubbo.remoting.TimeoutException};
 *       the caller's future fails with that {@code TimeoutException}.</li>
 *   <li><b>down</b> ({@code DemoProvider.goDown}: unregistered, then unexported). Once the consumer's registry
 *       directory has heard (well under a second with {@code delay-notification=0}): {@code RpcException} code 4
 *       ({@code FORBIDDEN_EXCEPTION}, "No provider available") thrown by the cluster invoker itself, before any
 *       provider invoker, for sync calls and for {@code sendAsync} alike ({@code sendAsync} throws instead of
 *       returning a failed future).</li>
 * </ul>
 *
 * <p>Thread-safe: one instance per Dubbo module, called from every server thread.
 */
public final class FaultFilter implements Filter, ScopeModelAware {
    /** SPI name, for {@code ServiceConfig.setFilter}. */
    public static final String NAME = "faultinjection";
    /** Attachment naming the original call of a retry; stable across its attempts. */
    public static final String RETRY_ID = "retry.id";
    /** Attachment numbering a retry's attempts, 1..n. */
    public static final String RETRY_ATTEMPT = "retry.attempt";

    private volatile ApplicationModel application; // set once by Dubbo when it creates the filter

    @Override
    public void setApplicationModel(ApplicationModel applicationModel) {
        this.application = applicationModel;
    }

    @Override
    public Result invoke(Invoker<?> invoker, Invocation invocation) throws RpcException {
        ApplicationModel app = application;
        FaultInjector faults = app == null ? null : app.getBeanFactory().getBean(FaultInjector.class);
        CallLedger ledger = app == null ? null : app.getBeanFactory().getBean(CallLedger.class);
        if (faults == null || ledger == null) {
            return invoker.invoke(invocation);
        }
        CallRecord call = ledger.received(invocation.getMethodName(), callId(invocation),
                invocation.getAttachment(RETRY_ID),
                CallRecord.parseAttempt(invocation.getAttachment(RETRY_ATTEMPT)));
        Optional<String> error = faults.nextRpcError();
        if (error.isPresent()) {
            String message = app.tryGetApplicationName() + "@" + invoker.getUrl().getAddress()
                    + ": injected RPC error (" + error.get() + ")";
            ledger.ended(call, CallOutcome.RPC_ERROR, message);
            throw new InjectedRpcException(message);
        }
        Result result;
        try {
            result = invoker.invoke(invocation);
        } catch (RuntimeException e) {
            ledger.ended(call, CallOutcome.FAILED, e.toString());
            throw e;
        }
        return result.whenCompleteWithContext((r, t) -> recordEnd(ledger, call, r, t));
    }

    private static void recordEnd(CallLedger ledger, CallRecord call, Result r, Throwable t) {
        if (t != null) {
            ledger.ended(call, CallOutcome.FAILED, t.toString());
        } else if (r.hasException()) {
            Throwable e = r.getException();
            if (e instanceof NotificationRejectedException) {
                ledger.ended(call, CallOutcome.REJECTED, e.getMessage());
            } else {
                ledger.ended(call, CallOutcome.FAILED, e.toString());
            }
        } else {
            ledger.ended(call, CallOutcome.COMPLETED, null);
        }
    }

    /** The {@code callId} argument: the first argument, if it is a string. */
    private static String callId(Invocation invocation) {
        Object[] args = invocation.getArguments();
        return args != null && args.length > 0 && args[0] instanceof String ? (String) args[0] : null;
    }
}
