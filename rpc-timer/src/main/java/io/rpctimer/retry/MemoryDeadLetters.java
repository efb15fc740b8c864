package io.rpctimer.retry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * The dead letters of one application kept in memory, when its calls are ({@code failback.store=memory}) or when its
 * journal keeps none: lost at restart. Each keeps the glue's in-memory call, so that a replay can send it again;
 * the list is bounded by the {@link DeadLetterPolicy}, trimmed as it grows (the oldest go first) and whenever it is
 * read, so that no timer is needed.
 *
 * <p><b>Threading:</b> thread-safe; every method holds this object's monitor for a walk of the list at most (no call
 * out to other code while holding it).
 */
final class MemoryDeadLetters implements DeadLetterStore {

    /** One dead letter and the call it keeps. */
    private record Held(DeadLetter letter, Object payload) {
    }

    private final LongSupplier clockMillis;
    /** Oldest first, by arrival. Guarded by this. */
    private final TreeMap<Long, Held> bySeq = new TreeMap<>();
    /** Guarded by this. */
    private final Map<CallKey, Long> byKey = new HashMap<>();
    /** Guarded by this. */
    private long nextSeq;

    MemoryDeadLetters(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
    }

    /**
     * Keeps a dead letter (a newer one of the same key replaces the older), then trims.
     *
     * @return what had to be dropped to stay within the bounds
     */
    synchronized Trimmed add(DeadLetter letter, Object payload, long retentionMillis, long max) {
        remove(letter.key());
        long seq = nextSeq++;
        bySeq.put(seq, new Held(letter, payload));
        byKey.put(letter.key(), seq);
        return trim(letter.application(), retentionMillis, max);
    }

    @Override
    public boolean durable() {
        return false;
    }

    @Override
    public String describe() {
        return "memory (not durable: lost at restart)";
    }

    @Override
    public synchronized DeadLetterPage list(String application, DeadLetterFilter filter, int page, int pageSize) {
        long now = clockMillis.getAsLong();
        long skip = (long) (page - 1) * pageSize;
        List<DeadLetter> out = new ArrayList<>(Math.min(pageSize, 256));
        long total = 0;
        for (Held h : bySeq.descendingMap().values()) {
            if (filter.matches(h.letter(), now)) {
                if (total >= skip && out.size() < pageSize) {
                    out.add(h.letter());
                }
                total++;
            }
        }
        return new DeadLetterPage(out, page, pageSize, total);
    }

    @Override
    public synchronized Map<String, Long> count(String application, DeadLetterFilter filter) {
        long now = clockMillis.getAsLong();
        Map<String, Long> counts = new HashMap<>();
        for (Held h : bySeq.values()) {
            if (filter.matches(h.letter(), now)) {
                counts.merge(h.letter().serviceKey(), 1L, Long::sum);
            }
        }
        return counts;
    }

    @Override
    public synchronized long purge(String application, DeadLetterFilter filter) {
        return take(filter, null).size();
    }

    @Override
    public synchronized Trimmed trim(String application, long retentionMillis, long max) {
        long oldestKept = clockMillis.getAsLong() - retentionMillis;
        long expired = 0;
        long dropped = 0;
        while (!bySeq.isEmpty() && bySeq.firstEntry().getValue().letter().lastFailureEpochMillis() < oldestKept) {
            forget(bySeq.pollFirstEntry().getValue());
            expired++;
        }
        while (bySeq.size() > max) {
            forget(bySeq.pollFirstEntry().getValue());
            dropped++;
        }
        return new Trimmed(expired, dropped, bySeq.size());
    }

    /** {@inheritDoc} Dead letters the reviver does not take are put back in their place. */
    @Override
    public Revived revive(String application, DeadLetterFilter filter, Set<String> serviceKeys, Reviver reviver) {
        Map<Long, Held> taken;
        synchronized (this) {
            taken = take(filter, serviceKeys);
        }
        Map<String, Long> revived = new HashMap<>();
        for (Map.Entry<Long, Held> e : taken.entrySet()) {
            Held h = e.getValue();
            if (reviver.take(h.letter(), h.payload()) == NOT_TAKEN) {
                putBack(e.getKey(), h);
            } else {
                revived.merge(h.letter().serviceKey(), 1L, Long::sum);
            }
        }
        return new Revived(revived, 0, 0, null);
    }

    /** @return and removes the matching dead letters (of {@code serviceKeys}, unless null), oldest first */
    private Map<Long, Held> take(DeadLetterFilter filter, Set<String> serviceKeys) {
        long now = clockMillis.getAsLong();
        Map<Long, Held> taken = new TreeMap<>();
        for (Iterator<Map.Entry<Long, Held>> it = bySeq.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Held> e = it.next();
            // read before removing: TreeMap's remove of a node with two children moves its successor's key and value
            // into that node, so the entry would then name the next dead letter
            long seq = e.getKey();
            Held h = e.getValue();
            DeadLetter l = h.letter();
            if (filter.matches(l, now) && (serviceKeys == null || serviceKeys.contains(l.serviceKey()))) {
                it.remove();
                byKey.remove(l.key());
                taken.put(seq, h);
            }
        }
        return taken;
    }

    /** A dead letter the reviver left goes back to its place, unless a newer one of its key came meanwhile. */
    private synchronized void putBack(long seq, Held h) {
        if (!byKey.containsKey(h.letter().key())) {
            bySeq.put(seq, h);
            byKey.put(h.letter().key(), seq);
        }
    }

    private void remove(CallKey key) {
        Long seq = byKey.remove(key);
        if (seq != null) {
            bySeq.remove(seq);
        }
    }

    private void forget(Held h) {
        byKey.remove(h.letter().key());
    }

    synchronized int size() {
        return bySeq.size();
    }
}
