package io.rpctimer.journal;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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

/**
 * {@link H2FileCompactor}'s ticks, called one by one on a mostly dead file (8 MB written, a commit a row, then
 * deleted): when it is compacted, and when it is not.
 */
@Timeout(60)
class H2FileCompactorTest {

    @TempDir
    Path dir;

    private Path file;
    private Connection connection;
    private H2FileCompactor compactor;
    private long before;

    @BeforeEach
    void mostlyDeadFile() throws Exception {
        Path base = dir.resolve("journal-0");
        file = dir.resolve("journal-0.mv.db");
        connection = EmbeddedJournal.dataSource(base).getConnection();
        try (Statement st = connection.createStatement()) {
            st.execute("CREATE TABLE t (id INT PRIMARY KEY, b VARBINARY(4096))");
        }
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO t VALUES (?, ?)")) {
            for (int i = 0; i < 2_000; i++) {
                insert.setInt(1, i);
                insert.setBytes(2, new byte[4096]);
                insert.executeUpdate();
            }
        }
        try (Statement st = connection.createStatement()) {
            st.execute("DELETE FROM t");
        }
        before = Files.size(file);
        assertTrue(before > 2 * H2FileCompactor.MIN_FILE_BYTES, "the writes left only " + before + " bytes");
        compactor = H2FileCompactor.withoutTicks(connection, "test file");
        assertNotNull(compactor, "H2's store is reachable");
    }

    @AfterEach
    void close() throws Exception {
        connection.close();
    }

    @Test
    void quietTick_compactsAMostlyDeadFile() throws Exception {
        compactor.tick();

        assertCompacted();
    }

    @Test
    void noCompactionStarts_whileAClaimReads() throws Exception {
        H2FileCompactor.Reading claim = compactor.reading();
        H2FileCompactor.Reading unpark = compactor.reading();
        compactor.tick();
        assertEquals(before, Files.size(file), "compacted while a claim and an unpark read the file");
        claim.close();
        compactor.tick();
        assertEquals(before, Files.size(file), "compacted while an unpark read the file");

        unpark.close();
        compactor.tick();

        assertCompacted();
    }

    /** Periodic claims (as often as every 100 ms) would otherwise leave the file uncompacted while the process runs. */
    @Test
    void claimsBetweenTicks_doNotHoldCompactionOff() throws Exception {
        compactor.reading().close();
        compactor.reading().close();
        compactor.tick();

        assertCompacted();
    }

    private void assertCompacted() throws Exception {
        assertTrue(Files.size(file) < before, "the file is still " + Files.size(file) + " bytes of " + before);
    }
}
