package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.DemoProvider;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * A scripted fault scenario of the one-command demo: what happens to the two providers, and when. Times are
 * fractions of the run's sending time, so a scenario fits any {@code --calls}/{@code --rate}; at the default 200
 * calls at 10/s, 0.15 is 3 s after the first call.
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 */
public enum Scenario {

    /** p1 restarts; while it is down, p2 restarts too: for a moment no provider is up. */
    PROVIDER_DOWN("provider-down",
            "the two providers restart one after the other; for a moment none is up",
            "While p1 is down, ZooKeeper tells the consumer and calls go to p2. While both are down, every call "
                    + "fails back at once (the caller gets null) and its retries wait, longer each time; the first "
                    + "provider back delivers them.") {
        @Override
        List<Step> steps(Cast c) {
            Duration p1Down = c.part(0.40);
            Duration p2Down = c.part(0.15);
            return List.of(
                    new Step(c.part(0.15), c.p1.name() + " goes down for " + Human.duration(p1Down)
                            + ": it leaves ZooKeeper, then stops serving",
                            () -> c.down(c.p1, p1Down)),
                    new Step(c.part(0.30), c.p2.name() + " goes down for " + Human.duration(p2Down)
                            + ": no provider is up", () -> c.down(c.p2, p2Down)));
        }
    },

    /** p1 hangs longer than the timeout for a while. */
    PROVIDER_HANG("provider-hang",
            "one provider hangs: it accepts calls and answers much later",
            "Calls to p1 time out; the caller gets null at once and the retry goes to p2, the provider not tried "
                    + "last. p1 still completes the calls it held, after the consumer gave up on them: the "
                    + "providers see duplicates. That is at-least-once delivery, and what retry.id is for.") {
        @Override
        List<Step> steps(Cast c) {
            return List.of(
                    new Step(c.part(0.20), c.p1.name() + " hangs: every call waits " + Human.duration(c.hang)
                            + " (the timeout is " + Human.duration(c.timeout) + ")",
                            () -> c.p1.faults().hang(c.hang)),
                    new Step(c.part(0.60), c.p1.name() + " stops hanging new calls; each call it holds completes "
                            + "when its " + Human.duration(c.hang) + " are up",
                            () -> c.p1.faults().hang(Duration.ZERO)));
        }
    },

    /** Both providers fail 30% of calls at the RPC level for a while. */
    FLAKY("flaky",
            "both providers fail 30% of calls at the RPC level",
            "About one call in three fails back; its retry goes to the other provider and fails again 30% of the "
                    + "time, so some calls need retry 2 or 3, each after a longer delay.") {
        @Override
        List<Step> steps(Cast c) {
            return List.of(
                    new Step(c.part(0.10), "p1 and p2 fail 30% of calls (RPC errors)", () -> c.errors(0.3)),
                    new Step(c.part(0.70), "p1 and p2 stop failing", () -> c.errors(0)));
        }
    },

    /** Both providers fail every call while only a few retries may wait. */
    OVERFLOW("overflow",
            "both providers fail every call; only a few retries may wait at once",
            "The first failed calls take the failbacktasks places and wait for their retries. Every call that "
                    + "fails while those are full is REJECTED, and its caller gets an RpcException at once "
                    + "(overflow=reject): the retry is not dropped silently, as in Dubbo's failback. The waiting "
                    + "retries are delivered once the errors stop.") {
        @Override
        List<Step> steps(Cast c) {
            return List.of(
                    new Step(c.part(0.20), "p1 and p2 fail every call (RPC errors)", () -> c.errors(1.0)),
                    new Step(c.part(0.50), "p1 and p2 stop failing", () -> c.errors(0)));
        }

        @Override
        RunSettings defaults() {
            return RunSettings.DEFAULTS.withFailbackTasks(10);
        }
    },

    /** p1 refuses half its calls with a business exception, which is not retried. */
    BUSINESS("business",
            "one provider refuses calls with a business exception",
            "A business exception (NotificationRejectedException) comes back inside the reply. Like Dubbo's "
                    + "failback, wheelfailback does not retry it unless failback.retryon names it: the caller gets "
                    + "the exception (\"failed to the caller\"). Run with --retry-on all to see them retried on p2.") {
        @Override
        List<Step> steps(Cast c) {
            return List.of(
                    new Step(c.part(0.20), c.p1.name() + " refuses half its calls (business exception)",
                            () -> c.p1.faults().failRate(0.5)),
                    new Step(c.part(0.60), c.p1.name() + " accepts every call again",
                            () -> c.p1.faults().failRate(0)));
        }
    },

    /** No provider is up while calls keep coming, then both come back: the retry budget meters out the backlog. */
    RECOVERY("recovery",
            "no provider is up while calls keep coming; then both come back to a backlog of retries",
            "While no provider is up, every call fails back and its retry waits. When the providers come back, the "
                    + "retry budget (failback.budget.*) releases the backlog at its rate, not all at once: the "
                    + "budget line says how many retries still wait for a token and how many went out in the last "
                    + "second, and the report sets the most retries the providers received in one second against "
                    + "what the budget allowed.") {
        @Override
        List<Step> steps(Cast c) {
            Duration down = c.part(0.30);
            return List.of(new Step(c.part(0.20), "p1 and p2 go down for " + Human.duration(down)
                    + ": no provider is up", () -> {
                        c.down(c.p1, down);
                        c.down(c.p2, down);
                    }));
        }

        @Override
        RunSettings defaults() {
            // a backlog of hundreds, room for all of it, retries enough to outlast the outage, and quiet event lines
            RunSettings d = RunSettings.DEFAULTS;
            return new RunSettings(600, 30, d.mode(), d.timeout(), 8, d.delay(), d.multiplier(), d.maxDelay(),
                    d.jitter(), 1000, d.overflow(), d.retryOn(), EventLines.Level.NONE, null, d.budgetRatio(),
                    d.budgetMinRate(), false);
        }
    },

