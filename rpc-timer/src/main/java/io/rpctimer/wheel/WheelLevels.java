package io.rpctimer.wheel;

import java.util.function.Consumer;

/**
 * The levels of a hierarchical timing wheel, as a plain data structure: files timeouts into buckets by deadline tick,
 * unlinks them, moves them down a level ("cascades") when time reaches their bucket, and hands each due timeout to
 * the caller. It has no clock, no thread, no executor and no queue: the caller says which tick it is by calling
 * {@link #advance(long, Consumer)}, as with Agrona's {@code DeadlineTimerWheel} and Caffeine's {@code TimerWheel}.
 *
 * <p><b>Threading:</b> NOT thread-safe. One thread (the wheel's worker, or a test) calls every method; the only
 * field of a {@link WheelTimeout} it reads that other threads write is its state.
 *
 * <h3>Layout</h3>
 * Time is a tick number; a timeout's deadline tick is the first tick at or after its deadline. Level {@code i} has
 * {@code wheelSize} buckets, each spanning {@code S(i) = wheelSize^i} ticks: a bucket of level 0 is one tick. Bucket
 * {@code index} of level {@code i} holds timeouts whose deadline tick {@code d} has {@code (d / S(i)) % wheelSize ==
 * index}. The <i>window</i> of level {@code i} starts at the first tick of the level-{@code i} slot holding the
 * current tick {@code c}, {@code floor(c / S(i)) * S(i)}, and spans {@code wheelSize * S(i)} ticks. A timeout is
 * filed into the lowest level whose window reaches its deadline tick. Levels are allocated when first used; the top
 * level's window spans every {@code long} tick.
 *
 * <h3>The invariant that makes cascading correct</h3>
 * <b>A timeout filed at level {@code i >= 1} lies in a level-{@code i} slot that starts after the current tick</b>:
 * {@code floor(d / S(i)) > floor(c / S(i))}. (If {@code d} were in the current slot, it would be below the end of
 * level {@code i-1}'s window, which begins at or after that slot's start and spans a whole slot, so it would have
 * been filed lower.) Hence (1) the bucket of the current slot of every level above 0 is empty, so the at most
 * {@code wheelSize - 1} later slots of a window never share a bucket; (2) the slot's first tick, the bucket's
 * <i>boundary</i>, lies in {@code (c, d]}: when time reaches it, every timeout in the bucket has
 * {@code d - boundary < S(i)} and fits level {@code i-1}'s window, so refiling it moves it strictly down, to level 0
 * at the latest by its own deadline tick. A tick processes the buckets whose boundary it is from the top level down,
 * so a timeout can fall through several levels in one tick; each timeout moves at most once per level, and a tick
 * costs what falls due or moves down in it, never what is pending far ahead.
 *
 * <p>A worked example to check on paper, {@code wheelSize = 4} ({@code S(1) = 4}, {@code S(2) = 16}), current tick
 * {@code c = 5}: the windows are ticks 5..8 (level 0), 4..19 (level 1) and 0..63 (level 2).
 * <ul>
 *   <li>{@code d = 7}: level 0, bucket {@code 7 % 4 = 3}; due at tick 7.</li>
 *   <li>{@code d = 9}: past level 0's window, inside level 1's: level 1, bucket {@code (9 / 4) % 4 = 2}, boundary
 *       tick 8. At tick 8 it is refiled with {@code c = 8}: level 0 (window 8..11), bucket 1; due at tick 9.</li>
 *   <li>{@code d = 30}: level 2, bucket {@code (30 / 16) % 4 = 1}, boundary 16. At tick 16: level 1 (window
 *       16..31), bucket {@code (30 / 4) % 4 = 3}, boundary 28. At tick 28: level 0 (window 28..31), bucket 2; due at
 *       tick 30. Three moves for three levels.</li>
 * </ul>
 * {@code WheelLevelsTest.workedExampleOfTheJavadoc} replays this example.
 *
 * <h3>Caveats</h3>
 * Timeouts due in the same tick are handed over in no particular order. A timeout filed with a deadline tick that
 * has passed is due at the next tick. Deadlines are in nanoseconds on the caller's timeline, cut into ticks of
 * {@code tickNanos}; only the caller's clock says which tick it is.
 */
final class WheelLevels {

    private final long tickNanos;
    private final int bits;
    private final int mask;
    private final int maxLevel;
    /** {@code buckets[level][index]}: the head of a doubly linked list; a level is allocated when first used. */
    private final WheelTimeout[][] buckets;
    /** One bit per non-empty bucket, per level: where the next work is, without walking buckets. */
    private final long[][] occupied;
    /** The last tick processed: every timeout due at or before it has been handed over. */
    private long currentTick;
    private long linked;
    /** Nodes taken off a bucket by a tick (handed over or moved down): what a tick costs. */
    private long nodesVisited;
    /** Ticks processed one by one; the ticks jumped over are not counted. */
    private long tickVisits;

