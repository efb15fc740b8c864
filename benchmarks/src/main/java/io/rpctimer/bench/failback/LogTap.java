package io.rpctimer.bench.failback;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Takes over {@code System.err}, where slf4j-simple writes every log line of Dubbo, ZooKeeper and rpc-timer: the lines
 * go to a log file instead of the terminal, and the lines that mark what Dubbo's failback did to a failed call are
 * counted. Dubbo's failback tells nobody but its log, so its log is the only record of a retry dropped at the pending
 * cap or abandoned after its retries.
 *
 * <p>slf4j-simple looks {@code System.err} up at every line (its default, uncached {@code System.err} target), so the
 * tap sees every line logged after {@link #install}.
 *
 * <p><b>Threading:</b> thread-safe: {@code PrintStream} serialises writers; counters are atomic.
 */
final class LogTap implements AutoCloseable {

    /** A kind of log line, and the text that identifies it. */
    enum Marker {
        /** Dubbo's failback caught a failed call and will retry it in the background. */
        DUBBO_FAILED_BACK("wait for retry in background"),
        /** Dubbo's failback could not put the retry on its timer: the pending cap (failbacktasks) was reached. */
        DUBBO_DROPPED_AT_CAP("Failback background works error"),
        /** A Dubbo timer task threw: a failed retry that could not be put back (cap reached), among others. */
        DUBBO_TASK_THREW("An exception was thrown by TimerTask"),
        /** A retry of Dubbo's failback failed; it goes back on the timer unless its retries are spent. */
        DUBBO_RETRY_FAILED("waiting again."),
        /** Dubbo's failback gave a call up after its retries. */
        DUBBO_ABANDONED("We have to abandon");

        final String text;

        Marker(String text) {
            this.text = text;
        }
    }

    private final PrintStream original;
    private final PrintStream file;
    private final AtomicLongArray counts = new AtomicLongArray(Marker.values().length);

    private LogTap(PrintStream original, PrintStream file) {
        this.original = original;
        this.file = file;
    }

    /**
     * Redirects {@code System.err} into {@code logFile} (truncated), counting marker lines.
     *
     * @throws IOException if the file cannot be opened
     */
    static LogTap install(Path logFile) throws IOException {
        PrintStream file = new PrintStream(Files.newOutputStream(logFile), true, StandardCharsets.UTF_8);
        LogTap tap = new LogTap(System.err, file);
        System.setErr(new PrintStream(tap.new LineSplitter(), true, StandardCharsets.UTF_8));
        return tap;
    }

    /** @return the counts so far, by marker */
    Map<Marker, Long> counts() {
        Map<Marker, Long> m = new EnumMap<>(Marker.class);
        for (Marker k : Marker.values()) {
            m.put(k, counts.get(k.ordinal()));
        }
        return m;
    }

    /** @return {@code after - before}, by marker */
    static Map<Marker, Long> delta(Map<Marker, Long> before, Map<Marker, Long> after) {
        Map<Marker, Long> m = new EnumMap<>(Marker.class);
        for (Marker k : Marker.values()) {
            m.put(k, after.getOrDefault(k, 0L) - before.getOrDefault(k, 0L));
        }
        return m;
    }

    /** @return the stream {@code System.err} was before the tap, for messages meant for the terminal */
    PrintStream terminal() {
        return original;
    }

    /** Puts {@code System.err} back and closes the file. */
    @Override
    public void close() {
        System.setErr(original);
        file.close();
    }

    private void line(String line) {
        file.println(line);
        for (Marker k : Marker.values()) {
            if (line.contains(k.text)) {
                counts.incrementAndGet(k.ordinal());
            }
        }
    }

    /** Assembles bytes into lines; only ever called under the owning PrintStream's lock. */
    private final class LineSplitter extends OutputStream {
        private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(256);

        @Override
        public void write(int b) {
            if (b == '\n') {
                line(buffer.toString(StandardCharsets.UTF_8));
                buffer.reset();
            } else {
                buffer.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            int start = off;
            for (int i = off; i < off + len; i++) {
                if (b[i] == '\n') {
                    buffer.write(b, start, i - start);
                    line(buffer.toString(StandardCharsets.UTF_8));
                    buffer.reset();
                    start = i + 1;
                }
            }
            buffer.write(b, start, off + len - start);
        }
    }
}
