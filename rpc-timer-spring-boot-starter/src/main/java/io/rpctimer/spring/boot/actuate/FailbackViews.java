package io.rpctimer.spring.boot.actuate;

import io.rpctimer.retry.DeadLetter;
import io.rpctimer.retry.DeadLetterDetail;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetters;
import io.rpctimer.retry.LifecycleState;
import io.rpctimer.retry.ReferenceState;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStep;
import io.rpctimer.wheel.TimerStats;
import java.time.Instant;
import java.util.List;

/**
 * The JSON the {@code failback} endpoint returns: the same facts as the QoS command {@code failback}, as records that
 * Jackson writes field by field. Durations are in milliseconds (the field names say so), times are ISO-8601 instants.
 * Texts that could quote a credential (the journal's description, failure messages) are {@link Redaction redacted}.
 *
 * <p><b>Threading:</b> immutable snapshots.
 */
public final class FailbackViews {

    private FailbackViews() {
    }

    /**
     * {@code GET /actuator/failback}.
     *
     * @param applications each Dubbo application of this context with a {@code wheelfailback} reference
     * @param wheel        the shared wheel, or null when no reference holds it
     */
    public record Overview(List<Application> applications, Wheel wheel) {
    }

    /** One application's retries: its counters, its store and each live reference. */
    public record Application(String application, Counts counts, long resumed, long journalFailures,
                              long unpersistable, long unreadable, String journal, List<Reference> references) {

        static Application of(LifecycleState s) {
            return new Application(s.application(), Counts.of(s.stats()), s.resumed(), s.journalFailures(),
                    s.unpersistable(), s.unreadable(), Redaction.redact(s.journal()),
                    s.references().stream().map(Reference::of).toList());
        }
    }

    /** One reference: pending calls, the oldest one's age, its retry budget and its counters. */
    public record Reference(String serviceKey, int pending, long oldestPendingAgeMillis, int waitingForBudget,
                            long parked, long budgetWaits, String budget, Counts counts) {

        static Reference of(ReferenceState r) {
            return new Reference(r.serviceKey(), r.pending(), r.oldestPendingAgeMillis(), r.waitingForBudget(),
                    r.parked(), r.budgetWaits(), r.budget(), Counts.of(r.stats()));
        }
    }

    /** Failed calls by what became of them: {@code failedCalls == delivered + abandoned + rejected + handedOver + pending}. */
    public record Counts(long failedCalls, long pending, long delivered, long abandoned, long rejected,
                         long handedOver, long retriesSent, long retriesFailed) {

        static Counts of(RetryStats s) {
            return new Counts(s.failedCalls(), s.pending(), s.delivered(), s.abandoned(), s.rejected(),
                    s.handedOver(), s.retriesSent(), s.retriesFailed());
        }
    }

    /** The shared timing wheel, as of its worker's last tick. */
    public record Wheel(long pending, long scheduled, long expired, long cancelled, long rejected,
                        long deferredHandOffs, long failedTasks, long ticks, double lastTickLagMillis,
                        double maxTickLagMillis) {

        static Wheel of(TimerStats w) {
            return new Wheel(w.pendingTimeouts(), w.scheduledTimeouts(), w.expiredTimeouts(), w.cancelledTimeouts(),
                    w.rejectedTimeouts(), w.deferredHandOffs(), w.failedTasks(), w.ticks(),
                    w.lastTickLagNanos() / 1e6, w.maxTickLagNanos() / 1e6);
        }
    }

    /** {@code GET /actuator/failback/calls/<retry.id>}: the recorded steps of one call, oldest first. */
    public record CallHistory(String retryId, List<Step> steps) {
    }

    /**
     * One step of a call.
     *
     * @param delayMillis for {@code SCHEDULED}, the delay until the retry; otherwise null
     */
    public record Step(String time, String type, String application, String reference, String method, int attempt,
                       String provider, Long delayMillis, String failure) {

        static Step of(String application, RetryStep s) {
            return new Step(Instant.ofEpochMilli(s.epochMillis()).toString(), s.type().name(), application,
                    s.serviceKey(), s.method(), s.attempt(), s.provider(),
                    s.delayMillis() > 0 ? s.delayMillis() : null, Redaction.redact(s.failure()));
        }
    }

    /** {@code GET /actuator/failback/dead}: one application's first page of dead letters, newest first. */
    public record DeadPage(String application, String kept, boolean durable, long total, long pages,
                           List<Dead> letters) {

        static DeadPage of(DeadLetters dead, DeadLetterPage page) {
            return new DeadPage(dead.application(), Redaction.redact(dead.describe()), dead.durable(), page.total(),
                    page.pages(), page.letters().stream().map(Dead::of).toList());
        }
    }

    /** One dead letter; times are ISO-8601 instants. */
    public record Dead(String retryId, String serviceKey, String method, int attempts, String firstFailure,
                       String lastFailure, String failure, String failureClass, String lastProvider) {

        static Dead of(DeadLetter l) {
            return new Dead(l.retryId(), l.serviceKey(), l.method(), l.attempts(),
                    Instant.ofEpochMilli(l.firstFailureEpochMillis()).toString(),
                    Instant.ofEpochMilli(l.lastFailureEpochMillis()).toString(), Redaction.redact(l.lastFailure()),
                    l.failureClass(), l.lastProvider());
        }
    }

    /** {@code GET /actuator/failback/dead/<retry.id>}: the dead letters with that id and the steps recorded of it. */
    public record DeadDetail(String application, List<Dead> letters, List<Step> steps) {

        static DeadDetail of(RetryLifecycle lifecycle, List<DeadLetterDetail> details) {
            List<Step> steps = details.get(0).history().stream().map(s -> Step.of(lifecycle.application(), s))
                    .toList();
            return new DeadDetail(lifecycle.application(), details.stream().map(d -> Dead.of(d.letter())).toList(),
                    steps);
        }
    }

    /** The answer of {@code POST /actuator/failback/dead/replay}: what went back, and why the rest stayed. */
    public record Replayed(String application, ReplayResult result) {
    }

    /** The answer of {@code POST /actuator/failback/dead/purge}. */
    public record Purged(String application, long purged) {
    }

    /** A refused request: the status, and the same words the QoS command answers. */
    public record Refusal(int status, String error) {
    }
}
