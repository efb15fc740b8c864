package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ConsumerChild} JVM started by a test: {@code java} from {@code java.home}, the test's own class path,
 * 127.0.0.1. It reads the child's protocol lines as they come and keeps, per {@code retry.id}, what the child
 * reported: whether it sent a retry of the call, the last step it printed, and the call's outcome. The child's
 * stderr (its logs) goes to {@code target/consumer-children/<name>.log}, its protocol lines to {@code <name>.out}.
 *
 * <pre>{@code
 * try (ConsumerProcess a = ConsumerProcess.start("a", zk, "app", 1000, "crash", params)) {
 *     a.awaitLine("SENT_ALL", Duration.ofSeconds(60));
 *     a.kill();                  // SIGKILL; or a.stop() for SIGTERM and a graceful stop
 * }                              // killed if still alive, even when the test failed
 * }</pre>
 *
 * <p><b>Threading:</b> one reader thread per process fills the state; the accessors are thread-safe.
 */
public final class ConsumerProcess implements AutoCloseable {

    private final String name;
    private final Process process;
    private final Thread reader;
    private final Path transcript;
    private final List<String> lines = new ArrayList<>(); // guarded by this
    private final Map<String, String> lastStep = new HashMap<>(); // guarded by this
    private final Map<String, Long> firstRetryReadNanos = new TreeMap<>(); // guarded by this
    private final Map<String, Set<Integer>> failedAttempts = new HashMap<>(); // guarded by this
    private final Map<String, List<String>> outcomes = new TreeMap<>(); // guarded by this
    private Map<String, Long> stats = Map.of(); // guarded by this
    private final Map<String, Long> maxStats = new HashMap<>(); // guarded by this

