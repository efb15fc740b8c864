package io.rpctimer.journal;

import io.rpctimer.wheel.FailureLog;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.h2.mvstore.FileStore;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.RandomAccessStore;

import java.sql.Connection;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Shrinks the H2 file of an {@link EmbeddedJournal} slot once most of it is dead space, while the process runs.
 *
 * <h3>Why the file grows</h3>
 * H2's store (MVStore) writes each commit as a new chunk at a free place in the file and never overwrites data in
 * place: a chunk's space is reused only once nothing in it is live and it is older than H2's retention time (45 s),
 * a chunk that still holds one live page keeps all its space, and the file shrinks only when its end is free. H2
 * moves and rewrites chunks on its background writer, which {@code WRITE_DELAY=0} (every commit on disk before
 * {@code append} returns) turns off. A burst of 200,000 failed calls of 1 KB, appended and removed, left a file of
 * 1.2-1.7 GB with no live entry, that large for the life of the process (and 0.9 GB of it after close).
 *
 * <h3>What this does</h3>
 * Once a second it reads H2's estimate of the live data (per chunk). When the file is at least
 * {@value #MIN_FILE_BYTES} bytes, at most {@value #MAX_LIVE_PERCENT}% of it is live, at most {@value #QUIET_COMMITS}
 * commits happened in the last second (a burst is over; a trickle of a few failed calls a second, about three commits
 * each, does not stop it), and no hand-out is reading the file ({@link #reading()}: a claim at start may read a
 * million calls, the pages compaction would move), it compacts: it forces the file to the disk, then runs H2's own
 * compaction, the one H2 runs when it closes a database ({@code MVStore.compactFile}: sparse chunks rewritten, dead
 * ones freed at once, the rest moved to the front, the file truncated), and moves the remaining chunks to the front
 * (which {@code compactFile} skips when nothing was left to rewrite). During a burst the file still holds
 * what the last 45 s wrote.
 *
 * <h3>Costs</h3>
 * Compacting holds H2's store lock, so a write that arrives meanwhile waits for it (after 200,000 dead calls:
 * 0.3-1.5 s at load averages of 15-20 on 2 cores); the work grows with what is live, at most a quarter of the
 * file. The file is forced to the disk before H2's lock is taken, so the writes of the burst are not flushed under
 * it.
 *
 * <h3>Durability</h3>
 * Compaction is H2's own, the one it runs at every close: live data is moved or rewritten, never dropped, and only
 * dead chunks are freed. H2 keeps a dead chunk that is younger than its retention time so that after a crash of the
 * operating system (which may lose writes the disk had not received yet) an older version of the data is still
 * intact; compaction frees such chunks at once, as H2 always does for older ones, but first forces the file to the
 * disk; it puts the retention time back when it is done.
 *
 * <p><b>Threading:</b> one daemon thread ticks (without ticks, {@link #tick} is called by one thread at a time);
 * {@link #compactIfMostlyDead()} may also be called by one other thread (at close), and the two never compact at
 * once. {@link #reading()} may be called by any thread. {@link #close()} stops the ticks, waiting for a compaction in
 * progress; it never interrupts one (H2 closes its file when a thread in its I/O is interrupted).
 */
final class H2FileCompactor implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(H2FileCompactor.class.getName());

    static final long MIN_FILE_BYTES = 4L << 20;
    static final int MAX_LIVE_PERCENT = 25;
    /** A burst commits hundreds of times a second; a failed call commits about three times (append, fence, remove). */
    static final long QUIET_COMMITS = 20;
    private static final long TICK_MILLIS = 1_000;
    /** How long H2's compaction may go on rewriting and moving chunks, in ms (H2 gives itself 200 at close). */
    private static final int COMPACT_MILLIS = 200;
    private static final long MOVE_BYTES = 16L << 20;
    private static final long CLOSE_WAIT_SECONDS = 60;
    /** H2's internals are the same for every file: a version without them is logged once per JVM. */
    private static final AtomicBoolean UNREACHABLE_LOGGED = new AtomicBoolean();

    private final MVStore store;
    private final String name;
    /** H2's retention time, in ms, which {@code compactFile} sets to 0. */
    private final int retentionMillis;
    private final ScheduledExecutorService ticker;
    /** Ticker thread only: the store's version at the previous tick. */
    private long lastVersion;
    /** Ticker thread only. */
    private final FailureLog failures;
    /** Hand-outs reading the file now. */
    private final AtomicInteger readers = new AtomicInteger();

    private H2FileCompactor(MVStore store, String name, boolean tick) {
        this.store = store;
        this.name = name;
        this.retentionMillis = store.getRetentionTime();
        this.lastVersion = store.getCurrentVersion();
        this.failures = new FailureLog(LOG, System.Logger.Level.WARNING, name + ": compacting the file failed; it"
                + " is compacted again at the next quiet second, and by H2 at close");
        if (tick) {
            this.ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "rpc-timer-journal-compactor");
                t.setDaemon(true);
                return t;
            });
            ticker.scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
        } else {
            this.ticker = null;
        }
    }

    /**
     * Starts compacting, once a second, the file that {@code anchor} keeps open.
     *
     * @param name the file, as the journal names it in its log lines
     * @return the compactor, or null if the connection is not to an embedded H2 file of the version rpc-timer was
     *     built with (logged once; H2 then compacts only at close)
     */
    static H2FileCompactor start(Connection anchor, String name) {
        MVStore store = storeOf(anchor, name);
        return store == null ? null : new H2FileCompactor(store, name, true);
    }

    /**
     * As {@link #start}, without the ticks: the file is compacted when {@link #tick} or {@link #compactIfMostlyDead}
     * is called.
     */
    static H2FileCompactor withoutTicks(Connection connection, String name) {
        MVStore store = storeOf(connection, name);
        return store == null ? null : new H2FileCompactor(store, name, false);
    }

    /**
     * Compacts now, if most of the file {@code connection} is open on is dead (a slot file whose entries moved);
     * a failure is logged, never thrown: the file is compacted again the next time.
     */
    static void compactNow(Connection connection, String name) {
        H2FileCompactor compactor = withoutTicks(connection, name);
        if (compactor != null) {
            try {
                compactor.compactIfMostlyDead();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "{0}: compacting the file failed: {1}", name, e.toString());
            }
        }
    }

    private static MVStore storeOf(Connection connection, String name) {
        try {
            SessionLocal session = (SessionLocal) connection.unwrap(JdbcConnection.class).getSession();
            MVStore store = session.getDatabase().getStore().getMvStore();
            return store.getFileStore() instanceof RandomAccessStore ? store : null;
        } catch (Exception | LinkageError e) {
            if (UNREACHABLE_LOGGED.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "{0}: cannot reach H2''s store to compact the file while the"
                        + " journal runs; H2 compacts it only at close: {1}", name, e.toString());
            }
            return null;
        }
    }

    /**
     * A hand-out (a claim or an unpark) reads the file until the returned handle is closed: no compaction starts
     * meanwhile. A compaction under way goes on. Hand-outs between ticks do not hold it off: a short claim period
     * (periodic claims of every reference) would otherwise leave the file uncompacted while the process runs.
     */
    Reading reading() {
        readers.incrementAndGet();
        return readers::decrementAndGet;
    }

    /** The end of a {@link #reading()}: closed once, by the hand-out that took it. */
    interface Reading extends AutoCloseable {
        @Override
        void close();
    }

    /** Compacts if the last second was quiet (few commits), no hand-out reads, and most of the file is dead. */
    void tick() {
        try {
            long version = store.getCurrentVersion();
            boolean quiet = version - lastVersion <= QUIET_COMMITS && readers.get() == 0;
            lastVersion = version;
            if (quiet && compactIfMostlyDead()) {
                lastVersion = store.getCurrentVersion();
            }
        } catch (RuntimeException e) {
            failures.report(System.nanoTime(), e);
        }
    }

    /**
     * Compacts the file if it is at least {@value #MIN_FILE_BYTES} bytes and at most {@value #MAX_LIVE_PERCENT}%
     * of it is live.
     *
     * @return whether it compacted
     */
    synchronized boolean compactIfMostlyDead() {
        FileStore<?> file = store.getFileStore();
        long before = file.size();
        long live = before * file.getFillRate() / 100 * file.getChunksFillRate() / 100;
        if (store.isClosed() || before < MIN_FILE_BYTES || live * 100 > before * MAX_LIVE_PERCENT) {
            return false;
        }
        long start = System.nanoTime();
        store.sync(); // the burst's writes reach the disk before the store lock is taken, and before chunks are freed
        try {
            store.compactFile(COMPACT_MILLIS);
            ((RandomAccessStore) file).compactMoveChunks(100, MOVE_BYTES, store);
        } finally {
            store.setRetentionTime(retentionMillis);
        }
        LOG.log(System.Logger.Level.DEBUG, "{0}: compacted from {1} to {2} bytes in {3} ms", name, before,
                file.size(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        return true;
    }

    /** Stops the ticks; a compaction in progress completes first. Idempotent. */
    @Override
    public void close() {
        if (ticker == null) {
            return;
        }
        ticker.shutdown();
        try {
            if (!ticker.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
                LOG.log(System.Logger.Level.WARNING, "{0}: a compaction still runs after {1} s; closing anyway",
                        name, CLOSE_WAIT_SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
