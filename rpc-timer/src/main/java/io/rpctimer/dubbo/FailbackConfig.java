package io.rpctimer.dubbo;

import io.rpctimer.retry.OverflowPolicy;
import io.rpctimer.retry.RetryBudget;
import io.rpctimer.retry.RetryOn;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.retry.StoreDownPolicy;
import io.rpctimer.wheel.Ticker;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.dubbo.common.URL;

/**
 * The {@code wheelfailback} settings of one reference, read from its consumer URL once, when the reference is
 * created: one {@link RetryPolicy} for the service and one per method that overrides a key. Every value is checked;
 * a bad one fails reference creation with an {@link IllegalArgumentException} naming the key and the value (Dubbo's
 * own failback silently falls back to its defaults instead).
 *
 * <p>Keys (per service, or per method as {@code <method>.<key>}, e.g. from {@code <dubbo:method>}):
 * {@value #RETRIES}, {@value #DELAY}, {@value #MULTIPLIER}, {@value #MAX_DELAY}, {@value #JITTER},
 * {@value #RETRY_ON}, {@value #OVERFLOW}, {@value #STORE_DOWN}; and per service only, as in Dubbo,
 * {@value #FAILBACK_TASKS}, and {@value #BUDGET_RATIO}, {@value #BUDGET_MIN_RATE}.
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 */
final class FailbackConfig {

    /**
     * Dubbo's key: retries after the original attempt; 0 means none. Default 3; a negative value means the default,
     * as in Dubbo's failback ({@code FailbackClusterInvoker}).
     */
    static final String RETRIES = "retries";
    /** Dubbo's key: the cap of retries pending at once for the reference. Default 100. */
    static final String FAILBACK_TASKS = "failbacktasks";
    /** Delay before the first retry, in milliseconds. Default 5000 (Dubbo's period). */
    static final String DELAY = "failback.delay";
    /** Factor between consecutive delays. Default 2.0. */
    static final String MULTIPLIER = "failback.multiplier";
    /** Cap of any delay, in milliseconds. Default 60000. */
    static final String MAX_DELAY = "failback.maxdelay";
    /** Spread of each delay, a fraction in [0, 1]. Default 0.2. */
    static final String JITTER = "failback.jitter";
    /** Which failures are retried: rpc (default), all, or names of exception classes the reference can load. */
    static final String RETRY_ON = "failback.retryon";
    /**
     * At the pending cap: reject (the caller gets an RpcException, default), log, or spill (per service, and only
     * with a journal: the call is kept in the journal and put on the wheel when room frees).
     */
    static final String OVERFLOW = "failback.overflow";
    /**
     * When the journal refuses a failed call's append (its database down): reject (the caller gets an RpcException,
     * default: a call a caller was told is taken survives a crash) or memory (the call goes on in memory and is
     * journaled once the store works; a crash before then loses it).
     */
    static final String STORE_DOWN = "failback.store.down";

    /**
     * Per service: tokens a successful first attempt deposits in the reference's retry budget, i.e. the most retries
     * may be of the recent successful calls. Default {@value #DEFAULT_BUDGET_RATIO} (Finagle's).
     */
    static final String BUDGET_RATIO = "failback.budget.ratio";
    /** Per service: retries per second the budget allows whatever the successes. Default {@value #DEFAULT_BUDGET_MIN_RATE}. */
    static final String BUDGET_MIN_RATE = "failback.budget.minrate";
    static final double DEFAULT_BUDGET_RATIO = 0.2;
    static final double DEFAULT_BUDGET_MIN_RATE = 10;
    /** How far back a successful call counts for the budget, in seconds. */
    static final long BUDGET_WINDOW_SECONDS = 10;

    /** The keys a method may override. */
    private static final List<String> KEYS = List.of(RETRIES, DELAY, MULTIPLIER, MAX_DELAY, JITTER, RETRY_ON, OVERFLOW,
            STORE_DOWN);

    private final RetryPolicy servicePolicy;
    private final Map<String, RetryPolicy> methodPolicies;
    private final double budgetRatio;
    private final double budgetMinRate;
    private final boolean timeoutCheckNamed;

    private FailbackConfig(RetryPolicy servicePolicy, Map<String, RetryPolicy> methodPolicies, double budgetRatio,
                           double budgetMinRate, boolean timeoutCheckNamed) {
        this.servicePolicy = servicePolicy;
        this.methodPolicies = methodPolicies;
        this.budgetRatio = budgetRatio;
        this.budgetMinRate = budgetMinRate;
        this.timeoutCheckNamed = timeoutCheckNamed;
    }

