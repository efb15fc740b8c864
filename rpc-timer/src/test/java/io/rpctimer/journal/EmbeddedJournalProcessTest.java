package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.rpctimer.journal.Entries.APP;
import static io.rpctimer.journal.Entries.SVC;
import static io.rpctimer.journal.Entries.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link EmbeddedJournal} across real processes: a child JVM ({@link JournalChild}) appends and is killed with
 * kill -9 ({@code destroyForcibly}); H2's file lock keeps its slot from this JVM while it lives, and frees it when
 * it dies.
 */
@Timeout(120)
class EmbeddedJournalProcessTest {

    @TempDir
    Path base;
    private final List<Process> children = new ArrayList<>();

    @AfterEach
    void killChildren() throws InterruptedException {
        for (Process p : children) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** Starts a child that appends {@code count} entries; returns once it printed "appended slot=n". */
    private Process appendInChild(String prefix, int count, int expectedSlot) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                JournalChild.class.getName(), base.toString(), APP, prefix, Integer.toString(count))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        children.add(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertEquals("appended slot=" + expectedSlot, line);
        return p;
    }

    private static void kill9(Process p) throws InterruptedException {
        p.destroyForcibly();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "child did not die");
    }

    @Test
    void everyReturnedAppend_survivesKill9RightAfter() throws Exception {
        int n = 1_000;
        kill9(appendInChild("c", n, 0));

        try (EmbeddedJournal j = EmbeddedJournal.open(base, APP)) {
            assertEquals(0, j.slot(), "the dead child's slot is free again");
            List<RetryJournalEntry> claimed = j.claim(APP, SVC, 2 * n);
            assertEquals(n, claimed.size());
            assertTrue(claimed.stream().allMatch(e -> e.retryId().startsWith("c-")));
        }
    }

    @Test
    void aLiveProcessKeepsItsSlot_andItsEntriesAreAdoptedOnlyOnceItIsGone() throws Exception {
        Process child = appendInChild("c", 10, 0);
        try (EmbeddedJournal j = EmbeddedJournal.open(base, APP)) {
            assertEquals(1, j.slot(), "slot 0 is locked by the live child");
            j.append(entry("mine", 100), false);
            assertEquals(List.of(), j.claim(APP, SVC, 100), "the child's entries stay in its slot while it lives");

            kill9(child);

            List<RetryJournalEntry> adopted = j.claim(APP, SVC, 100);
            assertEquals(10, adopted.size());
            assertTrue(adopted.stream().allMatch(e -> e.retryId().startsWith("c-")));
        }
        try (EmbeddedJournal restarted = EmbeddedJournal.open(base, APP)) {
            assertEquals(0, restarted.slot(), "the lowest free slot");
            assertEquals(11, restarted.claim(APP, SVC, 100).size(), "slot 1's entries, which hold the child's");
        }
    }
}