    /**
     * @param tickNanos the length of a tick in nanoseconds, {@code > 0}
     * @param wheelSize buckets per level, a power of two {@code >= 2}
     * @throws IllegalArgumentException if {@code wheelSize} is not a power of two {@code >= 2}
     */
    WheelLevels(long tickNanos, int wheelSize) {
        if (wheelSize < 2 || Integer.bitCount(wheelSize) != 1) {
            throw new IllegalArgumentException("wheelSize: " + wheelSize + " (expected: a power of two >= 2)");
        }
        this.tickNanos = tickNanos;
        this.bits = Integer.numberOfTrailingZeros(wheelSize);
        this.mask = wheelSize - 1;
        // The top level's window, wheelSize^(maxLevel + 1) ticks, spans every representable deadline.
        this.maxLevel = (63 + bits - 1) / bits - 1;
        this.buckets = new WheelTimeout[maxLevel + 1][];
        this.occupied = new long[maxLevel + 1][];
    }

    int wheelSize() {
        return mask + 1;
    }

    /** @return the last tick processed */
    long currentTick() {
        return currentTick;
    }

    /** @return timeouts linked in buckets */
    long linkedCount() {
        return linked;
    }

    long nodesVisited() {
        return nodesVisited;
    }

    long tickVisits() {
        return tickVisits;
    }

    /** @return the first tick at or after {@code deadlineNanos} */
    long deadlineTick(long deadlineNanos) {
        long tick = deadlineNanos / tickNanos;
        return tick * tickNanos < deadlineNanos ? tick + 1 : tick;
    }

    /**
     * Moves the current tick forward to {@code tick} without processing, but never past a tick with work to do:
     * for a wheel that starts, or resumes, long after its origin.
     */
    void skipTo(long tick) {
        currentTick = Math.max(currentTick, Math.min(tick, nextEventTick() - 1));
    }

    /**
     * Files a {@code SCHEDULED} timeout into the bucket of its deadline tick, or of the next tick if its deadline
     * tick has been processed already.
     */
    void file(WheelTimeout t) {
        link(t, Math.max(deadlineTick(t.deadlineNanos), currentTick + 1));
    }

    /** Links {@code t} into the bucket that holds {@code tick}, on the lowest level whose window reaches it. */
    private void link(WheelTimeout t, long tick) {
        int level = levelFor(tick);
        if (buckets[level] == null) {
            buckets[level] = new WheelTimeout[mask + 1];
            occupied[level] = new long[Math.max(1, (mask + 1) >>> 6)];
        }
        push(level, (int) ((tick >>> (level * bits)) & mask), t);
    }

    private void push(int level, int index, WheelTimeout t) {
        WheelTimeout head = buckets[level][index];
        t.next = head;
        if (head != null) {
            head.prev = t;
        } else {
            occupied[level][index >>> 6] |= 1L << index;
        }
        buckets[level][index] = t;
        linked++;
    }

    /** The lowest level whose window, starting at the slot holding the current tick, reaches {@code tick}. */
    private int levelFor(long tick) {
        for (int level = 0; level < maxLevel; level++) {
            int shift = level * bits;
            long windowStart = (currentTick >>> shift) << shift;
            if (((tick - windowStart) >>> (shift + bits)) == 0) {
                return level;
            }
        }
        return maxLevel;
    }

    /** Takes {@code t} out of its bucket; no effect if a tick already took it off the wheel. */
    void unlink(WheelTimeout t) {
        WheelTimeout prev = t.prev;
        WheelTimeout next = t.next;
        if (prev != null) {
            prev.next = next;
        } else if (!unlinkHead(t)) {
            return;
        }
        if (next != null) {
            next.prev = prev;
        }
        t.prev = null;
        t.next = null;
        linked--;
    }

