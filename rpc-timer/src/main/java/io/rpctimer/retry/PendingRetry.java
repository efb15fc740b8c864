package io.rpctimer.retry;

import java.util.Map;

/**
 * A retry that was pending when the consumer shut down: everything needed to send it again later.
 *
 * <p><b>Threading:</b> immutable as far as its own fields go; {@code arguments} are the caller's objects, shared.
 *
 * @param retryId        the call's retry id
 * @param service        the service interface name
 * @param group          the service group, or null
 * @param version        the service version, or null
 * @param method         the method name as invoked ({@code $invoke} for a generic call, whose arguments name the
 *                       method)
 * @param parameterTypes the method's parameter type names
 * @param arguments      the call's arguments: a copy of the caller's array, holding the caller's objects
 * @param attachments    the call's attachments as strings, {@code retry.id} included
 * @param nextAttempt    the retry that was pending (1-based)
 * @param lastFailure    what the last attempt failed with: the failure's class name and its message cut to a
 *                       few dozen characters ({@code "org.apache.dubbo.rpc.RpcException: Failed to invoke..."})
 * @param epochMillis    when it was handed over, in milliseconds since the epoch
 */
public record PendingRetry(String retryId, String service, String group, String version, String method,
                           String[] parameterTypes, Object[] arguments, Map<String, String> attachments,
                           int nextAttempt, String lastFailure, long epochMillis) {
}
