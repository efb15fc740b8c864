package io.rpctimer.dubbo;

import io.rpctimer.retry.FailedCall;
import io.rpctimer.retry.VirtualTimer;
import java.util.List;

/**
 * A {@link VirtualTimer} that tells a failed call's retries apart from the other timeouts (the future-timeout
 * checker's), and runs them one at a time on the test thread. Single-threaded use.
 */
final class ManualTimer extends VirtualTimer {

    /** @return the live timeouts whose task is a failed call's retry */
    List<Scheduled> retries() {
        return live(FailedCall.class);
    }

    /** @return the live timeouts of the future-timeout checker */
    List<Scheduled> attemptTimeouts() {
        return scheduled.stream().filter(s -> !(s.task() instanceof FailedCall) && s.isLive()).toList();
    }

    /** Runs the only live retry timeout. */
    Scheduled fireRetry() {
        List<Scheduled> live = retries();
        if (live.size() != 1) {
            throw new AssertionError("expected one pending retry, found " + live.size());
        }
        live.get(0).fire();
        return live.get(0);
    }
}
