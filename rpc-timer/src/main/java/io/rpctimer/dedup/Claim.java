package io.rpctimer.dedup;

/**
 * What a {@link DedupStore} answered to one {@link DedupStore#claim claim} of a key: run the call ({@link
 * Status#CLAIMED}), or not. A {@code CLAIMED} answer carries the owner token that {@link DedupStore#done} and
 * {@link DedupStore#release} check, so that an execution whose started entry expired and was taken over by another
 * cannot release or finish the new owner's entry.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param status what to do with the call
 * @param key the claimed key
 * @param owner the owner token of a {@code CLAIMED} answer, else null
 */
public record Claim(Status status, String key, String owner) {

    /** What to do with the call. */
    public enum Status {
        /** Not seen, or its started entry had expired: this caller runs the call and then reports done or release. */
        CLAIMED,
        /** An earlier execution completed normally: do not run it again. */
        ALREADY_DONE,
        /** An execution started and has neither completed nor expired: do not run it now; it may run later. */
        IN_PROGRESS
    }

    static Claim claimed(String key, String owner) {
        return new Claim(Status.CLAIMED, key, owner);
    }

    static Claim done(String key) {
        return new Claim(Status.ALREADY_DONE, key, null);
    }

    static Claim inProgress(String key) {
        return new Claim(Status.IN_PROGRESS, key, null);
    }
}
