package io.rpctimer.demo.provider.fault;

import io.rpctimer.demo.provider.support.Durations;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;

/**
 * The faults one demo provider injects, changeable while it runs. One instance per provider.
 *
 * <h3>Fault kinds</h3>
 * <ul>
 *   <li><b>fail</b> ({@link #failRate}, {@link #failNext}): the service refuses the call with
 *       {@code NotificationRejectedException}, a business failure that travels inside the RPC result;</li>
 *   <li><b>error</b> ({@link #errorRate}, {@link #errorNext}): the call fails at the RPC level, before the service
 *       runs ({@link FaultFilter} throws);</li>
 *   <li><b>latency</b>: a delay added to every call;</li>
 *   <li><b>hang</b>: every call waits this long (set it above the consumer's timeout), or until {@link #clear()}.</li>
 * </ul>
 * "Next n" counts are used up first; then the rate decides, one independent draw per call. Latency and hang add up.
 * Taking the whole service down for a while is the provider's job ({@code DemoProvider.goDown}).
 *
 * <h3>Deciding</h3>
 * {@link FaultFilter} asks {@link #nextRpcError()} once per call; the service asks {@link #nextServiceFault()} once per
 * call that got past the filter. Each answer is taken atomically from one snapshot of the settings, so a "next n"
 * count is never used twice.
 *
 * <p>Thread-safe: setters, decisions and {@link #clear()} may run concurrently from any thread. A decision taken just
 * before a setter runs uses the old settings; a delay started just before {@link #clear()} is still released by it.
 */
public final class FaultInjector {
    /** The longest latency or hang accepted: 10 minutes. */
    public static final Duration MAX_DELAY = Duration.ofMinutes(10);

    private final DoubleSupplier random;
    private final AtomicReference<FaultSettings> settings = new AtomicReference<>(FaultSettings.NONE);
    // Delays in progress. Concurrency: a delay registers itself, then re-reads releases; release() bumps releases,
    // then completes every registered delay. Either the delay sees the bump or release() sees the delay.
    private final Set<CompletableFuture<Void>> delays = ConcurrentHashMap.newKeySet();
    private final AtomicLong releases = new AtomicLong();

    /** Creates an injector with no faults, drawing from {@link ThreadLocalRandom}. */
    public FaultInjector() {
        this(() -> ThreadLocalRandom.current().nextDouble());
    }

    /**
     * Creates an injector with no faults.
     *
     * @param random supplies values in [0, 1) for the rate draws; called from many threads at once
     */
    public FaultInjector(DoubleSupplier random) {
        if (random == null) {
            throw new IllegalArgumentException("random: null (expected: a DoubleSupplier)");
        }
        this.random = random;
    }

    /**
     * @param rate the fraction of calls, 0..1, that fail with a business exception
     * @throws IllegalArgumentException {@code failRate: 1.5 (expected: 0..1)}
     */
    public void failRate(double rate) {
        checkRate("failRate", rate);
        settings.updateAndGet(s -> s.withFailRate(rate));
    }

    /**
     * @param calls how many of the next calls fail with a business exception (replaces the remaining count)
     * @throws IllegalArgumentException {@code failNext: -1 (expected: >= 0)}
     */
    public void failNext(int calls) {
        checkCount("failNext", calls);
        settings.updateAndGet(s -> s.withCounts(calls, s.errorNext()));
    }

    /**
     * @param rate the fraction of calls, 0..1, that fail at the RPC level
     * @throws IllegalArgumentException {@code errorRate: 1.5 (expected: 0..1)}
     */
    public void errorRate(double rate) {
        checkRate("errorRate", rate);
        settings.updateAndGet(s -> s.withErrorRate(rate));
    }

    /**
     * @param calls how many of the next calls fail at the RPC level (replaces the remaining count)
     * @throws IllegalArgumentException {@code errorNext: -1 (expected: >= 0)}
     */
    public void errorNext(int calls) {
        checkCount("errorNext", calls);
        settings.updateAndGet(s -> s.withCounts(s.failNext(), calls));
    }

    /**
     * @param latency the delay added to every call from now on; zero = none; whole milliseconds count
     * @throws IllegalArgumentException if null, negative or above {@link #MAX_DELAY}
     */
    public void latency(Duration latency) {
        checkDelay("latency", latency);
        settings.updateAndGet(s -> s.withLatency(truncate(latency)));
    }

