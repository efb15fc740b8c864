package io.rpctimer.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A harness's child JVM on this JVM's class path, spoken to in lines: the parent writes commands to its standard
 * input, and reads the lines it prints on standard output; its standard error is appended to a log file. Each line
 * is handed to an optional listener as it arrives (on the reading thread), then queued for {@link #await}.
 *
 * <p><b>Threading:</b> {@link #send} and {@link #await} from one thread; the listener runs on the reader thread.
 */
public final class ChildJvm implements AutoCloseable {

    private final String name;
    private final Process process;
    private final PrintWriter in;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread reader;

    private ChildJvm(String name, Process process, Consumer<String> listener) {
        this.name = name;
        this.process = process;
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        this.reader = new Thread(() -> read(listener), "child-reader-" + name);
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /**
     * Starts {@code mainClass} in a new JVM (this JVM's {@code java} and class path).
     *
     * @param name     the child's name in messages
     * @param jvmArgs  JVM options, e.g. {@code -Xmx1g}
     * @param args     the program's arguments
     * @param log      the file its standard error is appended to
     * @param listener sees every line it prints, or null
     */
    public static ChildJvm start(String name, List<String> jvmArgs, Class<?> mainClass, List<String> args, Path log,
                                 Consumer<String> listener) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(args);
        try {
            Process p = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            return new ChildJvm(name, p, listener);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + e.getMessage(), e);
        }
    }

    private void read(Consumer<String> listener) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (listener != null) {
                    listener.accept(line);
                }
                lines.add(line);
            }
        } catch (IOException e) {
            // the child ended
        }
    }

    /** @return the child's process id */
    public long pid() {
        return process.pid();
    }

    /** Writes one command line to the child's standard input. */
    public void send(String line) {
        in.println(line);
    }

    /**
     * Waits for the next line that starts with {@code prefix}, skipping others.
     *
     * @return the line
     * @throws IllegalStateException if the child ended first or the time ran out
     */
    public String await(String prefix, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = lines.poll(Math.max(0, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200))),
                    TimeUnit.NANOSECONDS);
            if (line != null && line.startsWith(prefix)) {
                return line;
            }
            if (line == null && !process.isAlive() && lines.isEmpty() && !reader.isAlive()) {
                throw new IllegalStateException(name + " ended (exit " + process.exitValue() + ") before printing "
                        + prefix);
            }
            if (line == null && left <= 0) {
                throw new IllegalStateException(name + ": no line " + prefix + " within " + limit);
            }
        }
    }

    /** Kills the child at once (SIGKILL) and waits for it to end. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** Waits for the child to end by itself, then kills it if it has not. @return true if it ended by itself */
    public boolean awaitExit(Duration limit) throws InterruptedException {
        if (process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        kill();
        return false;
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }
}
