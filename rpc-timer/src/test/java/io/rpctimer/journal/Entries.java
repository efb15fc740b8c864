package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalEntry;

import java.nio.charset.StandardCharsets;

/** Test entries: {@code entry(id, due)} of application "app", service "svc", payload "payload-<id>". */
final class Entries {

    static final String APP = "app";
    static final String SVC = "group/io.rpctimer.Greeting:1.0";

    private Entries() {
    }

    static RetryJournalEntry entry(String id, long dueEpochMillis) {
        return new RetryJournalEntry(id, APP, SVC, "greet", ("payload-" + id).getBytes(StandardCharsets.UTF_8), 1,
                dueEpochMillis, null, null, 1_000L);
    }
}
