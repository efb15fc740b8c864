package io.rpctimer.dubbo;

import io.rpctimer.dedup.CaffeineDedupStore;
import io.rpctimer.dedup.DedupWindows;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.constants.CommonConstants;

/**
 * The {@code retrydedup} settings of one exported service, read from its provider URL and checked: which methods are
 * deduplicated, which store, and the in-memory store's bound and windows.
 *
 * <p><b>Threading:</b> immutable.
 */
final class RetryDedupConfig {

    /** {@code true} on a service deduplicates all its methods; {@code <method>.retrydedup} overrides per method. */
    static final String KEY = "retrydedup";
    /** {@code memory} (default) or the name of a store given to {@link RetryDedupFilter#registerStore}. */
    static final String STORE = "retrydedup.store";
    /** The in-memory store's bound, in entries. */
    static final String SIZE = "retrydedup.size";
    /** The in-memory store's started window, in milliseconds. */
    static final String STARTED = "retrydedup.started";
    /** The in-memory store's done window, in milliseconds. */
    static final String DONE = "retrydedup.done";
    static final String MEMORY = "memory";

    private final boolean serviceOn;
    private final Map<String, Boolean> methodOn;
    final String storeName;
    final long maxEntries;
    final DedupWindows windows;

    private RetryDedupConfig(boolean serviceOn, Map<String, Boolean> methodOn, String storeName, long maxEntries,
                             DedupWindows windows) {
        this.serviceOn = serviceOn;
        this.methodOn = methodOn;
        this.storeName = storeName;
        this.maxEntries = maxEntries;
        this.windows = windows;
    }

    /**
     * @param registered the names of the registered stores
     * @throws IllegalArgumentException naming the key and the value, if a value is invalid
     */
    static RetryDedupConfig from(URL url, Set<String> registered) {
        String service = url.getServiceKey();
        boolean serviceOn = bool(url.getParameter(KEY), KEY, service, false);
        Map<String, Boolean> methodOn = new HashMap<>();
        for (String method : url.getParameter(CommonConstants.METHODS_KEY, new String[0])) {
            String raw = url.getParameter(method + "." + KEY);
            raw = raw != null ? raw : url.getMethodParameterStrict(method, KEY);
            if (raw != null) {
                methodOn.put(method, bool(raw, method + "." + KEY, service, serviceOn));
            }
        }
        String store = url.getParameter(STORE, MEMORY).trim();
        if (!store.equals(MEMORY) && !registered.contains(store)) {
            throw invalid(STORE, store, service, MEMORY + " or a registered store: " + registered);
        }
        long size = number(url, SIZE, CaffeineDedupStore.DEFAULT_MAX_ENTRIES, 100_000_000, service, "entries");
        long started = number(url, STARTED, DedupWindows.DEFAULT_STARTED_MILLIS, 86_400_000, service, "milliseconds");
        long done = number(url, DONE, DedupWindows.DEFAULT_DONE_MILLIS, 2_592_000_000L, service, "milliseconds");
        return new RetryDedupConfig(serviceOn, Map.copyOf(methodOn), store, size, new DedupWindows(started, done));
    }

    /** @return whether calls of {@code method} are deduplicated */
    boolean enabled(String method) {
        Boolean on = methodOn.get(method);
        return on != null ? on : serviceOn;
    }

    private static boolean bool(String raw, String key, String service, boolean absent) {
        if (raw == null) {
            return absent;
        }
        return switch (raw.trim()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw invalid(key, raw, service, "true or false");
        };
    }

    private static long number(URL url, String key, long absent, long max, String service, String unit) {
        String raw = url.getParameter(key);
        if (raw == null) {
            return absent;
        }
        try {
            long n = Long.parseLong(raw.trim());
            if (n >= 1 && n <= max) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw invalid(key, raw, service, unit + ", 1.." + max);
    }

    static IllegalArgumentException invalid(String key, String raw, String service, String expected) {
        return new IllegalArgumentException(KEY + ": invalid " + key + "=" + raw + " for " + service + " (expected: "
                + expected + ")");
    }
}
