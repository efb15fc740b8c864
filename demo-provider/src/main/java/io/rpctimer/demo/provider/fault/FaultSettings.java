package io.rpctimer.demo.provider.fault;

import io.rpctimer.demo.provider.support.Durations;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A snapshot of a {@link FaultInjector}'s settings.
 *
 * <p>Rates are fractions 0..1; counts are calls; durations are whole milliseconds.
 *
 * <p>Immutable, so thread-safe.
 */
public final class FaultSettings {
    /** No fault at all. */
    public static final FaultSettings NONE = new FaultSettings(0, 0, 0, 0, Duration.ZERO, Duration.ZERO);

    private final double failRate;
    private final int failNext;
    private final double errorRate;
    private final int errorNext;
    private final Duration latency;
    private final Duration hang;

    FaultSettings(double failRate, int failNext, double errorRate, int errorNext, Duration latency, Duration hang) {
        this.failRate = failRate;
        this.failNext = failNext;
        this.errorRate = errorRate;
        this.errorNext = errorNext;
        this.latency = latency;
        this.hang = hang;
    }

    /** @return the fraction of calls, 0..1, that fail with a business exception */
    public double failRate() {
        return failRate;
    }

    /** @return how many of the next calls still fail with a business exception before {@link #failRate()} applies */
    public int failNext() {
        return failNext;
    }

    /** @return the fraction of calls, 0..1, that fail at the RPC level */
    public double errorRate() {
        return errorRate;
    }

    /** @return how many of the next calls still fail at the RPC level before {@link #errorRate()} applies */
    public int errorNext() {
        return errorNext;
    }

    /** @return the delay added to every call; zero = none */
    public Duration latency() {
        return latency;
    }

    /** @return how long every call hangs (unless cleared first); zero = no hang */
    public Duration hang() {
        return hang;
    }

    /** @return true if no fault is set */
    public boolean isNone() {
        return failRate == 0 && failNext == 0 && errorRate == 0 && errorNext == 0 && latency.isZero()
                && hang.isZero();
    }

    FaultSettings withFailRate(double rate) {
        return new FaultSettings(rate, failNext, errorRate, errorNext, latency, hang);
    }

    FaultSettings withErrorRate(double rate) {
        return new FaultSettings(failRate, failNext, rate, errorNext, latency, hang);
    }

    FaultSettings withLatency(Duration d) {
        return new FaultSettings(failRate, failNext, errorRate, errorNext, d, hang);
    }

    FaultSettings withHang(Duration d) {
        return new FaultSettings(failRate, failNext, errorRate, errorNext, latency, d);
    }

    FaultSettings withCounts(int failNext, int errorNext) {
        return new FaultSettings(failRate, failNext, errorRate, errorNext, latency, hang);
    }

    /** Formats a rate as a percentage: {@code 0.3 -> "30%"}, {@code 0.125 -> "12.5%"}. */
    static String percent(double rate) {
        String s = String.format(Locale.ROOT, "%.2f", rate * 100).replaceAll("\\.?0+$", "");
        return s + "%";
    }

    /** @return e.g. {@code "fail 30%, error next 2, latency 200 ms, hang 10 s"}, or {@code "none"} */
    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        if (failNext > 0) {
            parts.add("fail next " + failNext);
        }
        if (failRate > 0) {
            parts.add("fail " + percent(failRate));
        }
        if (errorNext > 0) {
            parts.add("error next " + errorNext);
        }
        if (errorRate > 0) {
            parts.add("error " + percent(errorRate));
        }
        if (!latency.isZero()) {
            parts.add("latency " + Durations.format(latency));
        }
        if (!hang.isZero()) {
            parts.add("hang " + Durations.format(hang));
        }
        return parts.isEmpty() ? "none" : String.join(", ", parts);
    }
}
