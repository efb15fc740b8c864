package io.rpctimer.wheel;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker tests move by hand. Thread-safe. */
final class FakeTicker implements Ticker {
    private final AtomicLong nanos;

    FakeTicker(long startNanos) {
        this.nanos = new AtomicLong(startNanos);
    }

    @Override
    public long nanoTime() {
        return nanos.get();
    }

    long advance(long amount, TimeUnit unit) {
        return nanos.addAndGet(unit.toNanos(amount));
    }
}
