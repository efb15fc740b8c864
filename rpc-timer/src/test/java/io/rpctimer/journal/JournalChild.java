package io.rpctimer.journal;

import java.nio.file.Path;

/**
 * The consumer process of {@link EmbeddedJournalProcessTest}: opens the embedded journal of an application,
 * appends {@code count} entries with ids {@code <prefix>-<i>}, prints {@code appended slot=<n>}, then waits to be
 * killed (it never closes the journal).
 *
 * <p>Usage: {@code JournalChild <baseDir> <application> <prefix> <count>}
 */
public final class JournalChild {

    private JournalChild() {
    }

    public static void main(String[] args) throws Exception {
        EmbeddedJournal journal = EmbeddedJournal.open(Path.of(args[0]), args[1]);
        int count = Integer.parseInt(args[3]);
        for (int i = 0; i < count; i++) {
            journal.append(Entries.entry(args[2] + "-" + i, i), false);
        }
        System.out.println("appended slot=" + journal.slot());
        System.out.flush();
        System.in.read(); // the parent kills this process; EOF on stdin (parent gone) ends it too
    }
}
