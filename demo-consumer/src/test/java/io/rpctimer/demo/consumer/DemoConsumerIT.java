package io.rpctimer.demo.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.testkit.EmbeddedZooKeeper;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The accounting harness end to end: embedded ZooKeeper, two demo providers, a wheelfailback consumer. */
@org.junit.jupiter.api.Timeout(120)
class DemoConsumerIT {

    private EmbeddedZooKeeper zk;
    private DemoProvider p1;
    private DemoProvider p2;

    @BeforeEach
    void start() {
        zk = EmbeddedZooKeeper.start();
        p1 = DemoProvider.start("p1", zk.registryAddress(), 0);
        p2 = DemoProvider.start("p2", zk.registryAddress(), 0);
    }

    @AfterEach
    void stop() {
        p1.stop();
        p2.stop();
        zk.close();
    }

    @Test
    void aConsumerThatCannotStartLeavesNothingRunning() {
        int holders = io.rpctimer.wheel.SharedWheelTimer.holders();
        RuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
                () -> DemoConsumer.start(DemoConsumer.options(zk.registryAddress()).parameter("failback.delay", "soon")));
        StringBuilder messages = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        assertTrue(messages.toString().contains("invalid failback.delay=soon"), messages.toString());
        assertEquals(holders, io.rpctimer.wheel.SharedWheelTimer.holders(), "the shared wheel was left held");
    }

    @Test
    void everyCallIsAccountedForAndNoneIsLost() {
        p1.faults().errorRate(1.0); // every call to p1 fails at the RPC level
        DemoConsumer c = DemoConsumer.start(DemoConsumer.options(zk.registryAddress())
                .timeout(Duration.ofMillis(500)).parameter("failback.delay", "100"));
        c.watch(p1, p2);
        try {
            for (int i = 0; i < 20; i++) {
                if (i % 2 == 0) {
                    c.send("call-" + i, "m");
                } else {
                    c.sendAsync("call-" + i, "m").join();
                }
            }
            assertTrue(c.awaitSettled(Duration.ofSeconds(20)), c.report().toTable());
        } finally {
            c.close();
        }
        Report r = c.report();
        assertEquals(20, r.sent());
        assertEquals(20, r.delivered(), r.toTable());
        assertTrue(r.deliveredOnAnyRetry() > 0, "p1 never failed a first try:\n" + r.toTable());
        assertEquals(0, r.lost());
        assertTrue(r.addsUp());
    }
}
