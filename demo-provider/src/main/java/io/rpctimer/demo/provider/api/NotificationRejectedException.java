package io.rpctimer.demo.provider.api;

/**
 * A provider refused a notification: a <em>business</em> failure of {@link NotificationService}.
 *
 * <p>At the consumer it arrives inside the RPC result ({@code Result.hasException()}), not as an exception thrown by the
 * invoker, so Dubbo's failover and failback clusters do not retry it; the caller gets it thrown (sync) or as the
 * future's failure (async). It is declared on the service methods, so Dubbo's provider-side {@code ExceptionFilter}
 * neither wraps it nor logs it.
 *
 * <p>Immutable, so thread-safe. Only a message is carried, so hessian2 serializes it without registration.
 */
public class NotificationRejectedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message says who rejected what and why, e.g. {@code "p1@127.0.0.1:20881 rejected c-17 (fail rate 30%)"}
     */
    public NotificationRejectedException(String message) {
        super(message);
    }
}