    /**
     * @param hang how long every call from now on waits, unless {@link #clear()} comes first; zero = no hang. Calls
     *        already hanging keep their own end time.
     * @throws IllegalArgumentException if null, negative or above {@link #MAX_DELAY}
     */
    public void hang(Duration hang) {
        checkDelay("hang", hang);
        settings.updateAndGet(s -> s.withHang(truncate(hang)));
    }

    /** Removes every fault and releases every call that is waiting out a latency or a hang. */
    public void clear() {
        settings.set(FaultSettings.NONE);
        releaseWaiting();
    }

    /**
     * Ends every delay in progress now (calls continue as if it had elapsed); settings are unchanged. Used when the
     * provider stops, so that no server thread stays parked.
     */
    public void releaseWaiting() {
        releases.incrementAndGet();
        for (CompletableFuture<Void> d : delays) {
            d.complete(null);
        }
    }

    /** @return the current settings, including what is left of the "next n" counts */
    public FaultSettings settings() {
        return settings.get();
    }

    /**
     * Decides whether this call fails at the RPC level. Uses up one {@code errorNext} count if any is left.
     *
     * @return the reason (e.g. {@code "error 50%"}, {@code "error next, 2 left"}) if it must fail, else empty
     */
    public Optional<String> nextRpcError() {
        FaultSettings s;
        do {
            s = settings.get();
            if (s.errorNext() == 0) {
                return s.errorRate() > 0 && random.getAsDouble() < s.errorRate()
                        ? Optional.of("error " + FaultSettings.percent(s.errorRate()))
                        : Optional.empty();
            }
        } while (!settings.compareAndSet(s, s.withCounts(s.failNext(), s.errorNext() - 1)));
        return Optional.of("error next, " + (s.errorNext() - 1) + " left");
    }

    /**
     * Decides what the service does with this call, and starts its delay (latency + hang) at once. Uses up one
     * {@code failNext} count if any is left.
     *
     * @return the decision; wait for {@link ServiceFault#delayElapsed()} before answering
     */
    public ServiceFault nextServiceFault() {
        long releasesSeen = releases.get(); // before reading the settings: see releaseWaiting()
        FaultSettings s;
        String reject;
        do {
            s = settings.get();
            if (s.failNext() == 0) {
                reject = s.failRate() > 0 && random.getAsDouble() < s.failRate()
                        ? "fail " + FaultSettings.percent(s.failRate())
                        : null;
                break;
            }
            reject = "fail next, " + (s.failNext() - 1) + " left";
        } while (!settings.compareAndSet(s, s.withCounts(s.failNext() - 1, s.errorNext())));
        Duration delay = s.latency().plus(s.hang());
        return new ServiceFault(reject, delay, startDelay(delay, releasesSeen));
    }

    private CompletableFuture<Void> startDelay(Duration delay, long releasesSeen) {
        if (delay.isZero()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> d = new CompletableFuture<>();
        delays.add(d);
        d.whenComplete((v, t) -> delays.remove(d));
        d.completeOnTimeout(null, delay.toMillis(), TimeUnit.MILLISECONDS);
        if (releases.get() != releasesSeen) {
            d.complete(null); // released between the decision and the registration
        }
        return d;
    }

    /** @return how many calls are waiting out a latency or a hang right now */
    public int waitingCalls() {
        return delays.size();
    }

    private static void checkRate(String name, double rate) {
        if (!(rate >= 0 && rate <= 1)) { // also rejects NaN
            throw new IllegalArgumentException(name + ": " + rate + " (expected: 0..1)");
        }
    }

    private static void checkCount(String name, int calls) {
        if (calls < 0) {
            throw new IllegalArgumentException(name + ": " + calls + " (expected: >= 0)");
        }
    }

    private static void checkDelay(String name, Duration d) {
        if (d == null || d.isNegative() || d.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException(name + ": " + (d == null ? "null" : d.toMillis() + " ms")
                    + " (expected: 0.." + Durations.format(MAX_DELAY) + ")");
        }
    }

    private static Duration truncate(Duration d) {
        return Duration.ofMillis(d.toMillis());
    }

    @Override
    public String toString() {
        return "FaultInjector[" + settings.get() + "]";
    }
}
