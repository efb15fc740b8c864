package io.rpctimer.demo.provider.api;

import java.util.concurrent.CompletableFuture;

/**
 * The demo's service: delivers a notification and answers with the provider that delivered it.
 *
 * <p>Payloads are plain strings so that Dubbo's default hessian2 serialization needs no class registration.
 * {@code callId} is the caller's own identifier of the notification (stable across retries, so a provider can spot
 * duplicates); the provider records it with the {@code retry.id} and {@code retry.attempt} attachments, if any.
 *
 * <p>Failures a caller can see, by where they come from (what each looks like at the consumer is described in
 * {@code io.rpctimer.demo.provider.fault.FaultFilter}):
 * <ul>
 *   <li>{@link NotificationRejectedException}: the service refused the notification, a business failure. It travels
 *       inside the RPC result, so Dubbo clusters do not retry it;</li>
 *   <li>{@code org.apache.dubbo.rpc.RpcException} (sync) or an exception from the future (async): the call failed at
 *       the RPC level: provider error, timeout, provider gone.</li>
 * </ul>
 *
 * <p>Implementations are thread-safe: Dubbo calls them from many server threads.
 */
public interface NotificationService {

    /**
     * Delivers a notification, blocking until it is delivered or rejected.
     *
     * @param callId the caller's identifier of this notification, e.g. {@code "c-17"}; kept across retries
     * @param message the text to deliver
     * @return the provider that delivered it, as {@code "<name>@<host>:<port>"}, e.g. {@code "p1@127.0.0.1:20881"}
     * @throws NotificationRejectedException if the provider refused it (an injected business failure)
     */
    String send(String callId, String message) throws NotificationRejectedException;

    /**
     * Delivers a notification asynchronously; the provider holds no thread while an injected delay runs.
     *
     * @param callId the caller's identifier of this notification; kept across retries
     * @param message the text to deliver
     * @return completes with {@code "<name>@<host>:<port>"}, or exceptionally with
     *         {@link NotificationRejectedException} if the provider refused it
     * @throws NotificationRejectedException declared so that Dubbo's provider-side {@code ExceptionFilter} passes it
     *         through unchanged; the async path reports it through the future
     */
    CompletableFuture<String> sendAsync(String callId, String message) throws NotificationRejectedException;
}
