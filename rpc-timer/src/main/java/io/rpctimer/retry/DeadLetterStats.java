package io.rpctimer.retry;

/**
 * An application's dead letters as meters and operators see them, without asking the store
 * ({@link DeadLetters#stats()}).
 *
 * <p>{@code dead} is exact for a store in memory. For a journal it is the count of the last trim (every trim period)
 * moved by what this instance did since; in a fleet on a shared database every instance reports the same dead
 * letters, so do not add the instances' values up. The other counts are what this instance did since it started.
 *
 * <p><b>Threading:</b> immutable; a weakly consistent snapshot.
 *
 * @param dead      dead letters of the application now (see above)
 * @param buried    calls this instance abandoned and kept as dead letters
 * @param notKept   calls this instance abandoned that it could not keep: the journal did not hold them (its append
 *                  failed, or their arguments could not be serialized), or the journal failed to move them (those
 *                  stay among the pending calls, and a later start sends them again)
 * @param replayed  dead letters this instance replayed (made pending again)
 * @param purged    dead letters this instance purged
 * @param dropped   dead letters dropped past {@code failback.dead.max}, oldest first, by this instance's trims
 * @param expired   dead letters dropped past {@code failback.dead.retention} by this instance's trims
 * @param durable   whether they are kept in the journal (false: in memory, lost at restart)
 */
public record DeadLetterStats(long dead, long buried, long notKept, long replayed, long purged, long dropped,
                              long expired, boolean durable) {
}