    /**
     * @param url   the reference's consumer URL
     * @param iface the service interface, whose methods may override keys; may be null
     * @throws IllegalArgumentException naming the key and the value, if a value is invalid
     */
    static FailbackConfig from(URL url, Class<?> iface) {
        String service = url.getServiceInterface();
        ClassLoader loader = iface != null ? iface.getClassLoader() : FailbackConfig.class.getClassLoader();
        RetryPolicy servicePolicy = policy(url, null, service, loader);
        Map<String, RetryPolicy> methodPolicies = new HashMap<>();
        for (String name : methods(url, iface)) {
            if (!methodPolicies.containsKey(name) && overridesAnyKey(url, name)) {
                methodPolicies.put(name, policy(url, name, service, loader));
            }
        }
        Value ratio = value(url, null, BUDGET_RATIO, service);
        double budgetRatio = ratio == null ? DEFAULT_BUDGET_RATIO : ratio.parseDouble(0, 1e6, "a number >= 0");
        Value minRate = value(url, null, BUDGET_MIN_RATE, service);
        double budgetMinRate = minRate == null ? DEFAULT_BUDGET_MIN_RATE
                : minRate.parseDouble(0, 1e9, "retries per second >= 0");
        if (budgetRatio == 0 && budgetMinRate == 0) {
            throw minRate.invalid("retries per second > 0 when " + BUDGET_RATIO + " is 0");
        }
        return new FailbackConfig(servicePolicy, Map.copyOf(methodPolicies), budgetRatio, budgetMinRate,
                namesKey(url, TimeoutCheckFilter.KEY));
    }

