package io.rpctimer.wheel;

/**
 * A source of monotonic time in nanoseconds, as {@link System#nanoTime()}: only differences between two readings
 * mean anything, and readings may wrap around {@link Long#MAX_VALUE}.
 *
 * <p><b>Threading:</b> implementations must be thread-safe. Tests inject a fake ticker to drive the wheel tick by
 * tick without sleeping.
 */
@FunctionalInterface
public interface Ticker {

    /** @return the current time in nanoseconds, from an arbitrary fixed origin */
    long nanoTime();

    /** @return the ticker backed by {@link System#nanoTime()} */
    static Ticker system() {
        return System::nanoTime;
    }
}
