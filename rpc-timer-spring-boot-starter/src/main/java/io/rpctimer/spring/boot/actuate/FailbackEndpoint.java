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

/**
 * The Actuator endpoint {@code failback}: what the QoS command {@code failback} shows, as JSON.
 * <ul>
 *   <li>{@code GET /actuator/failback}: per application its counters and journal, per reference the pending
 *       retries, the oldest one's age, the budget and the counters; then the shared wheel;</li>
 *   <li>{@code GET /actuator/failback/calls/<retry.id>}: one call's history ({@link CallHistorySection}).</li>
 * </ul>
 * Every path below the endpoint is a {@link FailbackSection} bean, found by its name; an unknown section, or an
 * unknown item, answers 404.
 *
 * <p>Read-only, and not exposed over HTTP unless the application lists it in
 * {@code management.endpoints.web.exposure.include}. A call's history names providers and failure messages: protect
 * the endpoint as the other Actuator endpoints are protected.
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
}
