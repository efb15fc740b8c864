package io.rpctimer.demo.provider.ledger;

import java.time.Duration;

/**
 * Told about every call a {@link CallLedger} sees end.
 *
 * <p>Called on the thread that ended the call (a Dubbo server thread, the JDK's delay scheduler, or the thread that
 * cleared the faults), possibly from many threads at once: implementations must be thread-safe and quick. An exception
 * thrown by a listener is ignored.
 */
@FunctionalInterface
public interface CallListener {
    /**
     * @param call the call
     * @param outcome how it ended
     * @param elapsed from receipt to end
     * @param detail the rejection or error message, or null when it completed
     */
    void onCallEnded(CallRecord call, CallOutcome outcome, Duration elapsed, String detail);
}
