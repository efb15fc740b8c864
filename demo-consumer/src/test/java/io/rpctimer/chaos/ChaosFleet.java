package io.rpctimer.chaos;

import io.rpctimer.faults.ConsumerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The chaos run's consumer fleet: slots c1..cN, each running one {@link ChaosConsumer} JVM at a time. A slot's
 * starts are its incarnations, {@code c2.1}, {@code c2.2}, ...: each is a sender of its own (a restarted process is a
 * new instance with a new journal owner id) and has its own record file. Faults act on a slot's current incarnation.
 *
 * <p><b>Threading:</b> thread-safe; faults on different slots run concurrently, each slot's one at a time
 * ({@link Slot} is locked by the fault schedule).
 */
final class ChaosFleet implements AutoCloseable {

    /** libfaketime as Debian's {@code faketime} package installs it. */
    static final Path FAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");
    /** How long a start may take: about 10 s on an idle machine, minutes at a load average of 30 on 2 cores. */
    private static final Duration START = Duration.ofMinutes(5);

    /**
     * One incarnation of a slot.
     *
     * @param ended how it ended: {@code KILLED}, {@code STOPPED}, {@code STOP_TIMED_OUT} (killed after a graceful stop
     *              took too long), {@code NEVER_READY} (killed: it did not start in time), or null while it runs
     * @param measuredSkewMillis its clock minus the test's, read at its start (libfaketime's effect)
     */
    record Incarnation(String instance, Path records, long skewMillis, long measuredSkewMillis, String ended) {
    }

    /** A consumer slot. Lock it around a fault. */
    final class Slot {
        final String name;
        private int starts;
        private ConsumerProcess process;
        private Incarnation current;

        private Slot(String name) {
            this.name = name;
        }

        synchronized ConsumerProcess process() {
            return process;
        }

        /** @return whether an incarnation runs (a frozen one counts) */
        private static final int START_TRIES = 3;

        synchronized boolean running() {
            return process != null && process.isAlive();
        }

        synchronized Incarnation current() {
            return current;
        }

        /**
         * Starts the next incarnation, its clock shifted by {@code skewMillis}, and waits until it is ready. A consumer
         * starts while its journal's database is down (the journal opens once it answers); an incarnation that ends
         * before it is ready for any other reason is followed by another, {@value #START_TRIES} in all.
         */
        synchronized void start(long skewMillis) throws IOException {
            for (int tries = 1; ; tries++) {
                try {
                    startOnce(skewMillis);
                    return;
                } catch (AssertionError | RuntimeException notReady) {
                    if (tries == START_TRIES) {
                        throw notReady;
                    }
                    FaultRunner.hold(Duration.ofSeconds(2));
                }
            }
        }

        private void startOnce(long skewMillis) throws IOException {
            String instance = name + "." + (++starts);
            Path file = recordsDir.resolve(instance + ".records");
            List<String> args = new ArrayList<>(List.of(registry, application, instance, file.toString(),
                    String.valueOf(seed * 31 + instance.hashCode()), String.valueOf(callsPerSecond)));
            parameters.forEach((k, v) -> args.add(k + "=" + v));
            process = ConsumerProcess.launch("chaos-" + instance, ChaosConsumer.class.getName(), args,
                    skewMillis == 0 ? Map.of() : faketime(skewMillis));
            String ready;
            try {
                ready = process.awaitLine("READY", START);
            } catch (AssertionError | RuntimeException notReady) {
                process.close(); // killed: its records say what it did before
                process = null;
                incarnations.add(new Incarnation(instance, file, skewMillis, 0, "NEVER_READY"));
                throw notReady;
            }
            long measured = Long.parseLong(ready.substring(ready.indexOf("epochMillis=") + 12))
                    - System.currentTimeMillis();
            current = new Incarnation(instance, file, skewMillis, measured, null);
            incarnations.add(current);
        }

        /** Ends the current incarnation: {@code kill -9}, or SIGTERM for a graceful stop. */
        synchronized void end(boolean graceful) throws InterruptedException, IOException {
            if (process == null || current == null) {
                return;
            }
            String how = graceful ? "STOPPED" : "KILLED";
            try {
                if (graceful) {
                    process.stop();
                } else {
                    process.kill();
                }
            } catch (AssertionError slow) {
                how = "STOP_TIMED_OUT"; // ConsumerProcess killed it: what it had not handed over is in the journal
                System.err.println("chaos: " + slow.getMessage());
            }
            Incarnation ended = new Incarnation(current.instance(), current.records(), current.skewMillis(),
                    current.measuredSkewMillis(), how);
            incarnations.set(incarnations.indexOf(current), ended);
            process = null;
            current = null;
        }
    }

    private final String registry;
    private final String application;
    private final Path recordsDir;
    private final long seed;
    private final int callsPerSecond;
    private final Map<String, String> parameters;
    private final List<Slot> slots = new ArrayList<>();
    private final List<Incarnation> incarnations = new CopyOnWriteArrayList<>();

    ChaosFleet(String registry, String application, Path recordsDir, long seed, int callsPerSecond,
               Map<String, String> parameters) throws IOException {
        this.registry = registry;
        this.application = application;
        this.recordsDir = Files.createDirectories(recordsDir);
        this.seed = seed;
        this.callsPerSecond = callsPerSecond;
        this.parameters = Map.copyOf(parameters);
    }

    private static Map<String, String> faketime(long skewMillis) {
        if (!Files.exists(FAKETIME)) {
            throw new IllegalStateException("clock skew needs libfaketime at " + FAKETIME
                    + " (Debian: apt-get install -y faketime)");
        }
        Map<String, String> env = new HashMap<>();
        env.put("LD_PRELOAD", FAKETIME.toString());
        // the monotonic clock moves by the same constant, which nothing reads but as differences; with
        // FAKETIME_DONT_FAKE_MONOTONIC=1 every timed wait of the JVM overslept about tenfold (a 200 ms sleep took 2.6 s)
        env.put("FAKETIME", String.format("%+.3fs", skewMillis / 1000.0));
        return env;
    }

    /** Starts slots c1..c{@code n} in parallel, each unskewed. */
    void start(int n) throws IOException {
        for (int i = 1; i <= n; i++) {
            slots.add(new Slot("c" + i));
        }
        List<CompletableFuture<Void>> starting = new ArrayList<>();
        for (Slot s : slots) {
            starting.add(CompletableFuture.runAsync(() -> {
                try {
                    s.start(0);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }));
        }
        starting.forEach(CompletableFuture::join);
    }

    /** @return slot {@code name} ({@code c1}...) */
    Slot slot(String name) {
        return slots.stream().filter(s -> s.name.equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("slot: " + name));
    }

    List<Slot> slots() {
        return List.copyOf(slots);
    }

    /** @return every incarnation so far, in the order they started */
    List<Incarnation> incarnations() {
        return List.copyOf(incarnations);
    }

    /** Kills what still runs (SIGKILL). */
    @Override
    public void close() {
        for (Slot s : slots) {
            ConsumerProcess p = s.process();
            if (p != null) {
                p.close();
            }
        }
    }
}
