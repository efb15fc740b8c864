package io.rpctimer.chaos;

import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.common.extension.Activate;
import org.apache.dubbo.rpc.Filter;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;

/**
 * The chaos run's consumer filter {@value #NAME}: puts the sending consumer instance on every invocation, as the
 * attachment {@value #KEY}, so that the providers can tell who sent each attempt. A protocol-level filter (group
 * {@code consumer}, on each provider invoker), so that both the first attempt a caller makes and every retry the
 * {@code wheelfailback} cluster sends later pass it. Active on references with the parameter {@value #KEY} (its value
 * is the instance, e.g. {@code c2.3}: consumer slot 2, third start).
 *
 * <p><b>Threading:</b> thread-safe, stateless.
 */
@Activate(group = CommonConstants.CONSUMER, value = SenderFilter.KEY)
public final class SenderFilter implements Filter {

    /** SPI name. */
    public static final String NAME = "chaossender";
    /** The reference parameter that activates the filter, and the attachment it sets. */
    public static final String KEY = "chaos.sender";

    @Override
    public Result invoke(Invoker<?> invoker, Invocation invocation) throws RpcException {
        String sender = invoker.getUrl().getParameter(KEY);
        if (sender != null) {
            invocation.setAttachment(KEY, sender);
        }
        return invoker.invoke(invocation);
    }
}
