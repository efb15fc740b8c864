package io.rpctimer.journal;

import io.rpctimer.retry.Abandonment;
import io.rpctimer.retry.CallKey;
import io.rpctimer.retry.DeadLetterStore;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;
import org.h2.api.ErrorCode;
import org.h2.jdbcx.JdbcDataSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The embedded default {@link RetryJournal}: an H2 file database under {@code <baseDir>/<application>/}, needing
 * no server.
 *
 * <h3>Slots</h3>
 * Each consumer process of an application on one host holds one slot file, {@code journal-<n>.mv.db}, n = 0, 1, ...
 * At open, a process takes the lowest slot it can open: H2 locks an open file with an OS file lock, which the OS
 * releases when the process dies (even by kill -9), so a slot is never shared by two live processes, and a
 * restarted process normally takes its own slot back with its entries. Slots held inside this JVM are skipped
 * too (H2 would share one database between them). At open and at every {@link #claim}, the journal also empties
 * each slot file it can open (its process is gone): it copies the calls into its own file, commits, then deletes
 * them in the other file ({@link SlotMover}: a copy cut short by a crash is simply done again, and a call whose key
 * this slot already holds for a different call stays where it is until that one ends).
 * Slot files are never deleted: a process may be opening one at that moment.
 *
 * <h3>Durability</h3>
 * H2 runs with {@code WRITE_DELAY=0}: every commit is written to the file before {@link #append} returns, so it
 * survives the end of the process (kill -9, OOM, a crash). It is not forced to the disk (no fsync per commit): an
 * OS crash or power loss can lose the last commits. A file H2 cannot read (corrupt) is renamed
 * {@code journal-<n>.mv.db.corrupt-<epoch ms>} with an error naming it, and the slot starts empty.
 *
 * <h3>File size</h3>
 * H2 never overwrites live data: every commit goes to a new place in the file, and old versions are freed later. A
 * burst of failed calls therefore grows the file by several times their size (200,000 calls of 1 KB appended and
 * removed: 1.2-1.7 GB, because H2 keeps what the last 45 s wrote). Once a burst is over, no claim or unpark is
 * reading, and at most a quarter of the file is live, the file is compacted while the journal runs, and at close (see
 * {@link H2FileCompactor}): after that burst it shrinks to well under a megabyte within seconds. A write that arrives
 * during a compaction waits for it.
 *
 * <p><b>Threading:</b> thread-safe, as {@link JdbcRetryJournal}.
 */
public final class EmbeddedJournal implements RetryJournal {

    private static final System.Logger LOG = System.getLogger(EmbeddedJournal.class.getName());

    /** Most processes of one application on one host. */
    public static final int MAX_SLOTS = 64;
    /** Slot files this JVM holds open: H2 shares a database between connections of one JVM, so no file lock here. */
    private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

    private final Path dir;
    private final int slot;
    private final Path slotBase;
    private final Connection anchor;
    private final JdbcRetryJournal journal;
    /** Null if H2's store cannot be reached (H2 then compacts the file at close only). */
    private final H2FileCompactor compactor;
    private final AtomicBoolean closed = new AtomicBoolean();

    private EmbeddedJournal(Path dir, int slot, Path slotBase, Connection anchor, JdbcRetryJournal journal) {
        this.dir = dir;
        this.slot = slot;
        this.slotBase = slotBase;
        this.anchor = anchor;
        this.journal = journal;
        this.compactor = H2FileCompactor.start(anchor, "retry journal " + slotBase + ".mv.db");
    }

    /** As {@link #open(Path, String, Duration)} with a write timeout of 5 s. */
    public static EmbeddedJournal open(Path baseDir, String application) throws RetryJournalException {
        return open(baseDir, application, Duration.ofSeconds(5));
    }

    /**
     * Opens the first free slot of {@code application} under {@code baseDir} (created if absent), and adopts the
     * entries of slots whose process is gone.
     *
     * @param application the Dubbo application name; characters other than letters, digits, '.', '-' and '_'
     *                    become '_' in the directory name
     * @throws RetryJournalException if no slot can be opened (all {@value #MAX_SLOTS} held, or the disk fails)
     */
    public static EmbeddedJournal open(Path baseDir, String application, Duration writeTimeout)
            throws RetryJournalException {
        EntryRows.checkText("application", application, JournalSql.APP_CHARS, true);
        Path dir = baseDir.toAbsolutePath().resolve(application.replaceAll("[^A-Za-z0-9._-]", "_"));
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new RetryJournalException("retry journal " + dir + ": cannot create the directory: " + e, e);
        }
        for (int slot = 0; slot < MAX_SLOTS; slot++) {
            Path base = dir.resolve("journal-" + slot);
            Connection anchor = take(base);
            if (anchor != null) {
                EmbeddedJournal opened = open(dir, slot, base, anchor, writeTimeout);
                opened.adoptFreeSlots();
                return opened;
            }
        }
        throw new RetryJournalException("retry journal " + dir + ": all " + MAX_SLOTS + " slots are held by live"
                + " processes", new IllegalStateException("no free slot"));
    }

    private static EmbeddedJournal open(Path dir, int slot, Path base, Connection anchor, Duration writeTimeout)
            throws RetryJournalException {
        try {
            JdbcRetryJournal journal = JdbcRetryJournal.builder(dataSource(base))
                    .owner("slot-" + slot)
                    .name(base + ".mv.db")
                    .lease(Duration.ZERO)
                    .writeTimeout(writeTimeout)
                    .build();
            return new EmbeddedJournal(dir, slot, base, anchor, journal);
        } catch (RetryJournalException | RuntimeException e) {
            release(base, anchor);
            throw e;
        }
    }

    /**
     * Opens a slot file unless another process or this JVM holds it.
     *
     * @return the connection that keeps it open (and locked), or null if it is held
     */
    private static Connection take(Path base) throws RetryJournalException {
        if (!HELD.add(base)) {
            return null;
        }
        try {
            return dataSource(base).getConnection();
        } catch (SQLException e) {
            HELD.remove(base);
            if (e.getErrorCode() == ErrorCode.DATABASE_ALREADY_OPEN_1) {
                return null;
            }
            if (e.getErrorCode() == ErrorCode.FILE_CORRUPTED_1) {
                moveAside(base, e);
                return take(base);
            }
            throw new RetryJournalException("retry journal " + base + ".mv.db: cannot open: " + e, e);
        }
    }

    private static void moveAside(Path base, SQLException cause) throws RetryJournalException {
        Path file = Path.of(base + ".mv.db");
        Path aside = Path.of(file + ".corrupt-" + System.currentTimeMillis());
        try {
            Files.move(file, aside);
        } catch (IOException e) {
            throw new RetryJournalException("retry journal " + file + ": corrupt, and cannot be moved aside: " + e, e);
        }
        LOG.log(System.Logger.Level.ERROR, "retry journal {0}: corrupt, moved to {1}; its entries are not loaded"
                + " (H2''s Recover tool may read them): {2}", file, aside, cause.toString());
    }

    static JdbcDataSource dataSource(Path base) {
        JdbcDataSource ds = new JdbcDataSource();
        // WRITE_DELAY=0: each commit reaches the file before the call returns (survives kill -9);
        // DB_CLOSE_ON_EXIT=FALSE: close() decides when the file closes, not a shutdown hook racing the writer
        ds.setURL("jdbc:h2:file:" + base + ";WRITE_DELAY=0;DB_CLOSE_ON_EXIT=FALSE");
        ds.setUser("sa");
        ds.setPassword("");
        return ds;
    }

    private static void release(Path base, Connection anchor) {
        try {
            anchor.close();
        } catch (SQLException e) {
            LOG.log(System.Logger.Level.WARNING, "retry journal {0}.mv.db: close failed: {1}", base, e);
        } finally {
            HELD.remove(base);
        }
    }

    /** @return the slot this process holds */
    public int slot() {
        return slot;
    }

    /** @return the slot's file */
    public Path file() {
        return Path.of(slotBase + ".mv.db");
    }

    /**
     * Moves into this slot the entries of every slot file that no live process holds.
     *
     * @return how many entries were moved
     */
    public int adoptFreeSlots() throws RetryJournalException {
        int moved = 0;
        for (int other = 0; other < MAX_SLOTS; other++) {
            Path base = dir.resolve("journal-" + other);
            if (other == slot || !Files.exists(Path.of(base + ".mv.db"))) {
                continue;
            }
            Connection from = take(base);
            if (from != null) {
                try {
                    moved += SlotMover.move(from, dataSource(slotBase), journal.owner(), base + ".mv.db");
                    H2FileCompactor.compactNow(from, "retry journal " + base + ".mv.db");
                } finally {
                    journal.parkedElsewhere(); // the pages moved before a failure too
                    release(base, from);
                }
            }
        }
        return moved;
    }

    @Override
    public Append append(RetryJournalEntry entry, boolean parked) throws RetryJournalException {
        return journal.append(entry, parked);
    }

    @Override
    public CompletionStage<Fence> fence(CallKey key, int attempt, long nextDueEpochMillis, String lastProvider,
                                        String lastFailure) {
        return journal.fence(key, attempt, nextDueEpochMillis, lastProvider, lastFailure);
    }

    @Override
    public CompletionStage<Boolean> remove(CallKey key) {
        return journal.remove(key);
    }

    @Override
    public CompletionStage<Boolean> bury(CallKey key, Abandonment abandonment) {
        return journal.bury(key, abandonment);
    }

    /** {@inheritDoc} Those of this slot's file, where the dead letters of slots whose process is gone are moved. */
    @Override
    public DeadLetterStore deadLetters() {
        return journal.deadLetters();
    }

    @Override
    public void release(List<CallKey> keys) throws RetryJournalException {
        journal.release(keys);
    }

    @Override
    public boolean fences() {
        return false;
    }

    @Override
    public boolean leaseHeld() {
        return true;
    }

    /** {@inheritDoc} Slots whose process is gone are adopted first. */
    @Override
    public List<RetryJournalEntry> claim(String application, String serviceKey, int limit)
            throws RetryJournalException {
        try (H2FileCompactor.Reading r = reading()) {
            adoptFreeSlots();
            return journal.claim(application, serviceKey, limit);
        }
    }

    @Override
    public List<RetryJournalEntry> unpark(String application, String serviceKey, int limit)
            throws RetryJournalException {
        try (H2FileCompactor.Reading r = reading()) {
            return journal.unpark(application, serviceKey, limit);
        }
    }

    /** @return a hand-out's hold on the compaction, which would move what it reads (a no-op without a compactor) */
    private H2FileCompactor.Reading reading() {
        return compactor != null ? compactor.reading() : () -> { };
    }

    @Override
    public String describe() {
        return "embedded " + journal.describe() + ", slot " + slot + " of " + dir;
    }

    /** Commits what is queued, compacts the file if most of it is dead, closes it and frees the slot. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (compactor != null) {
                compactor.close();
            }
            journal.close();
            try {
                if (compactor != null) {
                    compactor.compactIfMostlyDead();
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "retry journal {0}.mv.db: compacting at close failed; H2"
                        + " compacts what it can as it closes: {1}", slotBase, e.toString());
            } finally {
                release(slotBase, anchor);
            }
        }
    }
}
