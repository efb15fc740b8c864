package io.rpctimer.dubbo;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.rpctimer.retry.DeadLetterStats;
import io.rpctimer.retry.ReferenceState;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.wheel.TimerStats;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.DoubleBinaryOperator;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import org.apache.dubbo.common.constants.MetricsConstants;
import org.apache.dubbo.metrics.MetricsGlobalRegistry;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.model.ApplicationModel;

/**
 * The failback meters of one Dubbo application, in Dubbo's own {@link MeterRegistry}
 * ({@link MetricsGlobalRegistry#getCompositeRegistry(ApplicationModel)}), named and tagged as Dubbo's consumer meters
 * ({@code application.name}, {@code interface}, {@code method}). The only class of rpc-timer that imports Micrometer:
 * {@link FailbackMeterListener} loads it only when Micrometer is on the classpath.
 *
 * <p>Counters per method count the application's {@link RetryEvent}s, which {@link FailbackMeterListener} routes
 * here by application name; gauges and the budget-wait counter read the application's {@link RetryLifecycle#state()}
 * and the shared wheel's stats when the registry is read; the dead-letter gauge and counters (per application) read
 * {@link io.rpctimer.retry.DeadLetters#stats()}. Meters of an interface appear with its first failed call
 * (or when the application or a module has started, if it already has a reference); the wheel's meters are JVM-wide
 * values, tagged with each application that has a {@code wheelfailback} reference.
 *
 * <p>Micrometer holds its gauges' state object weakly: the state is this object, which the deploy listener holds for
 * as long as the application lives.
 *
 * <p><b>Threading:</b> thread-safe; events arrive on any thread.
 */
final class FailbackMicrometer implements FailbackMeterListener.Binding {

    private static final String PREFIX = "dubbo.consumer.failback.";
    private static final String OUTCOME = "outcome";

    private final MeterRegistry registry;
    private final String application;
    private final Tags appTags;
    private final Set<String> interfaces = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean wheelRegistered = new AtomicBoolean();
    private final AtomicBoolean deadRegistered = new AtomicBoolean();
    private final Map<Meter.Id, Meter> meters = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private FailbackMicrometer(MeterRegistry registry, String application) {
        this.registry = registry;
        this.application = application;
        this.appTags = Tags.of(MetricsConstants.TAG_APPLICATION_NAME, application);
    }

    /**
     * @param app  the application, whose Dubbo registry receives the meters
     * @param name its name, the {@code application.name} tag
     * @return the application's meters, registered as its references show up
     */
    static FailbackMeterListener.Binding bind(ApplicationModel app, String name) {
        return new FailbackMicrometer(MetricsGlobalRegistry.getCompositeRegistry(app), name);
    }

