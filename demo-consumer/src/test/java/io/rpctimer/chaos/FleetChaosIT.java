package io.rpctimer.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The chaos run as a test: a fleet of consumer JVMs on {@code cluster=wheelfailback} with their journal on one real
 * PostgreSQL, two providers with {@code retrydedup} on a shared store in it, a real ZooKeeper, steady load, and a
 * fault schedule drawn from a seed ({@link FaultSchedule}); then the checks of {@link FleetCheck}. It passes when no
 * check finds a violation. See {@code docs/chaos.md}.
 *
 * <p>The short run (about three minutes) is part of {@code mvn -B verify}. A longer one, or a replay:
 * <pre>
 * mvn -B -pl demo-consumer -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=FleetChaosIT -Dfailsafe.failIfNoSpecifiedTests=false -Dchaos.minutes=15 -Dchaos.seed=42
 * </pre>
 * The seed is printed first; the summary goes to {@code demo-consumer/target/chaos/seed-<seed>/summary.txt}.
 */
class FleetChaosIT {

    @Test
    void everyAcceptedCallRunsOnceAndNoAttemptIsSentByTwoInstances() throws Exception {
        ChaosRun.Verdict verdict = new ChaosRun(ChaosSettings.fromSystemProperties()).run();
        assertEquals(Map.of(), verdict.check().violations(), verdict.summary());
    }
}
