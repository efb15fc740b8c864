package io.rpctimer.dedup;

/**
 * Remembers which calls, by key, have started and which have completed, so that a call delivered again (a retry of a
 * call that did run) runs at most once while its entry lives.
 *
 * <p>An entry's life: {@link #claim} creates it <em>started</em> (the answer is {@link Claim.Status#CLAIMED}); the
 * caller runs the call, then {@link #done} marks it <em>done</em> if the call completed normally, or {@link #release}
 * removes it if the call threw, so that a later delivery may run it again. A started entry whose owner never reports
 * (a provider that died mid-call) expires after the store's started window; a done entry expires after the store's
 * done window, which must outlast the consumer's retry horizon.
 *
 * <pre>
 *   (none) --claim--&gt; STARTED --done--&gt; DONE --done window--&gt; (none)
 *                        |  \--release / started window--&gt; (none)
 *   claim of STARTED: IN_PROGRESS      claim of DONE: ALREADY_DONE      claim of (none): CLAIMED
 * </pre>
 *
 * <p><b>Threading:</b> implementations are thread-safe, and a key is claimed by exactly one caller at a time, also
 * across processes for a shared store.
 */
public interface DedupStore {

    /**
     * Records {@code key} as started, unless an unexpired entry exists.
     *
     * @param key the call's key, 1..400 characters
     * @return {@code CLAIMED} with an owner token, {@code ALREADY_DONE} or {@code IN_PROGRESS}
     * @throws DedupStoreException if the store cannot answer
     */
    Claim claim(String key);

    /**
     * Marks a claimed key done; no effect if the claim's entry has since expired and been taken over.
     *
     * @param claim a {@code CLAIMED} answer of {@link #claim}
     * @throws DedupStoreException if the store cannot record it; the entry then stays started until it expires
     */
    void done(Claim claim);

    /**
     * Removes a claimed, not done key so that a later delivery may run it; no effect if the claim's entry has since
     * expired and been taken over.
     *
     * @param claim a {@code CLAIMED} answer of {@link #claim}
     * @throws DedupStoreException if the store cannot remove it; the entry then stays started until it expires
     */
    void release(Claim claim);

    /** @return a short description for logs, e.g. {@code memory(max 100000, started 30 s, done 600 s)} */
    @Override
    String toString();

    /** Checks a key handed to {@link #claim}. */
    static String checkKey(String key) {
        if (key == null || key.isEmpty() || key.length() > 400) {
            throw new IllegalArgumentException("key: " + (key == null ? "null" : key.length() + " characters")
                    + " (expected: 1..400 characters)");
        }
        return key;
    }
}
