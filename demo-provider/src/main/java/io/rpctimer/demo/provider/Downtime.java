package io.rpctimer.demo.provider;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A service that can be taken out of the registry and back, as a provider restart would. {@link DemoProvider} is the
 * real one; tests may fake it.
 *
 * <p>Implementations are thread-safe.
 */
public interface Downtime {

    /**
     * Unregisters and unexports the service now, and exports it again after {@code downFor}.
     *
     * @param downFor how long to stay down, 1 ms .. 1 h
     * @return completes when the service is exported again
     * @throws IllegalArgumentException if {@code downFor} is out of range
     * @throws IllegalStateException if already down, or stopped
     */
    CompletableFuture<Void> goDown(Duration downFor);

    /**
     * Exports the service again now, if it is down.
     *
     * @return true if it was down
     */
    boolean up();

    /** @return true while the service is down */
    boolean isDown();
}
