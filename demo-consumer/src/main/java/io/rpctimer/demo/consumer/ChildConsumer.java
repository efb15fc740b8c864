package io.rpctimer.demo.consumer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A standalone demo consumer ({@code consumer} subcommand) running as a child JVM of the {@code consumer-crash}
 * scenario: {@code java} from {@code java.home}, the launcher's own class path (the demo jar). Its stdout is relayed
 * to the launcher's console as it comes, each line marked {@code [n]}; timed lines are stamped again with the
 * launcher's clock, so both processes share one timeline; the child's own report is left out. From the relayed lines it keeps, per call id, the retry
 * events the child printed: which calls failed back, and each call's outcome. Its stderr goes to a file.
 *
 * <p>{@link #kill()} sends SIGKILL through the process handle: {@code Process.destroyForcibly()} would also close
 * our end of the pipe and lose the lines the child wrote last.
 *
 * <p><b>Threading:</b> one reader thread per child fills the state; the other methods are thread-safe.
 */
final class ChildConsumer implements AutoCloseable {

    private static final Pattern TIMED = Pattern.compile("^  \\d\\d:\\d\\d\\.\\d  (.*)$");
    private static final Pattern EVENT = Pattern.compile("^(c-\\d+)\\s+#\\d+\\s+\\S+\\s+(\\S+)");
    private static final String HEADER = "  time     ";
    /** The failed-attempt event, whose line the child prints with {@code --events retries}. */
    static final String FAILED = "failed";
    /** In a failed line: the consumer gave up waiting, and the provider may still complete the attempt. */
    private static final String TIMED_OUT = "timed out after";

    /**
     * What a child printed about the calls.
     *
     * @param failedBack ids with a {@code failed} line: the caller got null, or a retry failed
     * @param timedOut   ids with an attempt that timed out: one the provider may have completed all the same
     * @param outcomes   id to the first outcome printed for it (DELIVERED, ABANDONED, ...)
     */
    record Seen(Set<String> failedBack, Set<String> timedOut, Map<String, String> outcomes) {
    }

    private final int number;
    private final Console console;
    private final Process process;
    private final Thread reader;
    private final List<String> lines = new ArrayList<>(); // guarded by this
    private final Set<String> failed = new TreeSet<>(); // guarded by this
    private final Set<String> timedOut = new TreeSet<>(); // guarded by this
    private final Map<String, String> outcomes = new TreeMap<>(); // guarded by this
    private boolean skipReport; // read and written by the reader thread only

    private ChildConsumer(int number, Console console, Process process) {
        this.number = number;
        this.console = console;
        this.process = process;
        this.reader = new Thread(this::read, "consumer-" + number + "-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a child consumer.
     *
     * @param number   1 or 2: the mark of its relayed lines
     * @param console  where its lines are relayed
     * @param jvmFlags flags of the child JVM, e.g. {@code -Dkey=value}
     * @param args     arguments of the {@code consumer} subcommand
     * @param stderr   where its stderr goes
     * @throws IllegalStateException if it cannot be started
     */
    static ChildConsumer start(int number, Console console, List<String> jvmFlags, List<String> args, Path stderr) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), DemoLauncher.class.getName(), "consumer"));
        cmd.addAll(args);
        try {
            return new ChildConsumer(number, console, new ProcessBuilder(cmd).redirectError(stderr.toFile())
                    .start());
        } catch (IOException e) {
            throw new IllegalStateException("cannot start consumer process " + number + ": " + e.getMessage(), e);
        }
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String l;
            while ((l = in.readLine()) != null) {
                took(l);
            }
        } catch (IOException e) {
            // the pipe closes when the process dies: what it wrote before has been read
        }
    }

    private void took(String l) {
        Matcher timed = TIMED.matcher(l);
        String mark = "[" + number + "] ";
        if (timed.matches()) {
            String text = timed.group(1);
            console.timed(mark + text);
            Matcher event = EVENT.matcher(text);
            if (event.lookingAt()) {
                event(event.group(1), event.group(2), text.contains(TIMED_OUT));
            }
        } else if (l.startsWith(HEADER)) {
            console.line(HEADER + mark + l.substring(HEADER.length()));
        } else if (skipReport || l.equals("Report")) {
            skipReport = true; // the launcher's report, across both processes, stands for the child's own
        } else if (!l.isBlank()) { // blank lines separate the child's sections; the marks show where each begins
            console.line(l.startsWith("  ") ? "  " + mark + l.substring(2) : mark + l);
        }
        synchronized (this) {
            lines.add(l);
            notifyAll();
        }
    }

    private synchronized void event(String callId, String type, boolean timedOutAttempt) {
        if (type.equals(FAILED)) {
            failed.add(callId);
            if (timedOutAttempt) {
                timedOut.add(callId);
            }
        } else if (!type.equals("scheduled") && !type.equals("sent")) {
            outcomes.putIfAbsent(callId, type);
        }
    }

    /**
     * Waits for a line the pattern finds something in.
     *
     * @return the match, or empty if the child ended or {@code max} passed first
     */
    synchronized Optional<Matcher> awaitLine(Pattern pattern, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        for (int seen = 0; ; ) {
            for (; seen < lines.size(); seen++) {
                Matcher m = pattern.matcher(lines.get(seen));
                if (m.find()) {
                    return Optional.of(m);
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || !reader.isAlive()) {
                return Optional.empty();
            }
            TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
        }
    }

    /** SIGKILL ({@code kill -9}), then waits for its end and for every line it wrote. */
    void kill() throws InterruptedException {
        process.toHandle().destroyForcibly();
        awaitExit(Duration.ofSeconds(30));
    }

    /**
     * Waits for the child to end by itself, and for every line it wrote.
     *
     * @return its exit code, or empty if it still runs after {@code max}
     */
    Optional<Integer> awaitExit(Duration max) throws InterruptedException {
        if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
            return Optional.empty();
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
        return Optional.of(process.exitValue());
    }

    /** @return 1 or 2: the mark of its relayed lines */
    int number() {
        return number;
    }

    /** @return the process id */
    long pid() {
        return process.pid();
    }

    /** @return what it printed about the calls so far */
    synchronized Seen seen() {
        return new Seen(new TreeSet<>(failed), new TreeSet<>(timedOut), new TreeMap<>(outcomes));
    }

    /** @return how many calls have a {@code failed} line and no outcome yet: retries pending in this child */
    synchronized int pending() {
        Set<String> p = new TreeSet<>(failed);
        p.removeAll(outcomes.keySet());
        return p.size();
    }

    /** SIGTERM if it still runs (it stops its consumer gracefully), then SIGKILL if it does not end in 20 s. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.toHandle().destroy();
        try {
            process.waitFor(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (process.isAlive()) {
                process.toHandle().destroyForcibly();
            }
        }
    }
}
