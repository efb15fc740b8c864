package io.rpctimer.retry;

import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Which failures a retry policy retries. RPC failures (network, timeout, no provider: the caller's framework decides
 * what counts) are always retried; provider business exceptions only when named here.
 * <ul>
 *   <li>{@code rpc} (the default): RPC failures only, as Dubbo's failback does;</li>
 *   <li>{@code all}: RPC failures and every business exception;</li>
 *   <li>a comma-separated list of class names: RPC failures, and business exceptions that are, or are caused by, an
 *       instance of a named class or of a subclass of one.</li>
 * </ul>
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 */
public final class RetryOn {

    private static final RetryOn RPC = new RetryOn("rpc", false, Set.of());
    private static final RetryOn ALL = new RetryOn("all", true, Set.of());

    private final String spec;
    private final boolean all;
    private final Set<String> classNames;

    private RetryOn(String spec, boolean all, Set<String> classNames) {
        this.spec = spec;
        this.all = all;
        this.classNames = classNames;
    }

    /** @return retry RPC failures only */
    public static RetryOn rpc() {
        return RPC;
    }

    /** @return retry every failure */
    public static RetryOn all() {
        return ALL;
    }

    /**
     * @param classNames fully qualified names of business exception classes to retry, besides RPC failures
     * @return the policy
     * @throws IllegalArgumentException if the collection is empty or a name is blank
     */
    public static RetryOn exceptions(Collection<String> classNames) {
        Set<String> names = new LinkedHashSet<>();
        for (String name : classNames) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("retryOn: " + classNames + " (expected: class names, none blank)");
            }
            names.add(name.trim());
        }
        if (names.isEmpty()) {
            throw new IllegalArgumentException("retryOn: " + classNames + " (expected: at least one class name)");
        }
        return new RetryOn(String.join(",", names), false, Set.copyOf(names));
    }

    /**
     * Parses the {@code failback.retryon} form: {@code rpc}, {@code all}, or comma-separated class names.
     *
     * @throws IllegalArgumentException if {@code spec} is null or blank, or a class name is blank
     */
    public static RetryOn parse(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("retryOn: '" + spec + "' (expected: rpc, all, or class names)");
        }
        String s = spec.trim();
        if (s.equalsIgnoreCase("rpc")) {
            return RPC;
        }
        if (s.equalsIgnoreCase("all")) {
            return ALL;
        }
        String[] parts = s.split(",", -1);
        for (String part : parts) {
            if (part.isBlank()) {
                throw new IllegalArgumentException("retryOn: '" + spec + "' (expected: rpc, all, or class names)");
            }
        }
        return exceptions(Arrays.asList(parts));
    }

    /**
     * @param failure    what the attempt failed with
     * @param rpcFailure whether the caller's framework classified it as an RPC failure (not a business exception)
     * @return whether to retry
     */
    public boolean retries(Throwable failure, boolean rpcFailure) {
        if (rpcFailure || all) {
            return true;
        }
        // each distinct throwable once: a chain with a cycle (a -> b -> a) ends
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            for (Class<?> c = t.getClass(); c != null; c = c.getSuperclass()) {
                if (classNames.contains(c.getName())) {
                    return true;
                }
            }
        }
        return false;
    }

    /** @return the exception class names this policy names, empty for {@code rpc} and {@code all} */
    public Set<String> classNames() {
        return classNames;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RetryOn other && spec.equals(other.spec);
    }

    @Override
    public int hashCode() {
        return spec.hashCode();
    }

    /** @return the {@code failback.retryon} form */
    @Override
    public String toString() {
        return spec;
    }
}