    private boolean unlinkHead(WheelTimeout t) {
        long tick = Math.max(deadlineTick(t.deadlineNanos), currentTick + 1); // where file() put it
        for (int level = 0; level <= maxLevel; level++) {
            WheelTimeout[] row = buckets[level];
            if (row != null) {
                int index = (int) ((tick >>> (level * bits)) & mask);
                if (row[index] == t) {
                    row[index] = t.next;
                    if (t.next == null) {
                        occupied[level][index >>> 6] &= ~(1L << index);
                    }
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Processes the ticks after the current one up to {@code toTick}, jumping straight from one tick with work to
     * the next ({@link #nextEventTick()}), so a long pause costs what is filed, not the ticks it spans. Each due
     * {@code SCHEDULED} timeout goes to {@code due}; cancelled ones are dropped.
     *
     * <p>Exception safety, as Caffeine's {@code TimerWheel.advance}: if {@code due} (or an allocation) throws, the
     * bucket's unprocessed timeouts, and the one that failed while still {@code SCHEDULED}, are linked back, the
     * current tick goes back to the one before the failed tick, and the throwable propagates; the next call
     * processes that tick again.
     *
     * @param toTick the tick the caller's clock has reached
     * @param due    takes each due timeout; it leaves the timeout {@code SCHEDULED} only if it did not take it
     */
    void advance(long toTick, Consumer<WheelTimeout> due) {
        while (currentTick < toTick) {
            long tick = nextEventTick();
            if (tick > toTick) {
                currentTick = toTick;
                return;
            }
            currentTick = tick;
            try {
                processTick(tick, due);
            } catch (Throwable t) {
                currentTick = tick - 1;
                throw t;
            }
        }
    }

    private void processTick(long tick, Consumer<WheelTimeout> due) {
        tickVisits++;
        for (int level = maxLevel; level >= 1; level--) {
            int shift = level * bits;
            if (buckets[level] != null && (tick & ((1L << shift) - 1)) == 0) {
                walk(level, (int) ((tick >>> shift) & mask), due);
            }
        }
        if (buckets[0] != null) {
            walk(0, (int) (tick & mask), due);
        }
    }

    /** Takes a bucket off the wheel and moves each timeout down a level, or hands it over from level 0. */
    private void walk(int level, int index, Consumer<WheelTimeout> due) {
        WheelTimeout node = detach(level, index);
        while (node != null) {
            WheelTimeout next = node.next;
            node.prev = null;
            node.next = null;
            linked--;
            nodesVisited++;
            try {
                if (node.state() == WheelTimeout.ST_SCHEDULED) {
                    if (level == 0) {
                        due.accept(node);
                    } else {
                        link(node, Math.max(deadlineTick(node.deadlineNanos), currentTick));
                    }
                }
            } catch (Throwable t) {
                relink(level, index, node, next);
                throw t;
            }
            node = next;
        }
    }

    /**
     * Links the {@code SCHEDULED} timeouts of a bucket being walked back into it: the one that failed (already taken
     * off) and the rest of the chain (not yet taken off).
     */
    private void relink(int level, int index, WheelTimeout failed, WheelTimeout rest) {
        if (failed.state() == WheelTimeout.ST_SCHEDULED) {
            push(level, index, failed);
        }
        for (WheelTimeout node = rest; node != null; ) {
            WheelTimeout next = node.next;
            node.prev = null;
            node.next = null;
            linked--;
            if (node.state() == WheelTimeout.ST_SCHEDULED) {
                push(level, index, node);
            }
            node = next;
        }
    }

    /** Empties a bucket; its nodes keep their links until the caller walks them. */
    private WheelTimeout detach(int level, int index) {
        WheelTimeout head = buckets[level][index];
        if (head != null) {
            buckets[level][index] = null;
            occupied[level][index >>> 6] &= ~(1L << index);
        }
        return head;
    }

    /** Empties every bucket, giving each {@code SCHEDULED} timeout to {@code sink}. */
    void drainTo(Consumer<WheelTimeout> sink) {
        for (int level = 0; level <= maxLevel; level++) {
            if (buckets[level] == null) {
                continue;
            }
            for (int index = 0; index <= mask; index++) {
                for (WheelTimeout node = detach(level, index); node != null; ) {
                    WheelTimeout next = node.next;
                    node.prev = null;
                    node.next = null;
                    linked--;
                    if (node.state() == WheelTimeout.ST_SCHEDULED) {
                        sink.accept(node);
                    }
                    node = next;
                }
            }
        }
    }

    /**
     * The first tick after the current one at which something is filed to happen: a level-0 bucket falls due or a
     * higher-level bucket moves down; {@code Long.MAX_VALUE} if none. By the invariant, every non-empty bucket of a
     * level lies after the current slot, so the first set bit after it, circularly, is the nearest.
     */
    long nextEventTick() {
        long best = Long.MAX_VALUE;
        for (int level = 0; level <= maxLevel; level++) {
            if (occupied[level] == null) {
                continue;
            }
            int shift = level * bits;
            long boundary = ((currentTick >>> shift) + 1) << shift; // the first tick of the next slot
            int offset = firstSetBit(occupied[level], (int) ((boundary >>> shift) & mask));
            if (offset >= 0) {
                best = Math.min(best, boundary + ((long) offset << shift));
            }
        }
        return best;
    }

    /** @return how many buckets after {@code from} (circularly) the first set bit is, or -1 if none is set */
    private int firstSetBit(long[] bitmap, int from) {
        int size = mask + 1;
        for (int scanned = 0; scanned < size; ) {
            int index = (from + scanned) & mask;
            int inWord = index & 63;
            int span = Math.min(64 - inWord, size - index); // up to the word's end or the wheel's end, then wrap
            long word = bitmap[index >>> 6] >>> inWord;
            if (span < 64) {
                word &= (1L << span) - 1;
            }
            if (word != 0) {
                return scanned + Long.numberOfTrailingZeros(word);
            }
            scanned += span;
        }
        return -1;
    }

    @Override
    public String toString() {
        return "WheelLevels(tick: " + tickNanos + " ns, wheelSize: " + (mask + 1) + ", currentTick: " + currentTick
                + ", linked: " + linked + ')';
    }
}
