package io.rpctimer.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * What the providers of the chaos run received, one {@link Invocation} per invocation, in the test JVM where they run
 * (filled by {@link ProviderRecordFilter}): kept in memory for the checks, and appended to a file for a reader.
 *
 * <p><b>Threading:</b> thread-safe; provider threads record concurrently.
 */
final class ProviderRecords {

    /** An invocation as it arrived, before deduplication. */
    record Received(long receivedMillis, String provider, ChaosService service, String method, String callId,
                    String retryId, int attempt, String sender) {
    }

    /**
     * One invocation a provider received and how it ended there.
     *
     * @param verdict what {@code retrydedup}'s store decided of it
     * @param result  {@code OK}, or how it failed ({@code THROWN:InjectedRpcException}, {@code FAILED:...},
     *                {@code EXC:...})
     */
    record Invocation(Received received, VerdictStore.Verdict verdict, String result) {

        /** @return whether the service ran it to a normal end: let through by deduplication, and answered */
        boolean executed() {
            return result.equals("OK") && (verdict == VerdictStore.Verdict.CLAIMED
                    || verdict == VerdictStore.Verdict.STORE_FAILED || verdict == VerdictStore.Verdict.NONE);
        }

        /** @return whether the service was called with it (it may have thrown): deduplication let it through */
        boolean ran() {
            return verdict == VerdictStore.Verdict.CLAIMED || verdict == VerdictStore.Verdict.STORE_FAILED
                    || verdict == VerdictStore.Verdict.NONE;
        }

        /** @return whether it ran although the dedup store failed to claim it (retrydedup's unprotected run) */
        boolean unprotected() {
            return verdict == VerdictStore.Verdict.STORE_FAILED;
        }

        /** @return whether deduplication answered it as done before: it would have run again without it */
        boolean suppressed() {
            return verdict == VerdictStore.Verdict.ALREADY_DONE;
        }
    }

    private static final ConcurrentLinkedQueue<Invocation> ALL = new ConcurrentLinkedQueue<>();
    private static volatile RecordFile file;

    private ProviderRecords() {
    }

    /** Forgets what was recorded and appends what comes next to {@code path}. */
    static synchronized void start(Path path) throws IOException {
        ALL.clear();
        VerdictStore.clear();
        file = new RecordFile(path);
    }

    /** Stops appending to the file; the records stay for the checks. */
    static synchronized void stop() throws IOException {
        RecordFile f = file;
        file = null;
        if (f != null) {
            f.close();
        }
    }

    static void record(Received r, VerdictStore.Verdict verdict, String result) {
        ALL.add(new Invocation(r, verdict, result));
        RecordFile f = file;
        if (f != null) {
            try {
                f.append(r.receivedMillis(), r.provider(), r.service(), r.method(), r.callId(), r.retryId(),
                        r.attempt(), r.sender(), verdict, result);
            } catch (java.io.UncheckedIOException e) {
                if (file == f) {
                    throw e;
                } // else the run stopped the file while this invocation ended: it is in memory
            }
        }
    }

    /** @return every invocation recorded since {@link #start}, in the order they ended */
    static List<Invocation> all() {
        return List.copyOf(ALL);
    }
}
