package io.rpctimer.spring.boot.actuate;

import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.spring.boot.actuate.FailbackViews.CallHistory;
import io.rpctimer.spring.boot.actuate.FailbackViews.Step;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code GET /actuator/failback/calls/<retry.id>}: the recorded steps of one call (scheduled, sent, failed, and its
 * outcome), from every lifecycle of the context that has some. Each application keeps only its last 4096 steps, so
 * an unknown id and an old one both answer 404.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class CallHistorySection implements FailbackSection {

    static final String NAME = "calls";

    private final Lifecycles lifecycles;

    CallHistorySection(Lifecycles lifecycles) {
        this.lifecycles = lifecycles;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public CallHistory read(String retryId) {
        List<Step> steps = new ArrayList<>();
        for (RetryLifecycle lifecycle : lifecycles.current()) {
            lifecycle.history(retryId).forEach(s -> steps.add(Step.of(lifecycle.application(), s)));
        }
        return steps.isEmpty() ? null : new CallHistory(retryId, steps);
    }
}
