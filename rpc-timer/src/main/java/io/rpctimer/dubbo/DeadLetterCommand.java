package io.rpctimer.dubbo;

import io.rpctimer.retry.DeadLetterDetail;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetterWords;
import io.rpctimer.retry.DeadLetters;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.retry.RetryLifecycle;
import java.util.List;
import java.util.Set;

/**
 * The dead-letter forms of the QoS command {@code failback} ({@link FailbackCommand} hands them here):
 * <pre>
 *   failback dead [filter] [page=N] [size=N]     list, newest first (20 a page)
 *   failback dead &lt;retry.id&gt;                    one dead letter, with the steps this instance recorded
 *   failback replay &lt;retry.id|all|filter&gt; [rate=N]   make them pending again, at most N a second
 *   failback purge &lt;retry.id|all|filter&gt;        delete them (older=7d: those older than a week)
 * </pre>
 * A filter is {@code name=value} words: {@code service=}, {@code method=}, {@code failure=} (the last failure's class
 * name), {@code older=} and {@code newer=} (ages: {@code 30s}, {@code 10m}, {@code 7d}), {@code id=}; {@code app=}
 * picks one application of the framework (default: each). Every form needs Dubbo's {@code PROTECTED} level or above,
 * as a call's history does: dead letters name providers and carry failure messages, and replay and purge change them.
 *
 * <p>The answer is plain text with an HTTP status for Dubbo's HTTP front: 200, 400 for a bad argument (naming it and
 * its value), 403 without the permission, 404 for a {@code retry.id} no dead letter has, 409 for a replay whose
 * service has no live reference here, 503 when the store failed (naming it; nothing was changed). Plain JDK: no
 * Dubbo type, so that any Dubbo line's QoS front can use it.
 *
 * <p><b>Threading:</b> stateless; thread-safe. Blocks the QoS thread on the store.
 */
final class DeadLetterCommand {

    /** The sub-commands this class answers. */
    static final Set<String> COMMANDS = Set.of("dead", "replay", "purge");

    /** What the command answers, and the HTTP status that goes with it. */
    record Answer(String text, int httpCode) {
    }

    private DeadLetterCommand() {
    }

    /** @return whether {@code args} is a dead-letter form */
    static boolean handles(String[] args) {
        return args != null && args.length > 0 && COMMANDS.contains(args[0]);
    }

    /**
     * @param args       the command's arguments, {@code args[0]} one of {@link #COMMANDS}
     * @param lifecycles the applications of the framework the command runs in
     * @param permitted  whether the caller has {@code PROTECTED} or above
     */
    static Answer run(String[] args, List<RetryLifecycle> lifecycles, boolean permitted) {
        String command = args[0];
        if (!permitted) {
            return new Answer("Permission denied: 'failback " + command + "' requires PROTECTED"
                    + " (qos.anonymous.access.permission.level, or an address in qos.accept.foreign.ip.whitelist)",
                    403);
        }
        try {
            DeadLetterWords words = DeadLetterWords.read(args);
            List<String> parts = words.onEach(lifecycles, lifecycle -> text(words, lifecycle));
            return new Answer(parts.isEmpty() ? "no application with a wheelfailback reference"
                    : String.join("\n", parts), 200);
        } catch (IllegalArgumentException | IllegalStateException | RetryJournalException e) {
            return new Answer("failback " + command + ": " + DeadLetterWords.explain(e), DeadLetterWords.status(e));
        }
    }

    @SuppressWarnings("unchecked") // DeadLetterWords.apply says what each command returns
    private static String text(DeadLetterWords w, RetryLifecycle lifecycle) throws RetryJournalException {
        DeadLetters dead = lifecycle.deadLetters();
        Object result = w.apply(dead);
        return switch (w.command()) {
            case "dead" -> w.showsOne() ? DeadLetterReport.detail(dead, (List<DeadLetterDetail>) result, lifecycle)
                    : DeadLetterReport.page(dead, w.filter(), (DeadLetterPage) result);
            case "replay" -> DeadLetterReport.replay(dead, w.filter(), (ReplayResult) result);
            default -> DeadLetterReport.purged(dead, w.filter(), (Long) result);
        };
    }
}
