package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.DeadLetter;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetters;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryJournalException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The last act of the {@code dead-letters} scenario. The consumer keeps its failed calls in an embedded journal in a
 * temporary directory, so the calls abandoned during the outage stay there as dead letters. Once every call has its
 * outcome and the providers are back, this replays every dead letter as an operator would, with the API behind
 * {@code failback replay all rate=N} ({@link DeadLetters#replay(DeadLetterFilter, double)}; the demo runs Dubbo's QoS
 * off), waits until each replayed call has an outcome again, and joins the providers' ledgers and the consumer's
 * outcomes into a {@link DeadLetterSummary}.
 *
 * <p><b>Threading:</b> {@link #journal}, {@link #watch} and {@link #play} run on the demo's thread, one after the
 * other; {@link #summary()} from any thread.
 */
final class DeadLetterReplayPhase {

    /** The replay's pace, replays per second: a rate at the providers, so {@code --speed} leaves it alone. */
    static final double REPLAY_PER_SECOND = 10;

    private final RunSettings settings;
    private final DeadLetterWatch watch = new DeadLetterWatch(NotificationService.class.getName());
    private volatile Path dir; // set once by journal()
    /** The live page's port on 127.0.0.1, set with {@link #dir}. */
    private volatile int pagePort;
    private volatile DeadLetterSummary summary; // set once by play(), when it got to the end

    /** @param settings the run's settings: how long a replayed call may take to reach its outcome */
    DeadLetterReplayPhase(RunSettings settings) {
        this.settings = settings;
    }

    /**
     * Creates the journal's temporary directory, and keeps it in {@code resources} to be deleted after the consumer
     * stopped.
     */
    void journal(Console console, Resources resources) {
        dir = resources.start(null, () -> {
            try {
                return Files.createTempDirectory("rpc-timer-demo-dead-letters-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, Path::toString, d -> () -> Resources.deleteTree(d));
        console.line(String.format(Locale.ROOT, "  %-10s %-36s %s", "journal", "embedded (H2)",
                dir + ", deleted at the end"));
        pagePort = freePort();
        console.line(String.format(Locale.ROOT, "  %-10s %-36s %s", "page", "http://127.0.0.1:" + pagePort + "/",
                "the live page: open it while the demo runs (docs/console.md)"));
    }

    /** @return the consumer's options with the embedded journal in the temporary directory, and the live page */
    DemoConsumer.Options journalOptions(DemoConsumer.Options o) {
        return o.parameter("failback.store", "embedded").parameter("failback.store.dir", dir.toString())
                .parameter("failback.console.port", String.valueOf(pagePort));
    }

    /** @return a port free on 127.0.0.1 now, for the live page */
    private static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads what {@code providers} run, and the consumer's outcomes, from now on; {@code resources} stops it. */
    void watch(Resources resources, DemoProvider... providers) {
        resources.start(null, () -> {
            for (DemoProvider p : providers) {
                p.ledger().addListener(watch);
            }
            WheelFailback.addListener(watch);
            return watch;
        }, w -> "dead-letter watch", w -> () -> {
            WheelFailback.removeListener(w);
            for (DemoProvider p : providers) {
                p.ledger().removeListener(w);
            }
        });
    }

    /**
     * Replays every dead letter at {@link #REPLAY_PER_SECOND}, waits for their outcomes and computes the summary; if
     * the store fails, the summary says so and fails the run. Returns early, with no summary, when {@code stopping}
     * says so.
     */
    void play(DemoConsumer consumer, Console console, EventLines events, BooleanSupplier stopping) {
        try {
            DeadLetters dead = consumer.deadLetters().orElseThrow(() -> new IllegalStateException(
                    "the consumer has no wheelfailback application"));
            Set<String> replayed = replay(dead, console, events, stopping);
            Duration max = Duration.ofMillis(Math.round(replayed.size() * 1000 / REPLAY_PER_SECOND))
                    .plus(settings.drainBound()).plusSeconds(10);
            if (!await(() -> watch.unsettled(replayed), max, stopping)) {
                console.timed(watch.unsettled(replayed) + " replayed calls have no outcome after "
                        + Human.duration(max));
            }
            if (stopping.getAsBoolean()) {
                return;
            }
            summary = DeadLetterSummary.of(consumer.book().callIds(), consumer.book().toldCaller(),
                    watch.completions(), watch.abandoned(), replayed, watch.deliveredAfterReplay(), ids(dead),
                    watch.firstArrivals(replayed), REPLAY_PER_SECOND);
            console.timed(">> replay over: " + summary.line());
        } catch (RetryJournalException | RuntimeException e) {
            if (!stopping.getAsBoolean()) {
                summary = DeadLetterSummary.failed(FailureText.of(e));
                console.timed(">> the replay failed: " + summary.failure());
            }
        }
    }

    /** Waits for the abandoned calls to be buried, replays them all, and returns the ids it replayed. */
    private Set<String> replay(DeadLetters dead, Console console, EventLines events, BooleanSupplier stopping)
            throws RetryJournalException {
        // a call is buried in the journal's next group commit after its ABANDONED event
        int abandoned = watch.abandoned().size();
        await(() -> abandoned - count(dead), Duration.ofSeconds(10), stopping);
        Set<String> before = ids(dead);
        console.timed(">> " + before.size() + " calls were abandoned while no provider was up; the journal keeps "
                + "them as dead letters (" + dead.describe() + ")");
        console.timed(">> the providers are back: replaying every dead letter at " + Human.rate(REPLAY_PER_SECOND)
                + ", as an operator's 'failback replay all rate=" + Human.number(REPLAY_PER_SECOND) + "' does");
        events.replayed(before);
        watch.replayBegins();
        ReplayResult r = dead.replay(DeadLetterFilter.all(), REPLAY_PER_SECOND);
        Set<String> replayed = new HashSet<>(before);
        replayed.removeAll(ids(dead));
        console.timed(">> replayed " + r.replayed() + " of " + r.matched() + "; the last one's first retry is due in "
                + Human.duration(Math.max(0, r.lastDueEpochMillis() - System.currentTimeMillis())));
        return replayed;
    }

    /** @return the summary, once {@link #play} got to the end */
    Optional<DeadLetterSummary> summary() {
        return Optional.ofNullable(summary);
    }

    /** @return how many dead letters there are; -1 if the store failed (the caller waits on, then tries again) */
    private static long count(DeadLetters dead) {
        try {
            return dead.list(DeadLetterFilter.all(), 1, 1).total();
        } catch (RetryJournalException e) {
            return -1;
        }
    }

    /** @return the {@code retry.id} of every dead letter now */
    private static Set<String> ids(DeadLetters dead) throws RetryJournalException {
        Set<String> ids = new HashSet<>();
        DeadLetterPage page;
        int n = 1;
        do {
            page = dead.list(DeadLetterFilter.all(), n++, DeadLetters.MAX_PAGE_SIZE);
            page.letters().stream().map(DeadLetter::retryId).forEach(ids::add);
        } while (page.hasNext());
        return ids;
    }

    /** Waits until {@code open} is at most 0, {@code max} passed, or {@code stopping}; returns whether it got to 0. */
    private static boolean await(LongSupplier open, Duration max, BooleanSupplier stopping) {
        long deadline = System.nanoTime() + max.toNanos();
        while (open.getAsLong() > 0) {
            if (System.nanoTime() - deadline >= 0 || stopping.getAsBoolean()) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        return true;
    }
}
