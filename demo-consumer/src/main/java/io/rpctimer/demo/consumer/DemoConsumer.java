package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.ledger.CallListener;
import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.dubbo.WheelFailbackCluster;
import io.rpctimer.retry.DeadLetters;
import io.rpctimer.retry.ReferenceState;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.testkit.DubboNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.model.ApplicationModel;

/**
 * A consumer of the demo's {@link NotificationService} that accounts for every call it sends. Each call's
 * {@code retry.id} is its call id, so the caller's result, the {@code wheelfailback} outcome and the providers'
 * ledgers all name the same call; {@link #book()} joins them.
 *
 * <pre>{@code
 * try (DemoConsumer c = DemoConsumer.start(DemoConsumer.options(zk.registryAddress()).timeout(Duration.ofSeconds(1)))) {
 *     c.watch(p1, p2);                  // count what the providers complete (duplicates)
 *     c.send("call-1", "hello");        // sync; or c.sendAsync(...)
 *     c.awaitSettled(Duration.ofSeconds(30));
 * }                                     // closing hands pending retries over
 * }</pre>
 *
 * <p><b>Threading:</b> thread-safe: many threads may send at once.
 */
public final class DemoConsumer implements AutoCloseable {

    /** The JVM system property that sets the default store of every application (see docs/configuration.md). */
    private static final String STORE_PROPERTY = "rpctimer.failback.store";

    /**
     * Where a call pending at shutdown goes, as the demo's lines and reports say it: the demo's store is the
     * {@value #STORE_PROPERTY} property ({@code --store}), memory when it is unset.
     */
    static String handedOverTo() {
        String store = System.getProperty(STORE_PROPERTY, "memory");
        return store.equals("memory") ? "given to the RetryStore"
                : "kept in the " + store + " journal, resumed at the next start";
    }

    private final DubboNode node;
    private final NotificationService service;
    private final CallBook book;
    private final Options options;
    private final List<Runnable> unwatch = new ArrayList<>();
    private final RetryListener bookListener;
    private final RetryArrivals arrivals = new RetryArrivals();

    private DemoConsumer(Options o) {
        this.options = o;
        this.book = new CallBook(NotificationService.class.getName(), o.cluster.equals(WheelFailbackCluster.NAME)
                ? CallBook.Accounting.EVENTS : CallBook.Accounting.COMPLETIONS);
        ReferenceConfig<NotificationService> ref = new ReferenceConfig<>();
        ref.setInterface(NotificationService.class);
        ref.setCluster(o.cluster);
        ref.setTimeout((int) o.timeout.toMillis());
        ref.setCheck(false);
        Map<String, String> parameters = new HashMap<>(o.parameters);
        if (System.getProperty(STORE_PROPERTY) == null) {
            // the demo's runs are self-contained: no journal left in the user's home unless a scenario asks for one
            // (a failback.store parameter, or -Drpctimer.failback.store=...)
            parameters.putIfAbsent("failback.store", "memory");
        }
        ref.setParameters(parameters);
        this.bookListener = book;
        DubboNode n = DubboNode.create(o.name, o.registryAddress).reference(ref);
        o.properties.forEach(n::property);
        WheelFailback.addListener(bookListener);
        try {
            o.beforeStart.accept(n.application());
            this.node = n.start();
            this.service = ref.get();
        } catch (RuntimeException e) { // e.g. an invalid failback value: leave nothing running behind
            WheelFailback.removeListener(bookListener);
            n.close();
            throw e;
        }
    }

    /** @return options with the defaults: cluster {@code wheelfailback}, timeout 1 s, no extra parameters */
    public static Options options(String registryAddress) {
        return new Options(registryAddress);
    }

    /**
     * Starts the consumer and waits until its reference is created.
     *
     * @throws RuntimeException if the reference cannot be created (e.g. an invalid URL parameter); nothing is left
     *     running
     */
    public static DemoConsumer start(Options options) {
        return new DemoConsumer(options);
    }

    /**
     * Counts what {@code providers} complete, for delivery without events and for duplicates, and when they receive
     * retries ({@link #arrivals()}).
     */
    public synchronized void watch(DemoProvider... providers) {
        for (DemoProvider p : providers) {
            CallListener l = (call, outcome, elapsed, detail) -> {
                if (outcome == CallOutcome.COMPLETED && call.callId() != null) {
                    book.providerCompleted(call.callId(), call.attempt());
                }
                arrivals.record(call, outcome);
            };
            p.ledger().addListener(l);
            unwatch.add(() -> p.ledger().removeListener(l));
        }
    }

