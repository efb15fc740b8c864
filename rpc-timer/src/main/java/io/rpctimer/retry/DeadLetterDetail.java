package io.rpctimer.retry;

import java.util.List;

/**
 * One dead letter with the steps of its life this instance still remembers ({@link RetryLifecycle#history}): none if
 * another instance of the fleet abandoned it, if this instance restarted since, or if the application's history ring
 * has moved on.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param letter  the dead letter
 * @param history its recorded steps, oldest first; possibly empty
 */
public record DeadLetterDetail(DeadLetter letter, List<RetryStep> history) {

    public DeadLetterDetail {
        history = List.copyOf(history);
    }
}
