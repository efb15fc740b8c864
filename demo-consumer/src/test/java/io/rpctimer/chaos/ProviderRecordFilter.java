package io.rpctimer.chaos;

import io.rpctimer.dubbo.RetryDedupFilter;
import io.rpctimer.dubbo.WheelFailback;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.common.extension.Activate;
import org.apache.dubbo.rpc.Filter;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;

/**
 * The chaos run's provider filter {@value #NAME}, just outside {@code retrydedup}: records every invocation a provider
 * receives, before deduplication decides anything ({@link ProviderRecords}): the call id, {@code retry.id},
 * {@code retry.attempt}, the sending instance ({@link SenderFilter}), what {@code retrydedup}'s store decided
 * ({@link VerdictStore}) and how the invocation ended. Active on services with the parameter {@value #KEY}.
 *
 * <p><b>Threading:</b> thread-safe, stateless.
 */
@Activate(group = CommonConstants.PROVIDER, value = ProviderRecordFilter.KEY, order = RetryDedupFilter.ORDER - 1)
public final class ProviderRecordFilter implements Filter {

    /** SPI name. */
    public static final String NAME = "chaosrecorder";
    /** The service parameter that activates the filter. */
    public static final String KEY = "chaos.record";

    @Override
    public Result invoke(Invoker<?> invoker, Invocation invocation) throws RpcException {
        long receivedMillis = System.currentTimeMillis();
        URL url = invoker.getUrl();
        Object[] args = invocation.getArguments();
        ProviderRecords.Received r = new ProviderRecords.Received(receivedMillis, url.getApplication(),
                ChaosService.of(url.getGroup()), invocation.getMethodName(),
                args != null && args.length > 0 ? String.valueOf(args[0]) : "-",
                invocation.getAttachment(WheelFailback.RETRY_ID, "-"),
                Integer.parseInt(invocation.getAttachment(WheelFailback.RETRY_ATTEMPT, "0")),
                invocation.getAttachment(SenderFilter.KEY, "-"));
        VerdictStore.reset();
        Result result;
        try {
            result = invoker.invoke(invocation);
        } catch (RuntimeException e) {
            ProviderRecords.record(r, VerdictStore.last(), "THROWN:" + e.getClass().getSimpleName());
            throw e;
        }
        VerdictStore.Verdict verdict = VerdictStore.last();
        return result.whenCompleteWithContext((done, failure) -> ProviderRecords.record(r, verdict,
                failure != null ? "FAILED:" + failure.getClass().getSimpleName()
                        : done.hasException() ? "EXC:" + done.getException().getClass().getSimpleName() : "OK"));
    }
}