    /**
     * No provider is up for longer than the retry horizon: calls end ABANDONED and stay in the journal as dead
     * letters; the providers come back and the demo replays them at a set pace.
     */
    DEAD_LETTERS("dead-letters",
            "no provider is up for longer than the retries last; then the dead letters are replayed",
            "Calls that fail while no provider is up use up their 2 retries (0.3 s, 0.6 s) long before the providers "
                    + "return: they end ABANDONED, and the consumer's journal keeps each as a dead letter. Once every "
                    + "call has its outcome, the demo replays the dead letters at 10/s, as 'failback replay all "
                    + "rate=10' does, with their original retry.id, so the providers' retrydedup runs each call at "
                    + "most once. The providers' ledgers say what ran; the report reads 'N abandoned, N replayed, N "
                    + "delivered, 0 lost'.") {
        @Override
        List<Step> steps(Cast c) {
            Duration down = c.part(0.50);
            return List.of(new Step(c.part(0.15), "p1 and p2 go down for " + Human.duration(down)
                    + ", longer than the retries last: no provider is up", () -> {
                        c.down(c.p1, down);
                        c.down(c.p2, down);
                    }));
        }

        @Override
        RunSettings defaults() {
            // a short retry horizon, event lines for outcomes only, and a budget that leaves the replay's pace alone
            RunSettings d = RunSettings.DEFAULTS;
            return new RunSettings(80, 10, d.mode(), d.timeout(), 2, Duration.ofMillis(300), 2.0, Duration.ofSeconds(1),
                    d.jitter(), d.failbackTasks(), d.overflow(), d.retryOn(), EventLines.Level.OUTCOMES, null,
                    d.budgetRatio(), 5 * DeadLetterReplayPhase.REPLAY_PER_SECOND, false);
        }

        @Override
        boolean replaysDeadLetters() {
            return true;
        }
    };

    /** The scenario run when none is named. */
    public static final Scenario DEFAULT = PROVIDER_DOWN;

    private final String id;
    private final String summary;
    private final String watchFor;

    Scenario(String id, String summary, String watchFor) {
        this.id = id;
        this.summary = summary;
        this.watchFor = watchFor;
    }

    /** @return the name on the command line, e.g. {@code provider-down} */
    public String id() {
        return id;
    }

    /** @return what happens, in a few words */
    public String summary() {
        return summary;
    }

    /** @return what to look for in the output */
    public String watchFor() {
        return watchFor;
    }

    /** @return the consumer settings this scenario starts from, before the command line's flags */
    RunSettings defaults() {
        return RunSettings.DEFAULTS;
    }

    /** @return whether the run ends by replaying the dead letters (on a journal in a temporary directory) */
    boolean replaysDeadLetters() {
        return false;
    }

    /** @return the timed fault changes of this scenario, in time order */
    abstract List<Step> steps(Cast cast);

    /**
     * @param id e.g. {@code provider-down}
     * @return the scenario
     * @throws IllegalArgumentException {@code --scenario: "x" (expected: one of provider-down, ...)}
     */
    public static Scenario of(String id) {
        for (Scenario s : values()) {
            if (s.id.equalsIgnoreCase(id.trim())) {
                return s;
            }
        }
        throw new IllegalArgumentException("--scenario: \"" + id + "\" (expected: one of " + ids() + ", "
                + ConsumerCrash.ID + ")");
    }

    /** @return the names, comma-separated */
    public static String ids() {
        StringBuilder b = new StringBuilder();
        for (Scenario s : values()) {
            b.append(b.length() == 0 ? "" : ", ").append(s.id);
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return id;
    }

    /**
     * One fault change: at {@code at} after the first call, print {@code what} and run {@code action}.
     *
     * @param at     time after the first call
     * @param what   what happens, for a person
     * @param action what the script does
     */
    record Step(Duration at, String what, Runnable action) {
    }

    /**
     * Who and what a script plays with.
     *
     * @param p1          the first provider
     * @param p2          the second provider
     * @param sendingTime how long sending every call takes; steps are placed at fractions of it
     * @param timeout     the consumer's call timeout
     * @param hang        how long a hanging provider holds a call
     * @param announce    prints a line when something the script started ends later (a provider back up)
     */
    record Cast(DemoProvider p1, DemoProvider p2, Duration sendingTime, Duration timeout, Duration hang,
                Consumer<String> announce) {

        Duration part(double fraction) {
            return Duration.ofMillis(Math.round(sendingTime.toMillis() * fraction));
        }

        void down(DemoProvider p, Duration downFor) {
            p.goDown(downFor).whenComplete((v, failure) -> {
                if (failure == null) {
                    announce.accept(p.name() + " is back: serving again and registered in ZooKeeper");
                }
            });
        }

        void errors(double rate) {
            p1.faults().errorRate(rate);
            p2.faults().errorRate(rate);
        }
    }
}
