package io.rpctimer.spring.boot.actuate;

import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.spring.boot.actuate.FailbackViews.Application;
import io.rpctimer.spring.boot.actuate.FailbackViews.Overview;
import io.rpctimer.spring.boot.actuate.FailbackViews.Wheel;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.lang.Nullable;

/**
 * The Actuator endpoint {@code failback}: what the QoS command {@code failback} shows, as JSON.
 * <ul>
 *   <li>{@code GET /actuator/failback}: per application its counters and journal, per reference the pending
 *       retries, the oldest one's age, the budget and the counters; then the shared wheel;</li>
 *   <li>{@code GET /actuator/failback/calls/<retry.id>}: one call's history ({@link CallHistorySection});</li>
 *   <li>{@code GET /actuator/failback/dead}, {@code GET /actuator/failback/dead/<retry.id>}, and
 *       {@code POST /actuator/failback/dead/replay|purge}: the dead letters ({@link DeadLettersSection}).</li>
 * </ul>
 * Every path below the endpoint is a {@link FailbackSection} bean, found by its name; an unknown section, or an
 * unknown item, answers 404.
 *
 * <p>Not exposed over HTTP unless the application lists it in {@code management.endpoints.web.exposure.include}.
 * Replay and purge change the dead letters, and a call's history names providers and failure messages: protect the
 * endpoint as the other Actuator endpoints are protected (Spring Security).
 *
 * <p><b>Threading:</b> thread-safe; each read takes fresh snapshots.
 */
@Endpoint(id = FailbackEndpoint.ID)
public class FailbackEndpoint {

    public static final String ID = "failback";

    private final Lifecycles lifecycles;
    private final Map<String, FailbackSection> sections = new LinkedHashMap<>();

    FailbackEndpoint(Lifecycles lifecycles, List<FailbackSection> sections) {
        this.lifecycles = lifecycles;
        for (FailbackSection s : sections) {
            if (this.sections.putIfAbsent(s.name(), s) != null) {
                throw new IllegalArgumentException("sections: two named " + s.name() + " (expected: distinct names)");
            }
        }
    }

    @ReadOperation
    public Overview overview() {
        List<Application> applications = lifecycles.current().stream().map(RetryLifecycle::state)
                .map(Application::of).toList();
        return new Overview(applications, WheelFailback.wheelStats().map(Wheel::of).orElse(null));
    }

    /** @return the section's listing, or null (404) for an unknown section or one without a listing */
    @ReadOperation
    public Object section(@Selector String section) {
        FailbackSection s = sections.get(section);
        return s == null ? null : s.list();
    }

    /** @return the section's item, or null (404) */
    @ReadOperation
    public Object item(@Selector String section, @Selector String id) {
        FailbackSection s = sections.get(section);
        return s == null ? null : s.read(id);
    }

    /**
     * @param target the operator's words: a {@code retry.id}, {@code all}, or filter words
     * @param rate   for a replay, at most this many a second; null for the retry budget's pace
     * @return the section's answer, or 404 for an unknown section or action
     */
    @WriteOperation
    public Object write(@Selector String section, @Selector String action, @Nullable String target,
                        @Nullable String rate) {
        FailbackSection s = sections.get(section);
        Object answer = s == null ? null : s.write(action, target, rate);
        // a write operation's null is 204: an unknown section or action is not found
        return answer == null ? new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND) : answer;
    }
}
