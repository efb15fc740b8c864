package io.rpctimer.retry;

/**
 * What identifies one failed call in a {@link RetryJournal}: the application, the service and the method it called,
 * and its {@code retry.id}. A business key used as {@code retry.id} by two services (or two methods) is two calls.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param application the Dubbo application that made the call
 * @param serviceKey  the service key ({@code group/interface:version})
 * @param method      the method name
 * @param retryId     the call's {@code retry.id}
 */
public record CallKey(String application, String serviceKey, String method, String retryId) {

    @Override
    public String toString() {
        return application + "/" + serviceKey + "." + method + "() retry.id=" + retryId;
    }
}
