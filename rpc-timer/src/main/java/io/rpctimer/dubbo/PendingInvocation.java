package io.rpctimer.dubbo;

import io.rpctimer.retry.FailedCall;
import io.rpctimer.retry.PendingRetry;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.common.profiler.Profiler;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.model.ServiceModel;

/**
 * What a pending call keeps of its invocation: what the next attempt needs and nothing more; {@link CallCodec}
 * serializes it for the journal. The template is shared with every other call of the method
 * ({@link PendingInvocations}); the argument array is a shallow copy (the argument objects are the caller's);
 * attributes are copied without Dubbo's profiler entry, which holds the first attempt's timing tree, and without keys
 * that are not names (a load balancer's per-invoker state). No invoke mode: every retry goes out async. Never a
 * {@link Throwable} or a provider invoker.
 *
 * <p><b>Threading:</b> immutable once made (the maps are shared read-only); thread-safe.
 *
 * @param template    what every failed call of the method has in common
 * @param arguments   the call's own copy of its argument array, or null
 * @param attachments the call's attachments without {@code retry.id} and {@code retry.attempt}; read-only
 * @param attributes  the call's attributes with names for keys, without the profiler's; read-only
 */
record PendingInvocation(Template template, Object[] arguments, Map<String, Object> attachments,
                         Map<Object, Object> attributes) {

    /** @return what {@code inv} must keep, its maps shared with the last call's when equal */
    static PendingInvocation of(Invocation inv, Template template, PendingInvocations.SharedMap<String> sharedAttachments,
                                PendingInvocations.SharedMap<Object> sharedAttributes) {
        Map<String, Object> attachments = new HashMap<>();
        inv.getObjectAttachments().forEach((k, v) -> {
            if (v != null && !k.equals(WheelFailback.RETRY_ID) && !k.equals(WheelFailback.RETRY_ATTEMPT)) {
                attachments.put(k, v);
            }
        });
        Map<Object, Object> attributes = new HashMap<>();
        inv.getAttributes().forEach((k, v) -> {
            if (k instanceof String && v != null && !k.equals(Profiler.PROFILER_KEY)) {
                attributes.put(k, v);
            }
        });
        Object[] arguments = inv.getArguments();
        return new PendingInvocation(template, arguments == null ? null : arguments.clone(),
                sharedAttachments.share(attachments), sharedAttributes.share(attributes));
    }

    String invokedMethod() {
        return template.invokedMethod();
    }

    Class<?>[] parameterTypes() {
        return template.parameterTypes();
    }

    URL consumerUrl() {
        return template.consumerUrl();
    }

    /** @return the method the caller means: for a generic call, the one it names (as {@code RpcUtils}) */
    String method() {
        String invoked = template.invokedMethod();
        boolean generic = CommonConstants.$INVOKE.equals(invoked) || CommonConstants.$INVOKE_ASYNC.equals(invoked);
        return generic && arguments != null && arguments.length > 0 && arguments[0] instanceof String named
                ? named : invoked;
    }

    /** @return a fresh invocation of this call, with its own maps */
    RpcInvocation toInvocation() {
        Template t = template;
        return new RpcInvocation(t.targetServiceUniqueName(), t.serviceModel(), t.invokedMethod(),
                t.serviceName(), t.protocolServiceKey(), t.parameterTypes(), arguments,
                new HashMap<>(attachments), null, Collections.synchronizedMap(new HashMap<>(attributes)), null);
    }

    /**
     * @param call the call handed over, whose payload this is
     * @param service the service interface name
     * @param url the reference's URL (group and version)
     * @return what a call handed over without a journal leaves in the {@link io.rpctimer.retry.RetryStore}
     */
    static PendingRetry toPendingRetry(FailedCall<PendingInvocation> call, String service, URL url) {
        PendingInvocation pending = call.payload();
        Map<String, String> attachments = new HashMap<>();
        pending.attachments().forEach((k, v) -> attachments.put(k, String.valueOf(v)));
        attachments.put(WheelFailback.RETRY_ID, call.retryId());
        Class<?>[] types = pending.parameterTypes();
        String[] typeNames = new String[types.length];
        for (int i = 0; i < types.length; i++) {
            typeNames[i] = types[i].getName();
        }
        return new PendingRetry(call.retryId(), service, url.getGroup(), url.getVersion(), pending.invokedMethod(),
                typeNames, pending.arguments(), Map.copyOf(attachments), call.attempt() + 1, call.lastFailure(),
                System.currentTimeMillis());
    }

    /**
     * What every failed call of one method has in common: kept once per reference and method, so a pending call holds
     * one reference to it.
     *
     * @param invokedMethod the method as invoked ({@code $invoke} for a generic call)
     * @param consumerUrl   the consumer URL the call was made with, or null
     */
    record Template(String targetServiceUniqueName, ServiceModel serviceModel, String invokedMethod,
                    String serviceName, String protocolServiceKey, Class<?>[] parameterTypes, URL consumerUrl) {

        static Template of(Invocation inv, URL consumerUrl) {
            return new Template(inv.getTargetServiceUniqueName(), inv.getServiceModel(), inv.getMethodName(),
                    inv.getServiceName(), inv.getProtocolServiceKey(), inv.getParameterTypes(), consumerUrl);
        }

        boolean matches(Template t) {
            return Objects.equals(targetServiceUniqueName, t.targetServiceUniqueName) && serviceModel == t.serviceModel
                    && Objects.equals(invokedMethod, t.invokedMethod) && Objects.equals(serviceName, t.serviceName)
                    && Objects.equals(protocolServiceKey, t.protocolServiceKey)
                    && Arrays.equals(parameterTypes, t.parameterTypes) && Objects.equals(consumerUrl, t.consumerUrl);
        }
    }
}
