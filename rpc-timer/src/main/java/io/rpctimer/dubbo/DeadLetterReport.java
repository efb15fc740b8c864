package io.rpctimer.dubbo;

import io.rpctimer.retry.DeadLetter;
import io.rpctimer.retry.DeadLetterDetail;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetters;
import io.rpctimer.retry.DurationText;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryLifecycle;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The text of the dead-letter forms of the QoS command {@code failback} ({@link DeadLetterCommand}): as
 * {@link FailbackReport}, one line per item, {@code key=value} pairs, times in ISO-8601.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class DeadLetterReport {

    private DeadLetterReport() {
    }

    static String page(DeadLetters dead, DeadLetterFilter filter, DeadLetterPage page) {
        StringBuilder out = new StringBuilder(header(dead)).append(": ").append(page.total())
                .append(" dead letters match ").append(filter).append(" (page ").append(page.page()).append(" of ")
                .append(page.pages()).append(", ").append(page.pageSize()).append(" a page, newest first); ")
                .append(kept(dead));
        for (DeadLetter l : page.letters()) {
            out.append("\n  ").append(line(l));
        }
        return out.toString();
    }

    static String detail(DeadLetters dead, List<DeadLetterDetail> details, RetryLifecycle lifecycle) {
        StringBuilder out = new StringBuilder(header(dead)).append(": ").append(kept(dead));
        for (DeadLetterDetail d : details) {
            out.append("\n  ").append(line(d.letter()));
        }
        String retryId = details.get(0).letter().retryId();
        return out.append("\nsteps this instance recorded of ")
                .append(FailbackReport.history(retryId, List.of(lifecycle))).toString();
    }

    static String replay(DeadLetters dead, DeadLetterFilter filter, ReplayResult r) {
        StringBuilder out = new StringBuilder(header(dead)).append(": replayed ").append(r.replayed()).append(" of ")
                .append(r.matched()).append(" dead letters matching ").append(filter).append(", ")
                .append(r.perSecond() > 0 ? String.format(Locale.ROOT, "at most %.1f a second and ", r.perSecond())
                        : "")
                .append("within each reference's retry budget");
        if (r.replayed() > 0) {
            out.append("; the last one's first retry is due at ").append(Instant.ofEpochMilli(r.lastDueEpochMillis()));
        }
        if (r.taken() + r.conflicts() + r.unreadable() + r.noRoom() > 0) {
            out.append("\n  left as dead letters: takenByAnotherReplayOrPurge=").append(r.taken())
                    .append(" aCallOfTheSameKeyPending=").append(r.conflicts())
                    .append(" unreadableByTheReference=").append(r.unreadable())
                    .append(" noRoomUnderFailbacktasks=").append(r.noRoom());
        }
        for (Map.Entry<String, Long> e : new TreeMap<>(r.noReference()).entrySet()) {
            out.append("\n  not replayed: ").append(e.getValue()).append(" of ").append(e.getKey())
                    .append(", which has no live reference on this instance (a replay decodes a call with its"
                            + " reference's serialization): replay them where one lives");
        }
        return out.toString();
    }

    static String purged(DeadLetters dead, DeadLetterFilter filter, long n) {
        return header(dead) + ": purged " + n + " dead letters matching " + filter;
    }

    private static String header(DeadLetters dead) {
        return "application " + dead.application();
    }

    private static String kept(DeadLetters dead) {
        return "kept in " + dead.describe() + ", for " + DurationText.format(dead.policy().retention())
                + ", at most " + dead.policy().max();
    }

    private static String line(DeadLetter l) {
        StringBuilder s = new StringBuilder("retry.id=").append(l.retryId()).append(" service=").append(l.serviceKey())
                .append(" method=").append(l.method()).append(" attempts=").append(l.attempts())
                .append(" firstFailure=").append(Instant.ofEpochMilli(l.firstFailureEpochMillis()))
                .append(" lastFailure=").append(Instant.ofEpochMilli(l.lastFailureEpochMillis()));
        if (l.lastProvider() != null) {
            s.append(" provider=").append(l.lastProvider());
        }
        if (l.payloadBytes() >= 0) {
            s.append(" bytes=").append(l.payloadBytes());
        }
        if (l.lastFailure() != null) {
            s.append(" failure=").append(l.lastFailure());
        }
        return s.toString();
    }
}
