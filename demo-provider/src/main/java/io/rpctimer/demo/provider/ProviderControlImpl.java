package io.rpctimer.demo.provider;

import io.rpctimer.demo.provider.api.ProviderControl;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link ProviderControl} over one {@link DemoProvider}: every method delegates to the provider's in-process API.
 *
 * <p>Thread-safe.
 */
public final class ProviderControlImpl implements ProviderControl {
    private final DemoProvider provider;

    /** @param provider the provider to drive */
    public ProviderControlImpl(DemoProvider provider) {
        this.provider = provider;
    }

    @Override
    public String provider() {
        return provider.identity();
    }

    @Override
    public String execute(String command) {
        if (command != null && command.trim().equalsIgnoreCase("quit")) {
            throw new IllegalArgumentException("command: \"quit\" (expected: typed at the provider's terminal)");
        }
        return provider.execute(command);
    }

    @Override
    public void failRate(double rate) {
        provider.faults().failRate(rate);
    }

    @Override
    public void failNext(int calls) {
        provider.faults().failNext(calls);
    }

    @Override
    public void errorRate(double rate) {
        provider.faults().errorRate(rate);
    }

    @Override
    public void errorNext(int calls) {
        provider.faults().errorNext(calls);
    }

    @Override
    public void latencyMillis(long millis) {
        provider.faults().latency(millis("latencyMillis", millis));
    }

    @Override
    public void hangMillis(long millis) {
        provider.faults().hang(millis("hangMillis", millis));
    }

    @Override
    public void downMillis(long millis) {
        provider.goDown(millis("downMillis", millis));
    }

    @Override
    public void up() {
        provider.up();
    }

    @Override
    public void clear() {
        provider.faults().clear();
        provider.up();
    }

    @Override
    public String faults() {
        return provider.faults().settings().toString();
    }

    @Override
    public Map<String, Long> stats() {
        return new HashMap<>(provider.ledger().snapshot().toMap()); // HashMap: hessian2 needs no registration
    }

    @Override
    public void resetStats() {
        provider.ledger().reset();
    }

    private static Duration millis(String name, long millis) {
        if (millis < 0) {
            throw new IllegalArgumentException(name + ": " + millis + " (expected: >= 0)");
        }
        return Duration.ofMillis(millis);
    }
}