    @Override
    public void attach() {
        for (RetryLifecycle lifecycle : WheelFailback.lifecycles()) {
            if (lifecycle.application().equals(application)) {
                wheelMeters();
                deadLetterMeters();
                lifecycle.state().references().forEach(r -> referenceMeters(interfaceOf(r.serviceKey())));
            }
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        meters.values().forEach(registry::remove);
        meters.clear();
    }

    // ---------------------------------------------------------------- events: per method

    @Override
    public void onEvent(RetryEvent e) {
        if (closed) {
            return; // a late event must not re-create removed meters
        }
        wheelMeters();
        deadLetterMeters();
        referenceMeters(e.service());
        Tags tags = appTags.and(MetricsConstants.TAG_INTERFACE_KEY, e.service(), MetricsConstants.TAG_METHOD_KEY,
                e.method());
        switch (e.type()) {
            case SCHEDULED -> {
                timer("retry.delay", "delay before a retry, as scheduled", tags)
                        .record(e.delayMillis(), TimeUnit.MILLISECONDS);
                if (e.attempt() == 1) { // the failure of the original attempt
                    countTimeout(e, tags);
                }
            }
            case SENT -> counter("retries.total", "retries sent to a provider", tags).increment();
            case FAILED -> {
                counter("retries.failed.total", "retries that failed", tags).increment();
                countTimeout(e, tags);
            }
            case REJECTED -> {
                countTimeout(e, tags);
                outcome(e, tags);
            }
            default -> outcome(e, tags);
        }
    }

    private void outcome(RetryEvent e, Tags tags) {
        counter("outcomes.total", "failed calls by outcome", tags.and(OUTCOME,
                e.type().outcome().name().toLowerCase(Locale.ROOT))).increment();
    }

    private void countTimeout(RetryEvent e, Tags tags) {
        if (e.failure() != null && Failures.anyCause(e.failure(), FailbackMicrometer::isTimeout)) {
            counter("attempt.timeouts.total", "attempts (original or retry) that timed out", tags).increment();
        }
    }

    private static boolean isTimeout(Throwable t) {
        return t instanceof RpcException r && r.isTimeout()
                || t instanceof java.util.concurrent.TimeoutException
                || t instanceof org.apache.dubbo.remoting.TimeoutException;
    }

    // ---------------------------------------------------------------- state: per interface, read when scraped

    private void referenceMeters(String iface) {
        if (closed || !interfaces.add(iface)) {
            return;
        }
        Tags tags = appTags.and(MetricsConstants.TAG_INTERFACE_KEY, iface);
        gauge("pending", "calls with a retry pending", iface, tags, r -> r.pending());
        gauge("pending.budget", "due retries waiting for a retry-budget token", iface, tags,
                r -> r.waitingForBudget());
        gauge("parked", "calls parked in the journal past the pending cap", iface, tags, r -> r.parked());
        track(TimeGauge.builder(PREFIX + "pending.oldest.age", this,
                        TimeUnit.MILLISECONDS, m -> m.reduce(iface, r -> r.oldestPendingAgeMillis(), Math::max))
                .description("how long the oldest pending call has been failing").tags(tags).register(registry));
        track(FunctionCounter.builder(PREFIX + "budget.waits.total", this,
                        m -> m.reduce(iface, r -> r.budgetWaits(), Double::sum))
                .description("due retries that waited for a retry-budget token, by live references")
                .tags(tags).register(registry));
    }

    private void gauge(String name, String description, String iface, Tags tags,
                       ToDoubleFunction<ReferenceState> value) {
        track(Gauge.builder(PREFIX + name, this, m -> m.reduce(iface, value, Double::sum))
                .description(description).tags(tags).register(registry));
    }

    /** Combines {@code value} over the live references of {@code iface} in this application. */
    private double reduce(String iface, ToDoubleFunction<ReferenceState> value, DoubleBinaryOperator combine) {
        double total = 0;
        for (RetryLifecycle lifecycle : WheelFailback.lifecycles()) {
            if (!lifecycle.application().equals(application)) {
                continue;
            }
            for (ReferenceState r : lifecycle.state().references()) {
                if (interfaceOf(r.serviceKey()).equals(iface)) {
                    total = combine.applyAsDouble(total, value.applyAsDouble(r));
                }
            }
        }
        return total;
    }

    /** @return the interface of a service key {@code [group/]interface[:version]} */
    static String interfaceOf(String serviceKey) {
        int slash = serviceKey.indexOf('/');
        int colon = serviceKey.indexOf(':', slash + 1);
        return serviceKey.substring(slash + 1, colon < 0 ? serviceKey.length() : colon);
    }

    // ---------------------------------------------------------------- the shared wheel

    /** Registers the wheel's meters once: only applications with a {@code wheelfailback} reference use the wheel. */
    private void wheelMeters() {
        if (closed || !wheelRegistered.compareAndSet(false, true)) {
            return;
        }
        wheelGauge("wheel.pending", "timeouts pending on the shared wheel", TimerStats::pendingTimeouts);
        track(TimeGauge.builder(PREFIX + "wheel.tick.lag", this, TimeUnit.NANOSECONDS,
                        m -> wheel(TimerStats::lastTickLagNanos))
                .description("how late the shared wheel's last round ran").tags(appTags).register(registry));
        track(TimeGauge.builder(PREFIX + "wheel.tick.lag.max", this, TimeUnit.NANOSECONDS,
                        m -> wheel(TimerStats::maxTickLagNanos))
                .description("the worst tick lag of the shared wheel").tags(appTags).register(registry));
        track(FunctionCounter.builder(PREFIX + "wheel.deferred.total", this,
                        m -> wheel(TimerStats::deferredHandOffs))
                .description("due tasks the retry executor refused, offered again at the next tick")
                .tags(appTags).register(registry));
        track(FunctionCounter.builder(PREFIX + "wheel.failed.total", this, m -> wheel(TimerStats::failedTasks))
                .description("wheel tasks that threw").tags(appTags).register(registry));
    }

    private void wheelGauge(String name, String description, ToLongFunction<TimerStats> value) {
        track(Gauge.builder(PREFIX + name, this, m -> m.wheel(value))
                .description(description).tags(appTags).register(registry));
    }

    /** @return the wheel's value, or NaN while no reference holds the wheel (Micrometer's "no value") */
    private double wheel(ToLongFunction<TimerStats> value) {
        return WheelFailback.wheelStats().map(s -> (double) value.applyAsLong(s)).orElse(Double.NaN);
    }

    // ---------------------------------------------------------------- dead letters: per application

    /** Registers the dead-letter meters once; they read {@link io.rpctimer.retry.DeadLetters#stats()}. */
    private void deadLetterMeters() {
        if (closed || !deadRegistered.compareAndSet(false, true)) {
            return;
        }
        track(Gauge.builder(PREFIX + "dead", this, m -> m.dead(DeadLetterStats::dead))
                .description("dead letters of the application (in a fleet, each instance shows the same ones)")
                .tags(appTags).register(registry));
        deadCounter("replays.total", "dead letters this instance replayed", DeadLetterStats::replayed);
        deadCounter("purged.total", "dead letters this instance purged", DeadLetterStats::purged);
        deadCounter("dead.dropped.total", "dead letters dropped past failback.dead.max", DeadLetterStats::dropped);
        deadCounter("dead.expired.total", "dead letters dropped past failback.dead.retention",
                DeadLetterStats::expired);
    }

    private void deadCounter(String name, String description, ToLongFunction<DeadLetterStats> value) {
        track(FunctionCounter.builder(PREFIX + name, this, m -> m.dead(value)).description(description)
                .tags(appTags).register(registry));
    }

    /** @return {@code value} summed over the application's lifecycles (one while it lives) */
    private double dead(ToLongFunction<DeadLetterStats> value) {
        double total = 0;
        for (RetryLifecycle lifecycle : WheelFailback.lifecycles()) {
            if (lifecycle.application().equals(application)) {
                total += value.applyAsLong(lifecycle.deadLetters().stats());
            }
        }
        return total;
    }

    // ---------------------------------------------------------------- registration

    private Counter counter(String name, String description, Tags tags) {
        return track(Counter.builder(PREFIX + name).description(description).tags(tags).register(registry));
    }

    private Timer timer(String name, String description, Tags tags) {
        return track(Timer.builder(PREFIX + name).description(description).tags(tags).register(registry));
    }

    /** Remembers a meter so that {@link #close()} removes it; a meter registered twice is the same meter. */
    private <M extends Meter> M track(M meter) {
        meters.putIfAbsent(meter.getId(), meter);
        if (closed) { // registered by an event racing with close(), which may have missed it
            registry.remove(meter);
        }
        return meter;
    }
}
