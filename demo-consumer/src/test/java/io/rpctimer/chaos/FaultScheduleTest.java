package io.rpctimer.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class FaultScheduleTest {

    private static final FaultSchedule.Settings SHORT = new FaultSchedule.Settings(Duration.ofMinutes(1), 3,
            Duration.ofSeconds(30), Duration.ofSeconds(10), 24_000);

    @Test
    void theSameSeedDrawsTheSameSchedule() {
        assertEquals(FaultSchedule.draw(42, SHORT).faults(), FaultSchedule.draw(42, SHORT).faults());
    }

    @Test
    void aShortRunInjectsEveryKind() {
        for (long seed = 0; seed < 50; seed++) {
            Set<Fault.Kind> kinds = FaultSchedule.draw(seed, SHORT).faults().stream().map(Fault::kind)
                    .collect(Collectors.toSet());
            assertEquals(Set.of(Fault.Kind.values()), kinds, "seed " + seed);
        }
    }

    @Test
    void aTargetHasOneFaultAtATime() {
        for (long seed = 0; seed < 50; seed++) {
            Map<String, Duration> freeAt = new HashMap<>();
            for (Fault f : FaultSchedule.draw(seed, SHORT).faults()) {
                Duration free = freeAt.getOrDefault(f.target(), Duration.ZERO);
                assertTrue(f.at().compareTo(free) >= 0, "seed " + seed + ": " + f + " overlaps the last fault");
                freeAt.put(f.target(), f.end());
            }
        }
    }

    @Test
    void aPauseOutlastsTheLeaseAndTheNextClaim() {
        List<Fault> pauses = FaultSchedule.draw(7, SHORT).faults().stream()
                .filter(f -> f.kind() == Fault.Kind.PAUSE).toList();
        assertTrue(!pauses.isEmpty());
        pauses.forEach(p -> assertTrue(p.holds().compareTo(Duration.ofSeconds(40)) > 0, p.toString()));
    }
}