    /** @return whether {@code url} has {@code key}, per reference or per method ({@code <method>.<key>}) */
    private static boolean namesKey(URL url, String key) {
        for (String param : url.getParameters().keySet()) {
            if (param.equals(key) || param.endsWith("." + key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return whether the {@code timeoutcheck} filter may be in the chain of this reference's calls: Dubbo activates
     *         it when the URL has its key, per reference or per method, whatever the value
     */
    boolean timeoutCheckNamed() {
        return timeoutCheckNamed;
    }

    /**
     * @param ticker the budget's clock
     * @return a new retry budget for the reference: a token bucket at {@value #BUDGET_RATIO} of the successful calls
     *         of the last {@value #BUDGET_WINDOW_SECONDS} s plus {@value #BUDGET_MIN_RATE} retries per second
     */
    RetryBudget budget(Ticker ticker) {
        return RetryBudget.tokenBucket(budgetRatio, budgetMinRate, BUDGET_WINDOW_SECONDS, TimeUnit.SECONDS, ticker);
    }

    /**
     * The methods that may override a key: the interface's, and every method named by a method-level key of the URL
     * (a generic reference's interface is {@code GenericService}, whose methods are not the service's).
     */
    private static Set<String> methods(URL url, Class<?> iface) {
        Set<String> names = new HashSet<>();
        if (iface != null) {
            for (Method m : iface.getMethods()) {
                names.add(m.getName());
            }
        }
        for (String param : url.getParameters().keySet()) {
            for (String key : KEYS) {
                if (param.length() > key.length() + 1 && param.endsWith("." + key)) {
                    names.add(param.substring(0, param.length() - key.length() - 1));
                }
            }
        }
        return names;
    }

    /** @return the policy for {@code method}: its own if it overrides a key, else the service's */
    RetryPolicy policy(String method) {
        RetryPolicy p = method == null ? null : methodPolicies.get(method);
        return p != null ? p : servicePolicy;
    }

    /** @return the cap of retries pending at once for the reference */
    int maxPending() {
        return servicePolicy.maxPending();
    }

    /** @return what happens past the cap for the reference (a method's own value decides only reject or log) */
    OverflowPolicy overflow() {
        return servicePolicy.overflow();
    }

    /**
     * @param url     the reference's consumer URL
     * @param durable whether the application keeps failed calls in a journal
     * @throws IllegalArgumentException naming key and value, if {@code failback.overflow=spill} without a journal
     */
    void checkStore(URL url, boolean durable) {
        if (overflow() == OverflowPolicy.SPILL && !durable) {
            throw new Value(OVERFLOW, url.getParameter(OVERFLOW), url.getServiceInterface())
                    .invalid("reject or log; spill needs a journal (failback.store=embedded or jdbc)");
        }
    }

    private static boolean overridesAnyKey(URL url, String method) {
        for (String key : KEYS) {
            if (methodValue(url, method, key) != null) {
                return true;
            }
        }
        return false;
    }

    private static RetryPolicy policy(URL url, String method, String service, ClassLoader loader) {
        RetryPolicy.Builder b = RetryPolicy.builder();
        Value v = value(url, method, RETRIES, service);
        if (v != null) {
            int retries = (int) v.parseLong(Integer.MIN_VALUE, Integer.MAX_VALUE, "a whole number");
            b.retries(retries < 0 ? RetryPolicy.DEFAULT_RETRIES : retries);
        }
        v = value(url, null, FAILBACK_TASKS, service);
        if (v != null) {
            b.maxPending((int) v.parseLong(1, Integer.MAX_VALUE, "a whole number > 0"));
        }
        long delayMillis = RetryPolicy.DEFAULT_FIRST_DELAY_MILLIS;
        v = value(url, method, DELAY, service);
        if (v != null) {
            delayMillis = v.parseLong(1, Long.MAX_VALUE, "milliseconds > 0");
            b.firstDelay(delayMillis, TimeUnit.MILLISECONDS);
        }
        v = value(url, method, MULTIPLIER, service);
        if (v != null) {
            b.multiplier(v.parseDouble(1.0, 1e6, "a number in [1, 1000000]"));
        }
        long maxDelayMillis = RetryPolicy.DEFAULT_MAX_DELAY_MILLIS;
        Value maxDelay = value(url, method, MAX_DELAY, service);
        if (maxDelay != null) {
            maxDelayMillis = maxDelay.parseLong(1, Long.MAX_VALUE, "milliseconds > 0");
            b.maxDelay(maxDelayMillis, TimeUnit.MILLISECONDS);
        }
        if (maxDelayMillis < delayMillis) {
            throw maxDelay != null
                    ? maxDelay.invalid("milliseconds >= " + DELAY + " (" + delayMillis + ")")
                    : value(url, method, DELAY, service)
                            .invalid("milliseconds <= " + MAX_DELAY + " (" + maxDelayMillis + ")");
        }
        v = value(url, method, JITTER, service);
        if (v != null) {
            b.jitter(v.parseDouble(0.0, 1.0, "a number in [0, 1]"));
        }
        v = value(url, method, RETRY_ON, service);
        if (v != null) {
            b.retryOn(retryOn(v, loader));
        }
        v = value(url, method, OVERFLOW, service);
        if (v != null) {
            boolean perService = v.key.equals(OVERFLOW);
            b.overflow(switch (v.raw.trim().toLowerCase(Locale.ROOT)) {
                case "reject" -> OverflowPolicy.REJECT;
                case "log" -> OverflowPolicy.LOG;
                case "spill" -> {
                    if (!perService) {
                        throw v.invalid("reject or log (spill is set per service)");
                    }
                    yield OverflowPolicy.SPILL;
                }
                default -> throw v.invalid(perService ? "reject, log or spill" : "reject or log");
            });
        }
        v = value(url, method, STORE_DOWN, service);
        if (v != null) {
            b.storeDown(switch (v.raw.trim().toLowerCase(Locale.ROOT)) {
                case "reject" -> StoreDownPolicy.REJECT;
                case "memory" -> StoreDownPolicy.MEMORY;
                default -> throw v.invalid("reject or memory");
            });
        }
        return b.build();
    }

    /** Parses {@code v}, and loads each class it names, so that a misspelt name fails now, not never matches. */
    private static RetryOn retryOn(Value v, ClassLoader loader) {
        RetryOn retryOn;
        try {
            retryOn = RetryOn.parse(v.raw);
        } catch (IllegalArgumentException e) {
            throw v.invalid("rpc, all, or comma-separated exception class names");
        }
        for (String name : retryOn.classNames()) {
            Class<?> type;
            try {
                type = Class.forName(name, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                throw v.invalid("exception classes the reference can load; " + name + " was not found");
            }
            if (!Throwable.class.isAssignableFrom(type)) {
                throw v.invalid("exception classes; " + name + " is not a Throwable");
            }
        }
        return retryOn;
    }

    /** The method's own value, else the service's; null if neither is set. */
    private static Value value(URL url, String method, String key, String service) {
        if (method != null) {
            String raw = methodValue(url, method, key);
            if (raw != null) {
                return new Value(method + "." + key, raw, service);
            }
        }
        String raw = url.getParameter(key);
        return raw == null ? null : new Value(key, raw, service);
    }

    /**
     * A method-level value. Dubbo keeps {@code method.key} as a method parameter when it parses a URL string, but as
     * a plain parameter named {@code method.key} when it builds a URL from config objects and the key itself contains
     * a dot (as {@code failback.delay} does), so both places are read.
     */
    private static String methodValue(URL url, String method, String key) {
        String raw = url.getParameter(method + "." + key);
        return raw != null ? raw : url.getMethodParameterStrict(method, key);
    }

    /** One configured value, remembered with its key so that errors can name both. */
    private record Value(String key, String raw, String service) {

        long parseLong(long min, long max, String expected) {
            try {
                long n = Long.parseLong(raw.trim());
                if (n >= min && n <= max) {
                    return n;
                }
            } catch (NumberFormatException ignored) {
                // reported below
            }
            throw invalid(expected);
        }

        double parseDouble(double min, double max, String expected) {
            try {
                double d = Double.parseDouble(raw.trim());
                if (d >= min && d <= max) {
                    return d;
                }
            } catch (NumberFormatException ignored) {
                // reported below
            }
            throw invalid(expected);
        }

        IllegalArgumentException invalid(String expected) {
            return new IllegalArgumentException("wheelfailback: invalid " + key + "=" + raw + " for " + service
                    + " (expected: " + expected + ")");
        }
    }
}
