package io.rpctimer.dedup;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory {@link DedupStore}, for one provider process: a bounded Caffeine cache whose entries expire after the
 * {@link DedupWindows started or done window}. It sees only the calls of its own process, so it cannot stop a retry
 * that goes to another provider from running there; a fleet needs a shared store ({@link JdbcDedupStore}).
 *
 * <h3>Sizing</h3>
 * Every call that carries a retry id gets an entry (the original attempt too: that is how a retry of a call that
 * completed late is recognised), about 250 bytes with a 40-character key. Size it for the peak rate of deduplicated
 * calls times the done window: at the defaults (200,000 entries, done window 120 s) that is 1,666 calls/s, about
 * 50 MB. Past the bound Caffeine evicts entries early, and a retry of an evicted call may run again.
 *
 * <p><b>Threading:</b> thread-safe; a key is claimed by one caller at a time (Caffeine's atomic {@code putIfAbsent}).
 * No thread of its own: expired entries are cleaned up by the calling threads.
 */
public final class CaffeineDedupStore implements DedupStore {

    /** The default bound, in entries. */
    public static final long DEFAULT_MAX_ENTRIES = 200_000;

    private final Cache<String, Entry> cache;
    private final AtomicLong owners = new AtomicLong();
    private final long maxEntries;
    private final DedupWindows windows;

    /** One key's state; compared by value, so that {@code replace} and {@code remove} check the owner. */
    private record Entry(boolean done, long owner) {
    }

    /** A store with the default bound and windows. */
    public CaffeineDedupStore() {
        this(DEFAULT_MAX_ENTRIES, DedupWindows.defaults());
    }

    /**
     * @param maxEntries the bound, 1 .. 100,000,000 entries
     * @param windows how long entries live
     * @throws IllegalArgumentException {@code maxEntries: 0 (expected: 1..100000000)}
     */
    public CaffeineDedupStore(long maxEntries, DedupWindows windows) {
        this(maxEntries, windows, Ticker.systemTicker());
    }

    CaffeineDedupStore(long maxEntries, DedupWindows windows, Ticker ticker) {
        if (maxEntries < 1 || maxEntries > 100_000_000) {
            throw new IllegalArgumentException("maxEntries: " + maxEntries + " (expected: 1..100000000)");
        }
        this.maxEntries = maxEntries;
        this.windows = windows;
        Duration started = Duration.ofMillis(windows.startedMillis());
        Duration done = Duration.ofMillis(windows.doneMillis());
        this.cache = Caffeine.newBuilder()
                .maximumSize(maxEntries)
                .ticker(ticker)
                .executor(Runnable::run) // maintenance on the calling thread: no pool of ours, deterministic in tests
                .expireAfter(Expiry.<String, Entry>writing((k, e) -> e.done() ? done : started))
                .build();
    }

    @Override
    public Claim claim(String key) {
        long owner = owners.incrementAndGet();
        Entry prior = cache.asMap().putIfAbsent(DedupStore.checkKey(key), new Entry(false, owner));
        if (prior == null) {
            return Claim.claimed(key, Long.toString(owner));
        }
        return prior.done() ? Claim.done(key) : Claim.inProgress(key);
    }

    @Override
    public void done(Claim claim) {
        long owner = owner(claim);
        cache.asMap().replace(claim.key(), new Entry(false, owner), new Entry(true, owner));
    }

    @Override
    public void release(Claim claim) {
        cache.asMap().remove(claim.key(), new Entry(false, owner(claim)));
    }

    private static long owner(Claim claim) {
        if (claim.status() != Claim.Status.CLAIMED) {
            throw new IllegalArgumentException("claim: " + claim.status() + " (expected: CLAIMED)");
        }
        return Long.parseLong(claim.owner());
    }

    @Override
    public String toString() {
        return "memory(max " + maxEntries + " entries, " + windows + ")";
    }
}
