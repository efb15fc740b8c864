package io.rpctimer.chaos;

/**
 * The two services of the chaos run: the demo's {@code NotificationService} exported twice by each provider, once
 * without a group ({@link #ORDERS}) and once in group {@code billing} ({@link #BILLING}). Two service keys of one
 * interface, so that one business key can be the {@code retry.id} of a call to each, as a user's "reserve" and
 * "charge" of order 42 would be.
 *
 * <p><b>Threading:</b> immutable.
 */
enum ChaosService {
    ORDERS(null),
    BILLING("billing");

    private final String group;

    ChaosService(String group) {
        this.group = group;
    }

    /** @return the Dubbo group, or null for none */
    String group() {
        return group;
    }

    /** @return the service of a Dubbo group (null or empty: {@link #ORDERS}) */
    static ChaosService of(String group) {
        return group == null || group.isEmpty() ? ORDERS : valueOf(group.toUpperCase(java.util.Locale.ROOT));
    }
}
