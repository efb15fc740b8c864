package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.testkit.DubboNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a caller on {@code cluster="wheelfailback"} sees, over real Dubbo RPC on 127.0.0.1, where it must match
 * Dubbo's own clusters: business exceptions, replies the provider cannot encode, and ids across hops.
 */
@org.junit.jupiter.api.Timeout(120)
class WheelFailbackSemanticsIT {

    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();
    private final RetryListener listener = events::add;
    private final List<DubboNode> nodes = new ArrayList<>();

    @BeforeEach
    void listen() {
        WheelFailback.addListener(listener);
    }

    @AfterEach
    void stop() {
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close();
        }
        WheelFailback.removeListener(listener);
    }

    private DubboNode provider(String name, LedgerService impl) {
        DubboNode n = DubboNode.provider(name, LedgerService.class, impl);
        nodes.add(n);
        return n;
    }

    private LedgerService connect(String name, DubboNode... providers) {
        ReferenceConfig<LedgerService> ref = new ReferenceConfig<>();
        ref.setInterface(LedgerService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(5_000);
        ref.setParameters(Map.of("retries", "2", "failback.delay", "100"));
        nodes.add(DubboNode.consumer(name, ref, providers));
        return ref.get();
    }

    private List<RetryEvent> scheduled() {
        return events.stream().filter(e -> e.type() == RetryEvent.Type.SCHEDULED).toList();
    }

    /** As with failfast and Dubbo's failback, the caller gets the IOException; the method ran once. */
    @Test
    void businessIoExceptionReachesTheCallerAndTheMethodRunsOnce() {
        ScriptedLedgerService ledger = new ScriptedLedgerService();
        ledger.failSaves = true;
        LedgerService svc = connect("consumer", provider("p1", ledger), provider("p2", ledger));
        IOException e = assertThrows(IOException.class, () -> svc.save("entry-1"));
        assertEquals("disk full saving entry-1", e.getMessage());
        assertEquals(1, ledger.calls.get());
        assertTrue(scheduled().isEmpty(), events.toString());
    }

    /**
     * The provider ran the method but could not serialize its reply (Dubbo's BAD_RESPONSE): a retry
     * would run the method again and fail the same way, so the caller gets the failure and nothing is retried.
     */
    @Test
    void replyTheProviderCannotEncodeIsNotRetried() {
        ScriptedLedgerService ledger = new ScriptedLedgerService();
        LedgerService svc = connect("consumer", provider("p1", ledger), provider("p2", ledger));
        RpcException e = assertThrows(RpcException.class, svc::unencodable);
        assertTrue(String.valueOf(e.getMessage()).contains("Failed to send response"), e.getMessage());
        assertEquals(1, ledger.calls.get());
        assertTrue(scheduled().isEmpty(), events.toString());
    }

    /**
     * A calls B, B calls C twice per request, all on wheelfailback. Dubbo copies B's incoming
     * attachments (A's retry.id) into B's outgoing calls; C must still see two different ids.
     */
    @Test
    void eachCallOfAProviderThatCallsOnGetsItsOwnRetryId() {
        ScriptedLedgerService c = new ScriptedLedgerService();
        DubboNode c1 = provider("c1", c);
        DubboNode c2 = provider("c2", c);
        ScriptedLedgerService b = new ScriptedLedgerService();
        b.next = connect("b-consumer", c1, c2);
        LedgerService a = connect("a", provider("b1", b), provider("b2", b));

        assertEquals("recorded r-first / recorded r-second", a.relay("r"));
        assertEquals(2, c.seen.size(), c.seen.toString());
        String first = c.seen.get(0).retryId();
        String second = c.seen.get(1).retryId();
        assertTrue(first != null && second != null, c.seen.toString());
        assertNotEquals(first, second, "two different calls to C share one retry.id: " + c.seen);
    }
}
