package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.retry.RetryEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.dubbo.remoting.Channel;
import org.apache.dubbo.rpc.ProtocolServer;
import org.apache.dubbo.rpc.protocol.dubbo.DubboProtocol;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Scenario 1 (sync callers) and 7a (async callers): a provider stops mid-stream. p1 answers after 800 ms, so calls are
 * in flight on it when it stops, a third of the way through the stream. Two ways to stop:
 * <ul>
 *   <li>{@link Stop#GRACEFUL}: {@code DemoProvider.stop()}: unregister, let Dubbo's graceful shutdown answer what it
 *       can, close the port;</li>
 *   <li>{@link Stop#ABRUPT}: p1 crashes: its connections and its Dubbo protocol server are closed at once under
 *       the in-flight calls (their replies are never sent), while p1 stays registered, as a crashed process does until its ZooKeeper session expires.</li>
 * </ul>
 * Every call must still be delivered, retries by p2 or p3 only, none lost.
 */
class ProviderStopsFaultIT {

    private static final int CALLS = 150;
    private static final int PER_SECOND = 50;
    private static final Duration P1_LATENCY = Duration.ofMillis(800);

    enum Stop {
        GRACEFUL("p1.stop() (graceful)"), ABRUPT("p1 crashes (connections and port closed at once)");

        final String label;

        Stop(String label) {
            this.label = label;
        }
    }

    static Stream<Arguments> runs() {
        return Stream.of(Arguments.of(Sender.Mode.SYNC, Stop.GRACEFUL), Arguments.of(Sender.Mode.SYNC, Stop.ABRUPT),
                Arguments.of(Sender.Mode.ASYNC, Stop.GRACEFUL), Arguments.of(Sender.Mode.ASYNC, Stop.ABRUPT));
    }

    @ParameterizedTest(name = "{0} callers, {1}")
    @MethodSource("runs")
    @Timeout(60)
    void callsOfAProviderThatStopsMidStreamAreReRoutedToTheOthers(Sender.Mode mode, Stop stop) throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, o -> o.timeout(Duration.ofMillis(1500))
                .parameter("failback.delay", "200").parameter("retries", "3"))) {
            DemoProvider p1 = rig.provider(1);
            p1.faults().latency(P1_LATENCY);
            Sender sender = Sender.start(rig.consumer(), mode, CALLS, PER_SECOND, 20,
                    "stop-" + mode.label() + "-" + stop.name().toLowerCase());

            await().atMost(Duration.ofSeconds(20)).until(() -> sender.started() >= CALLS / 3
                    && p1.faults().waitingCalls() >= 3);
            int inFlight = p1.faults().waitingCalls();
            int sentBefore = sender.started();
            long t0 = System.nanoTime();
            if (stop == Stop.GRACEFUL) {
                p1.stop();
            } else {
                crash(p1);
            }
            long stopMillis = Duration.ofNanos(System.nanoTime() - t0).toMillis();
            int sentAfter = sender.started();

            Map<CallerSaw, Long> saw = sender.await(Duration.ofSeconds(30));
            FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));

            List<RetryEvent> delivered = out.events().of(RetryEvent.Type.DELIVERED);
            List<String> laterCalls = IntStream.range(sentAfter, CALLS).mapToObj(sender::id).toList();
            String notes = inFlight + " calls were waiting out p1's latency when it stopped, after " + sentBefore
                    + " calls; stopping took " + stopMillis + " ms; " + (delivered.isEmpty() ? "no call failed back"
                    : out.report().deliveredOnAnyRetry() + " calls failed back and were delivered on retry, by "
                    + new TreeSet<>(delivered.stream().map(e -> rig.providerName(e.provider())).toList()))
                    + "; callers saw " + saw + sender.failureNote() + "; " + out.report().duplicates()
                    + " duplicates (calls p1"
                    + " completed after the consumer had given up on them, whose retries completed again).";
            Figures.of(mode == Sender.Mode.SYNC ? 1 : 7, stop.ordinal() + 1,
                            (mode == Sender.Mode.SYNC ? "1" : "7a") + "-provider-stops-" + stop.name().toLowerCase()
                                    + "-" + mode.label(),
                            (mode == Sender.Mode.SYNC ? "" : "1 again, ") + mode.label() + " callers, "
                                    + stop.label,
                            inFlight + " calls in flight on p1 (800 ms latency) when it stops, after "
                                    + sentBefore + " of " + CALLS + " calls")
                    .put("inFlightAtStop", inFlight)
                    .put("stopMillis", stopMillis)
                    .check(out, notes, () -> {
                        Accounting.assertEveryCallDelivered(out, CALLS, sender);
                        assertTrue(delivered.stream().noneMatch(e -> p1.address().equals(e.provider())),
                                "a retry was delivered by the stopped provider");
                        assertEquals(List.of(), rig.served().completedBy("p1", laterCalls),
                                "calls sent after p1 stopped completed at p1");
                        if (stop == Stop.ABRUPT) {
                            assertTrue(out.report().deliveredOnAnyRetry() > 0,
                                    "no in-flight call failed back when p1's server closed");
                        }
                    });
        }
    }

    /**
     * Closes every connection of the provider's Dubbo protocol servers, then the servers: no graceful wait, no
     * unregistration. Connections go first: closing a server first interrupts its service threads, and the demo's
     * {@code send} answers at once when interrupted, so the in-flight calls would be answered instead of cut off.
     */
    private static void crash(DemoProvider p) {
        List<ProtocolServer> servers = new ArrayList<>(DubboProtocol.getDubboProtocol(p.node().framework())
                .getServers());
        assertTrue(!servers.isEmpty(), "p1 has no protocol server");
        for (ProtocolServer s : servers) {
            s.getRemotingServer().getChannels().forEach(Channel::close);
        }
        servers.forEach(ProtocolServer::close);
    }
}
