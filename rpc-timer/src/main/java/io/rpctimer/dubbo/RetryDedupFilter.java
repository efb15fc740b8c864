package io.rpctimer.dubbo;

import io.rpctimer.dedup.CaffeineDedupStore;
import io.rpctimer.dedup.Claim;
import io.rpctimer.dedup.DedupCounters;
import io.rpctimer.dedup.DedupStats;
import io.rpctimer.dedup.DedupStore;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.common.constants.LoggerCodeConstants;
import org.apache.dubbo.common.extension.Activate;
import org.apache.dubbo.common.logger.ErrorTypeAwareLogger;
import org.apache.dubbo.common.logger.LoggerFactory;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.Filter;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.support.RpcUtils;

/**
 * The provider filter {@code retrydedup}: runs each {@code retry.id} of a deduplicated method once, however often the
 * consumer's failback delivers it. Off by default; on for a service with the parameter {@code retrydedup=true}, for one
 * method with {@code <method>.retrydedup=true} (a method value overrides the service's).
 *
 * <p>A call that carries {@value WheelFailback#RETRY_ID} (every call of a {@code wheelfailback} reference, the original
 * attempt included) is claimed in a {@link DedupStore} before the method runs:
 * <ul>
 *   <li>not seen: it runs; it is marked done if it returns normally, and released (may run again) if it throws;</li>
 *   <li>done before: it does not run, and gets a successful empty reply ({@code null}), which failback counts
 *       {@code DELIVERED}; so deduplicated methods return {@code void} or an object, not a primitive;</li>
 *   <li>started and not ended: it does not run, and gets an {@link RpcException} saying so, which the consumer sees as
 *       an RPC failure and retries later;</li>
 *   <li>the store fails: it runs unprotected (a WARN log line and the {@code unprotected} counter), so a store outage
 *       costs deduplication, never calls.</li>
 * </ul>
 * A call without the attachment passes straight through: one attachment lookup.
 *
 * <p>The store: {@code retrydedup.store=memory} (default), one {@link CaffeineDedupStore} per service in this
 * provider, sized by {@code retrydedup.size} (entries), {@code retrydedup.started} and {@code retrydedup.done}
 * (milliseconds, see {@link io.rpctimer.dedup.DedupWindows}); or the name of a store given to
 * {@link #registerStore} before the service is exported, e.g. a {@link io.rpctimer.dedup.JdbcDedupStore} shared by the
 * fleet. Invalid values fail the export, naming key and value. Keys are {@code <service key>#<method>#<retry.id>}.
 *
 * <p><b>Threading:</b> thread-safe. Dubbo keeps one instance per module; stores and counters are JVM-wide.
 */
@Activate(group = CommonConstants.PROVIDER, value = RetryDedupConfig.KEY, order = RetryDedupFilter.ORDER)
public class RetryDedupFilter implements Filter {

    /**
     * The filter's place in the provider chain: after Dubbo's context filters (order -10000 and below), before
     * filters of the default order 0, such as an application's own, so that a call that does not run never reaches
     * them either.
     */
    public static final int ORDER = -5000;

    private static final ErrorTypeAwareLogger LOG = LoggerFactory.getErrorTypeAwareLogger(RetryDedupFilter.class);
    private static final Pattern STORE_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final Map<String, DedupStore> STORES = new ConcurrentHashMap<>();
    private static final DedupCounters COUNTERS = new DedupCounters();

    /** One exported service as this filter sees it. */
    private record Service(RetryDedupConfig config, DedupStore memory) {
    }

    private final Map<String, Service> services = new ConcurrentHashMap<>(); // by service key

    /**
     * Makes a store available to services with {@code retrydedup.store=<name>}; replaces a store of that name.
     *
     * @param name 1..64 letters, digits, '_', '.' or '-'; not {@code memory}
     * @param store the store
     * @throws IllegalArgumentException {@code name: memory (expected: ...)}
     */
    public static void registerStore(String name, DedupStore store) {
        if (name == null || !STORE_NAME.matcher(name).matches() || name.equals(RetryDedupConfig.MEMORY)) {
            throw new IllegalArgumentException("name: " + name + " (expected: " + STORE_NAME.pattern()
                    + ", not " + RetryDedupConfig.MEMORY + ")");
        }
        if (store == null) {
            throw new NullPointerException("store: null (expected: a DedupStore)");
        }
        STORES.put(name, store);
    }

