package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.Callable;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A bounded wait whose timeout is a figure, not a failure: the scenario records what it saw and its assertions say
 * what was missing.
 *
 * <p><b>Threading:</b> static, no state.
 */
final class Waits {

    private Waits() {
    }

    /** @return whether {@code condition} held within {@code max} (polled every 100 ms) */
    static boolean until(Callable<Boolean> condition, Duration max) {
        try {
            await().atMost(max).pollInterval(Duration.ofMillis(100)).until(condition);
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }
}