    private ConsumerProcess(String name, Process process, Path transcript) {
        this.name = name;
        this.process = process;
        this.transcript = transcript;
        this.reader = new Thread(this::read, "child-reader-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a child consumer.
     *
     * @param name       for logs and thread names, unique in the test
     * @param registry   the ZooKeeper address
     * @param application the Dubbo application name: its journal
     * @param calls      calls the child sends at start (0: it only resumes)
     * @param prefix     call ids are {@code prefix-0 ..}
     * @param parameters reference URL parameters
     */
    static ConsumerProcess start(String name, String registry, String application, int calls, String prefix,
                                 Map<String, String> parameters) throws IOException {
        List<String> args = new ArrayList<>(List.of(registry, application, String.valueOf(calls), prefix));
        parameters.forEach((k, v) -> args.add(k + "=" + v));
        return launch(name, ConsumerChild.class.getName(), args, Map.of());
    }

    /**
     * Starts a child JVM that speaks the {@link ConsumerChild#PREFIX} line protocol on stdout (at least
     * {@code READY}; {@code STATS key=value ...} lines are kept for {@link #stat}).
     *
     * @param name        for logs and thread names, unique in the test
     * @param mainClass   the child's main class, on the test's class path
     * @param args        its arguments
     * @param environment added to the child's environment (e.g. {@code LD_PRELOAD} of a clock shifter)
     */
    public static ConsumerProcess launch(String name, String mainClass, List<String> args,
                                         Map<String, String> environment) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-Ddubbo.application.logger=slf4j",
                "-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(args);
        Path logs = Path.of(System.getProperty("basedir", "."), "target", "consumer-children");
        Files.createDirectories(logs);
        ProcessBuilder builder = new ProcessBuilder(cmd).redirectError(logs.resolve(name + ".log").toFile());
        builder.environment().putAll(environment);
        return new ConsumerProcess(name, builder.start(), logs.resolve(name + ".out"));
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8));
             BufferedWriter copy = Files.newBufferedWriter(transcript, StandardCharsets.UTF_8)) {
            String l;
            while ((l = in.readLine()) != null) {
                copy.write(l);
                copy.newLine();
                if (l.startsWith(ConsumerChild.PREFIX)) {
                    took(l.substring(ConsumerChild.PREFIX.length()));
                }
            }
        } catch (IOException e) {
            // the pipe closes when the process dies: what it wrote before is read
        }
    }

    private synchronized void took(String l) {
        lines.add(l);
        String[] w = l.split(" ");
        if (w[0].equals("EVENT")) {
            lastStep.put(w[2], w[1]);
            if (w[1].equals("SENT")) {
                firstRetryReadNanos.putIfAbsent(w[2], System.nanoTime());
            } else if (w[1].equals("FAILED")) {
                failedAttempts.computeIfAbsent(w[2], k -> new TreeSet<>()).add(Integer.parseInt(w[3]));
            }
            if (List.of("DELIVERED", "ABANDONED", "REJECTED", "HANDED_OVER").contains(w[1])) {
                outcomes.computeIfAbsent(w[2], k -> new ArrayList<>()).add(w[1]);
            }
        } else if (w[0].equals("STATS")) {
            Map<String, Long> m = new LinkedHashMap<>();
            for (int i = 1; i < w.length; i++) {
                String[] kv = w[i].split("=");
                m.put(kv[0], Long.parseLong(kv[1]));
                maxStats.merge(kv[0], Long.parseLong(kv[1]), Math::max);
            }
            stats = m;
        }
    }

    /**
     * Waits for a line that starts with {@code start}.
     *
     * @return the line
     * @throws AssertionError if the process ended or {@code max} passed without it, with its last lines
     */
    public String awaitLine(String start, Duration max) {
        await().atMost(max).pollInterval(Duration.ofMillis(50))
                .failFast(() -> find(start) == null && !process.isAlive() && !reader.isAlive())
                .until(() -> find(start) != null);
        return find(start);
    }

    /**
     * Writes {@code command} to the child's stdin and waits for the first line starting with {@code answer} that the
     * child printed after it.
     *
     * @return the line
     * @throws AssertionError if the process ended or {@code max} passed without it
     */
    public String ask(String command, String answer, Duration max) throws IOException {
        int from;
        synchronized (this) {
            from = lines.size();
        }
        command(command);
        await().atMost(max).pollInterval(Duration.ofMillis(50))
                .failFast(() -> !process.isAlive() && !reader.isAlive() && findFrom(answer, from) == null)
                .until(() -> findFrom(answer, from) != null);
        return findFrom(answer, from);
    }

    private synchronized String findFrom(String start, int from) {
        return lines.subList(from, lines.size()).stream().filter(l -> l.startsWith(start)).findFirst().orElse(null);
    }

    private synchronized String find(String start) {
        return lines.stream().filter(l -> l.startsWith(start)).findFirst().orElse(null);
    }

    /**
     * SIGKILL (kill -9), then waits for the end and for every line the process wrote. Through the process handle:
     * {@code Process.destroyForcibly()} sends the same signal but also closes our end of the pipes, losing what the
     * process wrote and we had not read yet.
     */
    public void kill() throws InterruptedException {
        process.toHandle().destroyForcibly();
        ended();
    }

    /** SIGTERM: the child destroys its Dubbo application (pending retries HANDED_OVER) and exits. */
    public void stop() throws InterruptedException {
        process.toHandle().destroy();
        ended();
    }

    private void ended() throws InterruptedException {
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(name + " did not end within 60 s");
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
    }

    /** @return the exit value; only once ended */
    public int exitValue() {
        return process.exitValue();
    }

    /** @return the ids of the calls this process sent a retry of */
    synchronized Set<String> retried() {
        return new TreeSet<>(firstRetryReadNanos.keySet());
    }

    /**
     * @return retry id to when ({@link System#nanoTime()}) this test read the process's first SENT line for it: no
     *     earlier than the retry was sent
     */
    synchronized Map<String, Long> firstRetryReadNanos() {
        return new TreeMap<>(firstRetryReadNanos);
    }

    /** Writes one command line to the process's stdin ({@code send <n> <prefix>}, {@code stop}). */
    public void command(String line) throws IOException {
        process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().flush();
    }

    /** @return the ids whose last step printed was SENT: a retry in flight when the process ended */
    synchronized Set<String> inFlight() {
        Set<String> ids = new TreeSet<>();
        lastStep.forEach((id, step) -> {
            if (step.equals("SENT")) {
                ids.add(id);
            }
        });
        return ids;
    }

    /** @return whether this process reported retry {@code attempt} of {@code retryId} FAILED (e.g. timed out) */
    synchronized boolean failed(String retryId, int attempt) {
        return failedAttempts.getOrDefault(retryId, Set.of()).contains(attempt);
    }

    /** @return retry id to the outcome events this process printed for it */
    synchronized Map<String, List<String>> outcomes() {
        Map<String, List<String>> copy = new TreeMap<>();
        outcomes.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        return copy;
    }

    /** @return the value of {@code key} in the last STATS line; 0 for a missing key */
    public synchronized long stat(String key) {
        return stats.getOrDefault(key, 0L);
    }

    /**
     * @return the highest value of {@code key} in any STATS line: for the lifecycle's counters, which go with the
     *     lifecycle when the application stops
     */
    synchronized long maxStat(String key) {
        return maxStats.getOrDefault(key, 0L);
    }

    /** @return the last {@code n} lines, for failure messages */
    public synchronized List<String> tail(int n) {
        return List.copyOf(lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }

    /** @return the child's process id */
    public long pid() {
        return process.pid();
    }

    /** @return whether the child runs (a stopped, SIGSTOP-ed child counts as running) */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Sends a signal with {@code kill}, e.g. {@code STOP} (the child freezes: no thread runs, its sockets stay open)
     * or {@code CONT}; the JDK has no API for either.
     *
     * @throws IllegalStateException if {@code kill} fails
     */
    public void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid()))
                .redirectErrorStream(true).start();
        String said = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed: " + said);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "consumer process " + name + " (pid " + process.pid() + ")";
    }
}