    /** @return whether a store of that name was registered */
    public static boolean unregisterStore(String name) {
        return STORES.remove(name) != null;
    }

    /** @return the counts of every {@code retrydedup} filter in the JVM */
    public static DedupStats stats() {
        return COUNTERS.snapshot();
    }

    static Set<String> storeNames() {
        return Set.copyOf(STORES.keySet());
    }

    @Override
    public Result invoke(Invoker<?> invoker, Invocation invocation) throws RpcException {
        String retryId = invocation.getAttachment(WheelFailback.RETRY_ID);
        if (retryId == null) {
            return invoker.invoke(invocation);
        }
        URL url = invoker.getUrl();
        Service service = services.computeIfAbsent(url.getServiceKey(), k -> service(url));
        String method = RpcUtils.getMethodName(invocation);
        if (!service.config().enabled(method)) { // the filter is active when any method's key is set
            return invoker.invoke(invocation);
        }
        DedupStore store = service.memory() != null ? service.memory() : STORES.get(service.config().storeName);
        String key = url.getServiceKey() + "#" + method + "#" + retryId;
        Claim claim;
        try {
            claim = claim(store, key, service.config().storeName);
        } catch (RuntimeException e) {
            return unprotected(invoker, invocation, store, key, e);
        }
        return switch (claim.status()) {
            case CLAIMED -> run(invoker, invocation, store, claim);
            case ALREADY_DONE -> suppress(invocation, key);
            case IN_PROGRESS -> throw refuse(invocation, key);
        };
    }

    /** The store failed to claim the call: it runs anyway, so that a store outage costs deduplication, not calls. */
    private static Result unprotected(Invoker<?> invoker, Invocation invocation, DedupStore store, String key,
                                      RuntimeException e) {
        COUNTERS.storeFailure();
        COUNTERS.unprotected();
        LOG.warn(LoggerCodeConstants.PROTOCOL_FAILED_REQUEST, "dedup store failed", "", "retrydedup UNPROTECTED "
                + describe(key, invocation) + ": the store " + store + " failed to claim it; running it without"
                + " protection: " + WheelFailback.describe(e), e);
        return invoker.invoke(invocation);
    }

    private static Claim claim(DedupStore store, String key, String storeName) {
        if (store == null) {
            throw new IllegalStateException("no store registered as " + storeName);
        }
        return store.claim(key);
    }

    private static Result run(Invoker<?> invoker, Invocation invocation, DedupStore store, Claim claim) {
        COUNTERS.executed();
        Result result;
        try {
            result = invoker.invoke(invocation);
        } catch (RuntimeException e) {
            end(store, claim, invocation, false);
            throw e;
        }
        return result.whenCompleteWithContext((r, t) -> end(store, claim, invocation, t == null && !r.hasException()));
    }

    private static void end(DedupStore store, Claim claim, Invocation invocation, boolean completed) {
        try {
            if (completed) {
                store.done(claim);
            } else {
                store.release(claim);
            }
        } catch (RuntimeException e) {
            COUNTERS.storeFailure();
            LOG.warn(LoggerCodeConstants.PROTOCOL_FAILED_REQUEST, "dedup store failed", "", "retrydedup "
                    + describe(claim.key(), invocation) + ": the store " + store + " failed to record it "
                    + (completed ? "done" : "released") + "; it stays started until its window ends: "
                    + WheelFailback.describe(e), e);
        }
    }

    private static Result suppress(Invocation invocation, String key) {
        COUNTERS.suppressed();
        LOG.info("retrydedup SUPPRESSED " + describe(key, invocation) + ": it completed before; answered with an"
                + " empty success");
        return AsyncRpcResult.newDefaultAsyncResult(invocation);
    }

    private static RpcException refuse(Invocation invocation, String key) {
        COUNTERS.inProgress();
        String text = "retrydedup IN_PROGRESS " + describe(key, invocation) + ": an execution started and has not"
                + " ended; retry later";
        LOG.info(text);
        return new RpcException(RpcException.UNKNOWN_EXCEPTION, text);
    }

    private static String describe(String key, Invocation invocation) {
        return key + " retry.attempt=" + invocation.getAttachment(WheelFailback.RETRY_ATTEMPT, "0");
    }

    private static Service service(URL url) {
        RetryDedupConfig config = RetryDedupConfig.from(url, storeNames());
        return new Service(config, config.storeName.equals(RetryDedupConfig.MEMORY)
                ? new CaffeineDedupStore(config.maxEntries, config.windows) : null);
    }
}
