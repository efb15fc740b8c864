package io.rpctimer.console;

import io.rpctimer.retry.DeadLetter;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetters;
import io.rpctimer.retry.LifecycleState;
import io.rpctimer.retry.ReferenceState;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStep;
import java.time.Instant;
import java.util.List;

/**
 * The JSON the console's page polls and its actions answer: one application's pending retries by service, the oldest
 * pending call, outcomes per minute, the first page of dead letters, one call's history. Times are ISO-8601 instants
 * (fields ending in {@code At}) or epoch milliseconds (fields ending in {@code EpochMillis}); ages in milliseconds.
 *
 * <p><b>Threading:</b> stateless; thread-safe. {@link #state} blocks on the dead-letter store.
 */
final class ConsoleViews {

    /** Dead letters the page lists: the newest. */
    static final int DEAD_ON_PAGE = 20;

    private ConsoleViews() {
    }

    static String state(RetryLifecycle lifecycle, OutcomesPerMinute outcomes) {
        LifecycleState s = lifecycle.state();
        Json json = new Json().object().field("application", s.application())
                .field("nowEpochMillis", System.currentTimeMillis());
        counts(json.object("counts"), s.stats()).end();
        references(json, s.references());
        json.array("minutes");
        for (OutcomesPerMinute.Minute m : outcomes.minutes()) {
            json.object().field("startEpochMillis", m.startEpochMillis()).field("delivered", m.delivered())
                    .field("abandoned", m.abandoned()).field("rejected", m.rejected())
                    .field("handedOver", m.handedOver()).end();
        }
        json.end();
        dead(json.object("dead"), lifecycle.deadLetters()).end();
        return json.end().toString();
    }

    private static Json counts(Json json, RetryStats c) {
        return json.field("failedCalls", c.failedCalls()).field("pending", c.pending())
                .field("delivered", c.delivered()).field("abandoned", c.abandoned()).field("rejected", c.rejected())
                .field("handedOver", c.handedOver()).field("retriesSent", c.retriesSent());
    }

    /** Each reference's pending retries, and the oldest pending call of the application. */
    private static void references(Json json, List<ReferenceState> references) {
        ReferenceState oldest = null;
        json.array("references");
        for (ReferenceState r : references) {
            json.object().field("service", r.serviceKey()).field("pending", r.pending())
                    .field("oldestPendingAgeMillis", r.oldestPendingAgeMillis()).field("parked", r.parked())
                    .field("waitingForBudget", r.waitingForBudget()).end();
            if (r.pending() > 0 && (oldest == null || r.oldestPendingAgeMillis() > oldest.oldestPendingAgeMillis())) {
                oldest = r;
            }
        }
        json.end();
        if (oldest == null) {
            json.field("oldest", null);
        } else {
            json.object("oldest").field("service", oldest.serviceKey())
                    .field("ageMillis", oldest.oldestPendingAgeMillis()).end();
        }
    }

    private static Json dead(Json json, DeadLetters dead) {
        json.field("kept", dead.describe()).field("durable", dead.durable());
        try {
            DeadLetterPage page = dead.list(DeadLetterFilter.all(), 1, DEAD_ON_PAGE);
            json.field("total", page.total()).array("letters");
            page.letters().forEach(l -> letter(json, l));
            return json.end();
        } catch (RetryJournalException e) {
            return json.field("error", "the store failed: " + e.getMessage());
        }
    }

    private static void letter(Json json, DeadLetter l) {
        json.object().field("retryId", l.retryId()).field("service", l.serviceKey()).field("method", l.method())
                .field("attempts", l.attempts())
                .field("firstFailureAt", Instant.ofEpochMilli(l.firstFailureEpochMillis()))
                .field("lastFailureAt", Instant.ofEpochMilli(l.lastFailureEpochMillis()))
                .field("failure", l.lastFailure()).field("provider", l.lastProvider()).end();
    }

    /** @return the steps this instance recorded of {@code retryId}, oldest first */
    static String history(RetryLifecycle lifecycle, String retryId) {
        Json json = new Json().object().field("retryId", retryId).array("steps");
        for (RetryStep s : lifecycle.history(retryId)) {
            json.object().field("at", Instant.ofEpochMilli(s.epochMillis())).field("type", s.type().name())
                    .field("service", s.serviceKey()).field("method", s.method()).field("attempt", s.attempt())
                    .field("provider", s.provider()).field("delayMillis", s.delayMillis())
                    .field("failure", s.failure()).end();
        }
        return json.end().end().toString();
    }

    static String replayed(String application, ReplayResult r) {
        return new Json().object().field("application", application).field("matched", r.matched())
                .field("replayed", r.replayed()).field("taken", r.taken()).field("conflicts", r.conflicts())
                .field("unreadable", r.unreadable()).field("noRoom", r.noRoom()).object("noReference")
                .fields(r.noReference()).end().end().toString();
    }

    static String purged(String application, long n) {
        return new Json().object().field("application", application).field("purged", n).end().toString();
    }

    static String error(int status, String message) {
        return new Json().object().field("status", status).field("error", message).end().toString();
    }
}
