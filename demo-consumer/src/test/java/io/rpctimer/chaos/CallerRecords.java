package io.rpctimer.chaos;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The consumers' records of the chaos run, read back from each incarnation's file ({@link LoadLoop} and
 * {@link ChaosConsumer} wrote them): every call, what its caller was told, its handle's outcome, and the outcome
 * events each instance reported (including those of calls it adopted).
 *
 * <p><b>Threading:</b> read once after the run; not thread-safe.
 */
final class CallerRecords {

    /** One call as its caller recorded it. {@code told} is null when the process ended before the caller heard. */
    static final class Call {
        final String callId;
        final String instance;
        final ChaosService service;
        final String method;
        final String retryId;
        String told;
        String outcome; // the handle's: DELIVERED, ABANDONED, REJECTED, HANDED_OVER, FAILED; null if it never completed

        Call(String callId, String instance, ChaosService service, String method, String retryId) {
            this.callId = callId;
            this.instance = instance;
            this.service = service;
            this.method = method;
            this.retryId = retryId;
        }

        /** @return whether the caller was told the call was accepted: a reply, or the failback empty result */
        boolean accepted() {
            return "REPLY".equals(told) || "FAILED_BACK".equals(told);
        }
    }

    /** An outcome event an instance reported. */
    record Event(String instance, String type, String method, String retryId, int attempt) {
    }

    private final Map<String, Call> calls = new LinkedHashMap<>();
    private final Map<String, String> byMethodAndRetryId = new HashMap<>();
    private final List<Event> events = new ArrayList<>();

    /** Reads the files of {@code incarnations}. */
    static CallerRecords read(List<ChaosFleet.Incarnation> incarnations) throws IOException {
        CallerRecords r = new CallerRecords();
        for (ChaosFleet.Incarnation i : incarnations) {
            for (String[] f : RecordFile.read(i.records())) {
                r.take(i.instance(), f);
            }
        }
        return r;
    }

    private void take(String instance, String[] f) {
        switch (f[0]) {
            case "S" -> {
                calls.put(f[1], new Call(f[1], instance, ChaosService.valueOf(f[2]), f[3], f[4]));
                byMethodAndRetryId.put(f[3] + " " + f[4], f[1]);
            }
            case "T" -> calls.get(f[1]).told = f[2];
            case "O" -> calls.get(f[1]).outcome = f[2];
            case "E" -> events.add(new Event(instance, f[1], f[3], f[4], Integer.parseInt(f[5])));
            default -> throw new IllegalStateException("unknown record " + String.join(" ", f));
        }
    }

    /** @return every call, in the order the files list them */
    List<Call> calls() {
        return List.copyOf(calls.values());
    }

    /** @return call id to its outcome events, for every call that has some */
    Map<String, List<Event>> eventsByCall() {
        Map<String, List<Event>> out = new HashMap<>();
        for (Event e : events) {
            String id = byMethodAndRetryId.get(e.method() + " " + e.retryId());
            if (id != null) {
                out.computeIfAbsent(id, k -> new ArrayList<>()).add(e);
            }
        }
        return out;
    }
}
