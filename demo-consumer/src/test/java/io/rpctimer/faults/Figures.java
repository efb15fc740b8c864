package io.rpctimer.faults;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.dubbo.common.Version;
import org.junit.jupiter.api.function.Executable;

/**
 * Records a scenario run's figures for docs/reliability.md ({@code target/reliability/<id>.json}), whether its
 * assertions pass or not: a failed run is recorded as failed, so the generated tables never show stale figures as
 * passing.
 *
 * <p><b>Threading:</b> use from the test thread.
 */
final class Figures {

    private final int section;
    private final int order;
    private final String id;
    private final String variant;
    private final String fault;
    private final Map<String, Object> extra = new LinkedHashMap<>();

    private Figures(int section, int order, String id, String variant, String fault) {
        this.section = section;
        this.order = order;
        this.id = id;
        this.variant = variant;
        this.fault = fault;
    }

    /**
     * @param section the scenario's number in docs/reliability.md (1..12)
     * @param order   the row's place in the scenario's table
     * @param id      the file name, unique across the suite
     * @param variant the row's name, e.g. {@code sync callers}
     * @param fault   what was injected, in a few words
     */
    static Figures of(int section, int order, String id, String variant, String fault) {
        return new Figures(section, order, id, variant, fault);
    }

    /** Adds a figure of the scenario's own (kept in the JSON file). */
    Figures put(String key, Object value) {
        extra.put(key, value);
        return this;
    }

    /**
     * Runs {@code assertions}, then records the run's figures with its status, and rethrows a failure.
     *
     * @param notes what the run showed, in a sentence or two, for the notes under the table
     */
    void check(FaultRig.Outcome outcome, String notes, Executable assertions) throws Throwable {
        check(outcome.figures(), notes, assertions);
    }

    /**
     * As {@link #check(FaultRig.Outcome, String, Executable)}, for a run whose account is not one in-process
     * consumer's (e.g. two consumer processes): {@code figures} has the keys of {@link FaultRig.Outcome#figures()}.
     */
    void check(Map<String, Object> figures, String notes, Executable assertions) throws Throwable {
        String status = "passed";
        try {
            assertions.execute();
        } catch (Throwable t) {
            String first = String.valueOf(t.getMessage()).lines().findFirst().orElse("");
            status = "FAILED: " + (first.length() > 300 ? first.substring(0, 300) + "..." : first);
            throw t;
        } finally {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("section", section);
            m.put("order", order);
            m.put("variant", variant);
            m.put("fault", fault);
            m.put("status", status);
            m.putAll(figures);
            m.putAll(extra);
            m.put("notes", notes);
            m.put("finishedAt", LocalDateTime.now().withNano(0).format(DateTimeFormatter.ISO_LOCAL_DATE_TIME));
            m.put("dubbo", Version.getVersion());
            m.put("machine", Runtime.getRuntime().availableProcessors() + " cores, Java "
                    + System.getProperty("java.version") + ", " + System.getProperty("os.name"));
            ReliabilityReport.write(dir(), id, m);
        }
    }

    static Path dir() {
        return Path.of(System.getProperty("basedir", "."), "target", "reliability");
    }
}
