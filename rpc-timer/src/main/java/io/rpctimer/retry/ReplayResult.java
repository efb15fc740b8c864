package io.rpctimer.retry;

import java.util.Map;

/**
 * What one replay did ({@link DeadLetters#replay}).
 *
 * <p>A replayed dead letter is a pending call again, with its original {@code retry.id} and a fresh retry schedule:
 * its first retry is due at its place in the replay's pace, and every retry still passes its reference's retry budget.
 * The others stay dead letters, for one of the reasons counted here.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param matched         dead letters the filter matched when the replay started
 * @param replayed        of those, made pending again by this replay
 * @param taken           taken meanwhile by another replay (another operator, another instance) or a purge
 * @param conflicts       not replayed because a call with the same key is pending (a reused business key)
 * @param unreadable      not replayed because the live reference cannot decode the call (another serialization)
 * @param noRoom          (dead letters kept in memory only) not replayed because the reference's pending cap
 *                        ({@code failbacktasks}) was full
 * @param noReference     matching dead letters by service key, for the services that have no live reference on this
 *                        instance: a replay decodes a call with its reference's serialization, so replay them where
 *                        one lives
 * @param perSecond       the pace asked for, in replays per second; 0 if none was asked (the retry budget paces)
 * @param lastDueEpochMillis when the last replayed call's first retry is due, epoch milliseconds; 0 if none was
 */
public record ReplayResult(long matched, long replayed, long taken, long conflicts, long unreadable, long noRoom,
                           Map<String, Long> noReference, double perSecond, long lastDueEpochMillis) {

    public ReplayResult {
        noReference = Map.copyOf(noReference);
    }

    /** @return the dead letters that matched but stay dead letters */
    public long notReplayed() {
        return matched - replayed;
    }
}
