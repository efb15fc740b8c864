package io.rpctimer.retry;

import static io.rpctimer.retry.LifecycleRig.outcomeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Due retries and the retry budget, on virtual time: a spent budget makes due retries wait in order, never drops
 * them, keeps them off the wheel, and releases them as tokens come.
 */
class BudgetGateTest {

    /** The budget's clock is the virtual timer's, so tokens come as the timer's time passes. */
    private LifecycleRig rig(double ratio, double minPerSecond) {
        LifecycleRig rig = new LifecycleRig(false);
        RetryBudget budget = RetryBudget.tokenBucket(ratio, minPerSecond, 10, TimeUnit.SECONDS,
                () -> rig.timer.nowNanos);
        return rig.reference(20_000, OverflowPolicy.REJECT, budget);
    }

    private void advance(LifecycleRig rig, long ms) {
        rig.advance(ms, TimeUnit.MILLISECONDS);
    }

    private List<String> sentIds(LifecycleRig rig) {
        return rig.sent.stream().map(s -> s.call().retryId()).toList();
    }

    @Test
    void spentBudget_dueRetriesWaitAndGoInOrder_oneASecond_noneDropped() {
        LifecycleRig rig = rig(0, 1);
        List<Admission> admitted = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            admitted.add(rig.admit("c" + i));
        }
        advance(rig, 1000);
        assertEquals(List.of("c1"), sentIds(rig), "one token at start");
        assertEquals(4, rig.reference.state().waitingForBudget());
        for (int s = 1; s <= 4; s++) {
            advance(rig, 999);
            assertEquals(s, rig.sent.size(), "no token yet");
            advance(rig, 1);
            assertEquals(s + 1, rig.sent.size());
        }
        assertEquals(List.of("c1", "c2", "c3", "c4", "c5"), sentIds(rig));
        rig.sent.forEach(LifecycleRig.Sent::deliver);
        rig.run();
        admitted.forEach(a -> assertEquals(RetryOutcome.DELIVERED, outcomeOf(a).outcome()));
        assertEquals(4, rig.reference.state().budgetWaits());
    }

    @Test
    void aRetryFallingDueWhileOthersWait_queuesBehindThem_evenWithATokenThere() {
        LifecycleRig rig = rig(1, 0);
        rig.admit("c1");
        rig.admit("c2");
        rig.admit("c3");
        advance(rig, 60);
        rig.admit("c4"); // due at 1060
        advance(rig, 990); // c1 passes on the start token, c2 and c3 wait
        assertEquals(List.of("c1"), sentIds(rig));
        for (int i = 0; i < 10; i++) {
            rig.reference.onSuccess(); // tokens are there before c4 falls due
        }
        advance(rig, 10);
        assertEquals(List.of("c1"), sentIds(rig), "c4 fell due but waits behind c2, c3");
        advance(rig, 100);
        assertEquals(List.of("c1", "c2", "c3", "c4"), sentIds(rig));
    }

    @Test
    void tenThousandWaiting_oneTimeoutOnTheWheel_releasedAtTheBudgetsRate() {
        LifecycleRig rig = rig(0, 1000);
        IntStream.range(0, 10_000).forEach(i -> rig.admit("c" + i));
        advance(rig, 1000);
        int firstBurst = rig.sent.size();
        assertTrue(firstBurst <= 1001, "at most the tokens saved in the first second: " + firstBurst);
        assertEquals(1, rig.timer.live(BudgetGate.class).size());
        assertEquals(0, rig.timer.live(RetryCall.class).size(), "waiting retries are off the wheel");
        assertEquals(10_000 - firstBurst, rig.reference.state().waitingForBudget());
        advance(rig, 1000);
        int second = rig.sent.size() - firstBurst;
        assertTrue(second >= 990 && second <= 1001, "1000 a second: " + second);
        advance(rig, 10_000);
        assertEquals(10_000, rig.sent.size());
        List<String> expected = IntStream.range(0, 10_000).mapToObj(i -> "c" + i).toList();
        assertEquals(expected, sentIds(rig), "in the order they fell due");
        assertTrue(rig.timer.live(BudgetGate.class).isEmpty());
    }

    @Test
    void destroyWhileWaiting_handedOver_neverSent() {
        LifecycleRig rig = rig(0, 1);
        Admission first = rig.admit("c1");
        Admission waiting = rig.admit("c2");
        advance(rig, 1000);
        rig.reference.destroy();
        advance(rig, 5000);

        assertEquals(List.of("c1"), sentIds(rig));
        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(waiting).outcome());
        assertEquals(1, outcomeOf(waiting).attempt());
        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(first).outcome());
        assertTrue(rig.timer.live(BudgetGate.class).isEmpty());
    }
}