    /**
     * Sends one call and waits for what the caller gets.
     *
     * @return what the caller got
     */
    public CallerSaw send(String callId, String message) {
        book.sent(callId);
        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, callId);
        CallerSaw saw;
        try {
            saw = service.send(callId, message) == null ? CallerSaw.FAILED_BACK : CallerSaw.REPLY;
        } catch (RuntimeException e) {
            saw = classify(e);
        }
        book.callerGot(callId, saw);
        return saw;
    }

    /**
     * Sends one call asynchronously.
     *
     * @return a future of what the caller got; it never fails
     */
    public CompletableFuture<CallerSaw> sendAsync(String callId, String message) {
        book.sent(callId);
        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, callId);
        CompletableFuture<String> reply;
        try {
            reply = service.sendAsync(callId, message);
        } catch (RuntimeException e) {
            CallerSaw saw = classify(e);
            book.callerGot(callId, saw);
            return CompletableFuture.completedFuture(saw);
        }
        return reply.handle((r, e) -> {
            CallerSaw saw = e != null ? classify(e) : r == null ? CallerSaw.FAILED_BACK : CallerSaw.REPLY;
            book.callerGot(callId, saw);
            return saw;
        });
    }

    private static CallerSaw classify(Throwable t) {
        Throwable e = t;
        while (e.getCause() != null && !(e instanceof RpcException)) {
            e = e.getCause();
        }
        return e instanceof RpcException rpc && rpc.getCode() == RpcException.LIMIT_EXCEEDED_EXCEPTION
                ? CallerSaw.REJECTED : CallerSaw.ERROR;
    }

    /**
     * Waits until no call is open, or {@code max} has passed.
     *
     * @return whether every call settled
     */
    public boolean awaitSettled(Duration max) {
        return awaitZero(book::unsettled, max);
    }

    /**
     * @return calls still open: this consumer's own ({@link CallBook#unsettled()}), or, when more, the retries
     *     pending in this JVM, which include those resumed from the journal of an earlier run that the book never saw
     */
    public long openWithResumed() {
        return Math.max(book.unsettled(), WheelFailback.stats().pending());
    }

    /**
     * Waits until {@link #openWithResumed()} is 0, or {@code max} has passed.
     *
     * @return whether every call settled, resumed retries included
     */
    public boolean awaitSettledWithResumed(Duration max) {
        return awaitZero(this::openWithResumed, max);
    }

    private static boolean awaitZero(LongSupplier open, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (open.getAsLong() > 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        return true;
    }

    /** @return the account of every call sent */
    public CallBook book() {
        return book;
    }

    /** @return when the {@link #watch watched} providers received retries */
    public RetryArrivals arrivals() {
        return arrivals;
    }

    /**
     * @return the state of this consumer's {@code wheelfailback} reference (pending retries, the retry budget), or
     *         empty if it has none, or it has stopped
     */
    public Optional<ReferenceState> referenceState() {
        for (RetryLifecycle lifecycle : WheelFailback.lifecycles()) {
            if (lifecycle.application().equals(options.name)) {
                for (ReferenceState r : lifecycle.state().references()) {
                    // the reference has no group and no version: its service key is the interface
                    if (r.serviceKey().equals(NotificationService.class.getName())) {
                        return Optional.of(r);
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** @return the dead letters of this consumer's application, or empty if it has no lifecycle, or has stopped */
    public Optional<DeadLetters> deadLetters() {
        return WheelFailback.lifecycles().stream().filter(l -> l.application().equals(options.name)).findFirst()
                .map(RetryLifecycle::deadLetters);
    }

    /** @return the cluster this consumer's reference runs on */
    public String cluster() {
        return options.cluster;
    }

    /** @return the Dubbo proxy, for calls outside the accounting */
    public NotificationService service() {
        return service;
    }

    /** @return the account once the consumer is closed (a call still open is lost), or now (open = pending) */
    public Report report() {
        return book.report(options.cluster, !node.isRunning());
    }

    /** Stops the consumer: {@code wheelfailback} hands pending retries over ({@link #handedOverTo()}). Idempotent. */
    @Override
    public synchronized void close() {
        node.close();
        unwatch.forEach(Runnable::run);
        unwatch.clear();
        WheelFailback.removeListener(bookListener);
    }

    /**
     * How to build a {@link DemoConsumer}.
     *
     * <p><b>Threading:</b> not thread-safe; use from one thread.
     */
    public static final class Options {
        private final String registryAddress;
        private String name = "consumer";
        private String cluster = WheelFailbackCluster.NAME;
        private Duration timeout = Duration.ofSeconds(1);
        private final Map<String, String> parameters = new HashMap<>();
        private final Map<String, String> properties = new HashMap<>();
        private Consumer<ApplicationModel> beforeStart = app -> { };

        private Options(String registryAddress) {
            if (registryAddress == null || registryAddress.isBlank()) {
                throw new IllegalArgumentException("registryAddress: '" + registryAddress
                        + "' (expected: e.g. zookeeper://127.0.0.1:2181)");
            }
            this.registryAddress = registryAddress;
        }

        /** @param name the Dubbo application name */
        public Options name(String name) {
            this.name = DubboNode.checkName("name", name);
            return this;
        }

        /** @param cluster {@code wheelfailback} (default), or a Dubbo cluster such as {@code failback} to compare */
        public Options cluster(String cluster) {
            if (cluster == null || cluster.isBlank()) {
                throw new IllegalArgumentException("cluster: '" + cluster + "' (expected: a cluster name)");
            }
            this.cluster = cluster;
            return this;
        }

        /** @param timeout the call timeout, at least 1 ms */
        public Options timeout(Duration timeout) {
            if (timeout == null || timeout.toMillis() < 1) {
                throw new IllegalArgumentException("timeout: " + timeout + " (expected: >= 1 ms)");
            }
            this.timeout = timeout;
            return this;
        }

        /** @param key a reference URL parameter, e.g. {@code failback.delay} */
        public Options parameter(String key, String value) {
            parameters.put(key, value);
            return this;
        }

        /**
         * @param action what to do with the consumer's Dubbo application once it exists and before it starts, e.g.
         *               add a meter registry to Dubbo's
         */
        public Options beforeStart(Consumer<ApplicationModel> action) {
            this.beforeStart = action;
            return this;
        }

        /** @param key an application-scoped Dubbo property */
        public Options property(String key, String value) {
            properties.put(key, value);
            return this;
        }
    }
}
