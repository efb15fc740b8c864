package io.rpctimer.journal;

import io.rpctimer.retry.CallKey;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import io.rpctimer.retry.RetryJournalEntry;

import java.nio.charset.StandardCharsets;

/** Test entries: {@code entry(id, due)} of application "app", service "svc", payload "payload-<id>". */
final class Entries {

    static final String APP = "app";
    static final String SVC = "group/io.rpctimer.Greeting:1.0";

    private Entries() {
    }

    /** @return the key of test entry {@code id} */
    static CallKey key(String id) {
        return new CallKey(APP, SVC, "greet", id);
    }

    /** @return what a fence or remove completed with, waiting up to 10 s */
    static <T> T done(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    static RetryJournalEntry entry(String id, long dueEpochMillis) {
        return new RetryJournalEntry(id, APP, SVC, "greet", ("payload-" + id).getBytes(StandardCharsets.UTF_8), 1,
                dueEpochMillis, null, null, 1_000L);
    }
}
