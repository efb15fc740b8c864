package io.rpctimer.spring.boot.actuate;

import io.rpctimer.retry.LifecycleState;
import io.rpctimer.retry.ReferenceState;
import io.rpctimer.retry.RetryLifecycle;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;

/**
 * The health contributor {@code failback}, from each retry lifecycle of the context's Dubbo application:
 * <ul>
 *   <li>{@code DOWN} while a retry journal is failing: its description says {@code failing: <error>} (from a failed
 *       commit until one succeeds again), or its application counted a journal failure within the last
 *       {@code rpc-timer.health.journal-failure-window} (a write that timed out, a writer that stopped). Failed calls
 *       then go on in memory only, and are lost if the process dies;</li>
 *   <li>otherwise the configured late status ({@code rpc-timer.health.late-status}, {@code DEGRADED} by default) while
 *       a pending retry's call has been failing for longer than {@code rpc-timer.health.max-pending-age};</li>
 *   <li>otherwise {@code UP}, also when the application has no {@code wheelfailback} reference.</li>
 * </ul>
 * Details per application: the journal's description (redacted), its failures so far, pending calls, the oldest one's
 * age, and the references whose oldest call is late.
 *
 * <p><b>Threading:</b> thread-safe; each call takes fresh snapshots.
 */
public class FailbackHealthIndicator implements HealthIndicator {

    /** The text a retry journal's description carries while its commits fail ({@code RetryJournal.describe()}). */
    static final String JOURNAL_FAILING = "failing: ";

    private final Lifecycles lifecycles;
    private final long maxPendingAgeMillis;
    private final Status lateStatus;
    private final JournalFailures journalFailures;

    FailbackHealthIndicator(Lifecycles lifecycles, Duration maxPendingAge, Status lateStatus,
                            JournalFailures journalFailures) {
        this.lifecycles = lifecycles;
        this.maxPendingAgeMillis = maxPendingAge.toMillis();
        this.lateStatus = lateStatus;
        this.journalFailures = journalFailures;
    }

    @Override
    public Health health() {
        boolean failing = false;
        boolean late = false;
        Map<String, Object> applications = new LinkedHashMap<>();
        for (RetryLifecycle lifecycle : lifecycles.current()) {
            LifecycleState s = lifecycle.state();
            Map<String, Long> lateReferences = new LinkedHashMap<>();
            long oldest = 0;
            for (ReferenceState r : s.references()) {
                oldest = Math.max(oldest, r.oldestPendingAgeMillis());
                if (r.oldestPendingAgeMillis() > maxPendingAgeMillis) {
                    lateReferences.put(r.serviceKey(), r.oldestPendingAgeMillis());
                }
            }
            // not ||: every read must record the failure count, whatever the description says
            failing |= s.journal().contains(JOURNAL_FAILING)
                    | journalFailures.recent(s.application(), s.journalFailures());
            late |= !lateReferences.isEmpty();
            applications.put(s.application(), details(s, oldest, lateReferences));
        }
        Status status = failing ? Status.DOWN : late ? lateStatus : Status.UP;
        return Health.status(status).withDetail("maxPendingAgeMillis", maxPendingAgeMillis)
                .withDetail("applications", applications).build();
    }

    private static Map<String, Object> details(LifecycleState s, long oldest, Map<String, Long> lateReferences) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("journal", Redaction.redact(s.journal()));
        d.put("journalFailures", s.journalFailures());
        d.put("pending", s.stats().pending());
        d.put("oldestPendingAgeMillis", oldest);
        d.put("lateReferences", lateReferences);
        return d;
    }
}
