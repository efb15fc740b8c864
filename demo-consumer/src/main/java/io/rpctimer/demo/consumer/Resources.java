package io.rpctimer.demo.consumer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * What a run has started, to stop in reverse order — ZooKeeper first started, last stopped — from the run's own
 * thread or from a shutdown hook, whichever comes first. Once stopping has begun, whatever is still being started is
 * stopped as soon as it exists, and its starter gets {@link Stopping}.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class Resources {

    /** Thrown to a starter when the run is stopping. */
    static final class Stopping extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stopping() {
            super("stopping", null, false, false);
        }
    }

    private record Entry(String what, String name, AutoCloseable stop, boolean printed) {
    }

    private final Deque<Entry> started = new ArrayDeque<>(); // guarded by this
    private boolean stopping; // guarded by this

    /**
     * Starts something and keeps it for {@link #stopAll}.
     *
     * @param what   a word for the stop line, e.g. {@code provider}; null for no line
     * @param create starts it
     * @param name   its name for the stop line
     * @param stop   how to stop it
     * @return what {@code create} made
     * @throws Stopping if the run is stopping (what was made is stopped again)
     */
    <T> T start(String what, Supplier<T> create, Function<T, String> name, Function<T, AutoCloseable> stop) {
        checkNotStopping();
        T made = create.get();
        Entry e = new Entry(what, name.apply(made), stop.apply(made), what != null);
        synchronized (this) {
            if (!stopping) {
                started.push(e);
                return made;
            }
        }
        stopQuietly(e.stop);
        throw new Stopping();
    }

    /** @throws Stopping if the run is stopping */
    synchronized void checkNotStopping() {
        if (stopping) {
            throw new Stopping();
        }
    }

    /** Makes every later {@link #start} fail. Idempotent. */
    synchronized void beginStopping() {
        stopping = true;
    }

    /** Stops everything started, newest first, printing a line with its time for each that has a name. */
    void stopAll(Console console) {
        while (true) {
            Entry e;
            synchronized (this) {
                stopping = true;
                e = started.poll();
            }
            if (e == null) {
                return;
            }
            long t0 = System.nanoTime();
            try {
                e.stop.close();
                if (e.printed) {
                    console.line(String.format(Locale.ROOT, "  %-10s %-36s stopped in %s", e.what, e.name,
                            Human.duration(Duration.ofNanos(System.nanoTime() - t0))));
                }
            } catch (Exception failure) {
                console.line(String.format(Locale.ROOT, "  %-10s %-36s did not stop cleanly: %s", e.what, e.name,
                        FailureText.of(failure)));
            }
        }
    }

    private static void stopQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // stopping anyway
        }
    }

    /**
     * Deletes a directory and everything in it, e.g. a journal the demo made for one run.
     *
     * @throws IOException if something could not be deleted
     */
    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
