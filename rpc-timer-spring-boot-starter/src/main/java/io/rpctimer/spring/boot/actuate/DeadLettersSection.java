package io.rpctimer.spring.boot.actuate;

import io.rpctimer.retry.DeadLetterDetail;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetterWords;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.spring.boot.actuate.FailbackViews.DeadDetail;
import io.rpctimer.spring.boot.actuate.FailbackViews.DeadPage;
import io.rpctimer.spring.boot.actuate.FailbackViews.Purged;
import io.rpctimer.spring.boot.actuate.FailbackViews.Refusal;
import io.rpctimer.spring.boot.actuate.FailbackViews.Replayed;
import java.util.List;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The dead letters of the context's applications ({@link io.rpctimer.retry.DeadLetters}), under the {@code failback}
 * endpoint:
 * <ul>
 *   <li>{@code GET /actuator/failback/dead}: each application's first page, newest first (20 a page);</li>
 *   <li>{@code GET /actuator/failback/dead/<retry.id>}: the dead letters with that id and the steps recorded of it
 *       (404 when no application has one);</li>
 *   <li>{@code POST /actuator/failback/dead/replay} and {@code POST /actuator/failback/dead/purge} with a JSON body
 *       {@code {"target": "<retry.id|all|filter words>", "rate": 50}}: the words of the QoS command
 *       {@code failback replay|purge}, checked by {@link DeadLetterWords} and refused in the same words, with the
 *       same HTTP status (400, 404, 409, 503).</li>
 * </ul>
 *
 * <p><b>Threading:</b> stateless; thread-safe. Blocks the request thread on the store.
 */
final class DeadLettersSection implements FailbackSection {

    static final String NAME = "dead";

    private final Lifecycles lifecycles;

    DeadLettersSection(Lifecycles lifecycles) {
        this.lifecycles = lifecycles;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Object list() {
        return answer(DeadLetterWords.read("dead"));
    }

    @Override
    public Object read(String retryId) {
        Object answer = answer(DeadLetterWords.read("dead", retryId));
        return answer instanceof WebEndpointResponse<?> r && r.getStatus() == 404 ? null : answer;
    }

    /**
     * @param action {@code replay} or {@code purge}; anything else is 404
     * @param target a {@code retry.id}, {@code all}, or filter words ({@code service=... older=1h}), space separated
     * @param rate   for {@code replay}, at most this many a second, or null for the retry budget's pace
     */
    @Override
    public Object write(String action, String target, String rate) {
        if (!action.equals("replay") && !action.equals("purge")) {
            return null;
        }
        try {
            return answer(DeadLetterWords.change(action, target, rate));
        } catch (IllegalArgumentException e) {
            return refuse(e);
        }
    }

    @SuppressWarnings("unchecked") // DeadLetterWords.apply says what each command returns
    private Object answer(DeadLetterWords w) {
        try {
            return w.onEach(lifecycles.current(), lifecycle -> {
                Object r = w.apply(lifecycle.deadLetters());
                return switch (w.command()) {
                    case "dead" -> w.showsOne() ? DeadDetail.of(lifecycle, (List<DeadLetterDetail>) r)
                            : DeadPage.of(lifecycle.deadLetters(), (DeadLetterPage) r);
                    case "replay" -> new Replayed(lifecycle.application(), (ReplayResult) r);
                    default -> new Purged(lifecycle.application(), (Long) r);
                };
            });
        } catch (IllegalArgumentException | IllegalStateException | RetryJournalException e) {
            return refuse(e);
        }
    }

    private static WebEndpointResponse<Refusal> refuse(Exception e) {
        int status = DeadLetterWords.status(e);
        return new WebEndpointResponse<>(new Refusal(status, Redaction.redact(DeadLetterWords.explain(e))), status);
    }
}
