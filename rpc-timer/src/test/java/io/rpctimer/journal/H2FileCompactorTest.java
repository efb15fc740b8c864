package io.rpctimer.journal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link H2FileCompactor}'s ticks, called one by one: when a mostly dead file is compacted, and when it is not. */
@Timeout(60)
class H2FileCompactorTest {

    @TempDir
    Path dir;

    @Test
    void quietTick_compactsAMostlyDeadFile() throws Exception {
        Path base = dir.resolve("journal-0");
        try (Connection c = EmbeddedJournal.dataSource(base).getConnection()) {
            long before = writeAndDeleteEverything(c, base);
            H2FileCompactor compactor = H2FileCompactor.withoutTicks(c, "test file");
            assertNotNull(compactor, "H2's store is reachable");

            compactor.tick();

            assertTrue(size(base) < before, "the file is still " + size(base) + " bytes of " + before);
        }
    }

    @Test
    void noCompactionStarts_whileAClaimReads() throws Exception {
        Path base = dir.resolve("journal-0");
        try (Connection c = EmbeddedJournal.dataSource(base).getConnection()) {
            long before = writeAndDeleteEverything(c, base);
            H2FileCompactor compactor = H2FileCompactor.withoutTicks(c, "test file");
            assertNotNull(compactor, "H2's store is reachable");

            H2FileCompactor.Reading claim = compactor.reading();
            H2FileCompactor.Reading unpark = compactor.reading();
            compactor.tick();
            assertEquals(before, size(base), "compacted while a claim and an unpark read the file");
            claim.close();
            compactor.tick();
            assertEquals(before, size(base), "compacted while an unpark read the file");

            unpark.close();
            compactor.tick();
            assertTrue(size(base) < before, "the file is still " + size(base) + " bytes of " + before);
        }
    }

    /** Periodic claims (as often as every 100 ms) would otherwise leave the file uncompacted while the process runs. */
    @Test
    void claimsBetweenTicks_doNotHoldCompactionOff() throws Exception {
        Path base = dir.resolve("journal-0");
        try (Connection c = EmbeddedJournal.dataSource(base).getConnection()) {
            long before = writeAndDeleteEverything(c, base);
            H2FileCompactor compactor = H2FileCompactor.withoutTicks(c, "test file");
            assertNotNull(compactor, "H2's store is reachable");

            compactor.reading().close();
            compactor.reading().close();
            compactor.tick();

            assertTrue(size(base) < before, "the file is still " + size(base) + " bytes of " + before);
        }
    }

    /** @return the file's size once 8 MB were written, a commit per row, and deleted: it is mostly dead */
    private static long writeAndDeleteEverything(Connection c, Path base) throws Exception {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (id INT PRIMARY KEY, b VARBINARY(4096))");
        }
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO t VALUES (?, ?)")) {
            for (int i = 0; i < 2_000; i++) {
                insert.setInt(1, i);
                insert.setBytes(2, new byte[4096]);
                insert.executeUpdate();
            }
        }
        try (Statement st = c.createStatement()) {
            st.execute("DELETE FROM t");
        }
        long size = size(base);
        assertTrue(size > 2 * H2FileCompactor.MIN_FILE_BYTES, "the writes left only " + size + " bytes");
        return size;
    }

    private static long size(Path base) throws Exception {
        return Files.size(base.resolveSibling(base.getFileName() + ".mv.db"));
    }
}
