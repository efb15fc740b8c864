package io.rpctimer.retry;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Which dead letters of an application an operation applies to: every criterion that is set must match, and a filter
 * with none ({@link #all()}) matches every dead letter. Criteria: the {@code retry.id}, the service key, the method,
 * the class name of the last failure (exact), and the age (how long ago the call became a dead letter, judged by the
 * store's clock: the database's with a journal).
 *
 * <p>Built in code ({@code DeadLetterFilter.all().service(key).olderThan(Duration.ofHours(1))}) or from an operator's
 * words ({@link #parse}), e.g. a QoS command's arguments or an HTTP query.
 *
 * <p><b>Threading:</b> immutable; each {@code with} method returns a new filter.
 */
public final class DeadLetterFilter {

    /** The criteria {@link #parse} reads, by name. */
    public static final List<String> CRITERIA = List.of("id", "service", "method", "failure", "older", "newer");
    private static final int MAX_CHARS = 255;
    private static final DeadLetterFilter ALL = new DeadLetterFilter(null, null, null, null, null, null);

    private final String retryId;
    private final String serviceKey;
    private final String method;
    private final String failureClass;
    private final Duration olderThan;
    private final Duration newerThan;

    private DeadLetterFilter(String retryId, String serviceKey, String method, String failureClass,
                             Duration olderThan, Duration newerThan) {
        this.retryId = retryId;
        this.serviceKey = serviceKey;
        this.method = method;
        this.failureClass = failureClass;
        this.olderThan = olderThan;
        this.newerThan = newerThan;
    }

    /** @return the filter that matches every dead letter */
    public static DeadLetterFilter all() {
        return ALL;
    }

    /** @return the dead letters of one {@code retry.id} (one, unless a business key names calls of two methods) */
    public static DeadLetterFilter retryId(String retryId) {
        return ALL.withRetryId(retryId);
    }

    /** @throws IllegalArgumentException {@code id: ... (expected: 1 to 255 characters)} */
    public DeadLetterFilter withRetryId(String retryId) {
        return new DeadLetterFilter(text("id", retryId), serviceKey, method, failureClass, olderThan, newerThan);
    }

    /** @param serviceKey the service key as listed ({@code group/interface:version}; the interface without either) */
    public DeadLetterFilter service(String serviceKey) {
        return new DeadLetterFilter(retryId, text("service", serviceKey), method, failureClass, olderThan, newerThan);
    }

    public DeadLetterFilter method(String method) {
        return new DeadLetterFilter(retryId, serviceKey, text("method", method), failureClass, olderThan, newerThan);
    }

    /** @param failureClass the last failure's class name, exactly as listed */
    public DeadLetterFilter failureClass(String failureClass) {
        return new DeadLetterFilter(retryId, serviceKey, method, text("failure", failureClass), olderThan, newerThan);
    }

    /** @param age dead letters at least this old, {@code > 0} */
    public DeadLetterFilter olderThan(Duration age) {
        return new DeadLetterFilter(retryId, serviceKey, method, failureClass, age("older", age), newerThan);
    }

    /** @param age dead letters at most this old, {@code > 0} */
    public DeadLetterFilter newerThan(Duration age) {
        return new DeadLetterFilter(retryId, serviceKey, method, failureClass, olderThan, age("newer", age));
    }

    /**
     * Reads a filter from an operator's criteria: {@code id}, {@code service}, {@code method}, {@code failure}, and
     * the ages {@code older} and {@code newer} ({@link DurationText}: {@code 30s}, {@code 10m}, {@code 7d} ...).
     *
     * @param criteria name to value, e.g. {@code {service=com.example.Orders, older=1h}}; empty: {@link #all()}
     * @throws IllegalArgumentException naming the criterion and its value, if either is not understood
     */
    public static DeadLetterFilter parse(Map<String, String> criteria) {
        DeadLetterFilter f = ALL;
        for (Map.Entry<String, String> c : criteria.entrySet()) {
            String value = c.getValue();
            f = switch (c.getKey() == null ? "" : c.getKey().toLowerCase(Locale.ROOT)) {
                case "id" -> f.withRetryId(value);
                case "service" -> f.service(value);
                case "method" -> f.method(value);
                case "failure" -> f.failureClass(value);
                case "older" -> f.olderThan(DurationText.parse("older", value));
                case "newer" -> f.newerThan(DurationText.parse("newer", value));
                default -> throw new IllegalArgumentException("filter: '" + c.getKey() + "=" + value
                        + "' (expected: one of " + String.join("=, ", CRITERIA) + "=)");
            };
        }
        return f;
    }

    /**
     * @param letter         a dead letter of the filter's application
     * @param nowEpochMillis the store's time now, epoch milliseconds
     * @return whether every criterion that is set matches {@code letter}
     */
    public boolean matches(DeadLetter letter, long nowEpochMillis) {
        long age = nowEpochMillis - letter.lastFailureEpochMillis();
        return (retryId == null || retryId.equals(letter.retryId()))
                && (serviceKey == null || serviceKey.equals(letter.serviceKey()))
                && (method == null || method.equals(letter.method()))
                && (failureClass == null || failureClass.equals(letter.failureClass()))
                && (olderThan == null || age >= olderThan.toMillis())
                && (newerThan == null || age <= newerThan.toMillis());
    }

    /** @return true if no criterion is set: the filter matches every dead letter */
    public boolean isAll() {
        return this == ALL || criteria().isEmpty();
    }

    /** @return the {@code retry.id} criterion, or null */
    public String retryId() {
        return retryId;
    }

    /** @return the service key criterion, or null */
    public String serviceKey() {
        return serviceKey;
    }

    /** @return the method criterion, or null */
    public String method() {
        return method;
    }

    /** @return the failure class criterion, or null */
    public String failureClass() {
        return failureClass;
    }

    /** @return the least age, or null */
    public Duration olderThan() {
        return olderThan;
    }

    /** @return the greatest age, or null */
    public Duration newerThan() {
        return newerThan;
    }

    /** @return the criteria that are set, as {@link #parse} reads them back, in the order of {@link #CRITERIA} */
    public Map<String, String> criteria() {
        Map<String, String> c = new LinkedHashMap<>();
        put(c, "id", retryId);
        put(c, "service", serviceKey);
        put(c, "method", method);
        put(c, "failure", failureClass);
        put(c, "older", olderThan == null ? null : DurationText.format(olderThan));
        put(c, "newer", newerThan == null ? null : DurationText.format(newerThan));
        return c;
    }

    private static void put(Map<String, String> c, String name, String value) {
        if (value != null) {
            c.put(name, value);
        }
    }

    private static String text(String name, String value) {
        if (value == null || value.isBlank() || value.length() > MAX_CHARS || value.chars().anyMatch(ch -> ch < 32)) {
            throw new IllegalArgumentException(name + ": " + (value == null ? "null" : "'" + value + "'")
                    + " (expected: 1 to " + MAX_CHARS + " characters, no control character)");
        }
        return value;
    }

    private static Duration age(String name, Duration age) {
        if (age == null || age.isZero() || age.isNegative()) {
            throw new IllegalArgumentException(name + ": " + age + " (expected: a duration > 0)");
        }
        return age;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DeadLetterFilter f && criteria().equals(f.criteria());
    }

    @Override
    public int hashCode() {
        return Objects.hash(criteria());
    }

    /** @return {@code all}, or the criteria as {@code name=value} words: {@code service=... older=1h} */
    @Override
    public String toString() {
        if (isAll()) {
            return "all";
        }
        StringBuilder s = new StringBuilder();
        criteria().forEach((k, v) -> s.append(s.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return s.toString();
    }
}
