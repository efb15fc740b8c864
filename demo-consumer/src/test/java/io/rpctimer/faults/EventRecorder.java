package io.rpctimer.faults;

import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * Every {@code wheelfailback} event of the demo's {@link NotificationService}, in arrival order.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class EventRecorder implements RetryListener {

    private static final String SERVICE = NotificationService.class.getName();

    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();

    @Override
    public void onEvent(RetryEvent event) {
        if (SERVICE.equals(event.service())) {
            events.add(event);
        }
    }

    /** @return the events of {@code type} */
    List<RetryEvent> of(RetryEvent.Type type) {
        return events.stream().filter(e -> e.type() == type).toList();
    }

    /** @return the outcome events (DELIVERED, ABANDONED, REJECTED, HANDED_OVER) */
    List<RetryEvent> outcomes() {
        return events.stream().filter(RetryEvent::isOutcome).toList();
    }

    /** @return retry ids with more than one outcome event, and how many each had */
    Map<String, Long> idsWithSeveralOutcomes() {
        return outcomes().stream().collect(Collectors.groupingBy(RetryEvent::retryId, Collectors.counting()))
                .entrySet().stream().filter(e -> e.getValue() > 1)
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    /** @return all events so far */
    List<RetryEvent> all() {
        return List.copyOf(events);
    }
}
