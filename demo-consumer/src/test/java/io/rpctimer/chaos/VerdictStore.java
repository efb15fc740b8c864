package io.rpctimer.chaos;

import io.rpctimer.dedup.Claim;
import io.rpctimer.dedup.DedupStore;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link DedupStore} that passes everything to another and remembers, on the claiming thread, what its last claim
 * decided: {@code retrydedup} claims on the thread that runs the provider's filter chain, so the
 * {@link ProviderRecordFilter} around it reads there whether the call was let through ({@code CLAIMED}, or
 * {@code STORE_FAILED}: the filter then runs it unprotected), suppressed ({@code ALREADY_DONE}) or refused
 * ({@code IN_PROGRESS}).
 *
 * <p><b>Threading:</b> thread-safe if the delegate is; the verdict is per thread.
 */
final class VerdictStore implements DedupStore {

    /** What the store decided of a call; {@code NONE} when nothing was claimed (the call had no retry.id). */
    enum Verdict { NONE, CLAIMED, ALREADY_DONE, IN_PROGRESS, STORE_FAILED }

    private static final ThreadLocal<Verdict> LAST = new ThreadLocal<>();
    /** Keys whose run the store failed to mark done: they stay "started" until the window ends, then may run again. */
    private static final Set<String> DONE_FAILED = ConcurrentHashMap.newKeySet();

    private final DedupStore delegate;

    VerdictStore(DedupStore delegate) {
        this.delegate = delegate;
    }

    /** Forgets this thread's verdict: before the chain runs. */
    static void reset() {
        LAST.remove();
    }

    /** @return this thread's verdict since the last {@link #reset()} */
    static Verdict last() {
        Verdict v = LAST.get();
        return v == null ? Verdict.NONE : v;
    }

    @Override
    public Claim claim(String key) {
        try {
            Claim c = delegate.claim(key);
            LAST.set(Verdict.valueOf(c.status().name()));
            return c;
        } catch (RuntimeException e) {
            LAST.set(Verdict.STORE_FAILED);
            throw e;
        }
    }

    /** @return the keys ({@code <service key>#<method>#<retry.id>}) whose run the store failed to mark done */
    static Set<String> doneFailed() {
        return Set.copyOf(DONE_FAILED);
    }

    /** Forgets the keys of {@link #doneFailed()}: at the start of a run. */
    static void clear() {
        DONE_FAILED.clear();
    }

    @Override
    public void done(Claim claim) {
        try {
            delegate.done(claim);
        } catch (RuntimeException e) {
            DONE_FAILED.add(claim.key());
            throw e;
        }
    }

    @Override
    public void release(Claim claim) {
        delegate.release(claim);
    }

    @Override
    public String toString() {
        return "verdicts of " + delegate;
    }
}
