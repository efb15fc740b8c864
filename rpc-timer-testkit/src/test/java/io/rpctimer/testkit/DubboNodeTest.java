package io.rpctimer.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.stream.IntStream;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class DubboNodeTest {

    private final Deque<AutoCloseable> open = new ArrayDeque<>();

    @AfterEach
    void closeAll() throws Exception {
        while (!open.isEmpty()) {
            open.pop().close();
        }
    }

    private <T extends AutoCloseable> T keep(T closeable) {
        open.push(closeable);
        return closeable;
    }

    @Test
    void directConsumerReachesBothProvidersOnLoopback() {
        DubboNode p1 = keep(DubboNode.provider("p1", Echo.class, text -> "p1:" + text));
        DubboNode p2 = keep(DubboNode.provider("p2", Echo.class, text -> "p2:" + text));
        assertEquals("dubbo://127.0.0.1:" + p1.protocolPort(), p1.url());
        ReferenceConfig<Echo> ref = new ReferenceConfig<>();
        ref.setInterface(Echo.class);
        ref.setLoadbalance("roundrobin");
        keep(DubboNode.consumer("consumer", ref, p1, p2));
        Echo echo = ref.get();

        assertEquals(2, IntStream.range(0, 4).mapToObj(i -> echo.echo("x").substring(0, 2))
                .distinct().count(), "both providers answered");
    }

    @Test
    void consumerFindsProviderThroughZooKeeper_andLosesItOnUnexport() {
        EmbeddedZooKeeper zk = keep(EmbeddedZooKeeper.start());
        ServiceConfig<Echo> sc = new ServiceConfig<>();
        sc.setInterface(Echo.class);
        sc.setRef(text -> "zk:" + text);
        DubboNode provider = keep(DubboNode.create("provider", zk.registryAddress()).protocolPort(Ports.free())
                .service(sc).start());
        ReferenceConfig<Echo> ref = new ReferenceConfig<>();
        ref.setInterface(Echo.class);
        ref.setCheck(false);
        keep(DubboNode.create("consumer", zk.registryAddress()).reference(ref).start());
        Echo echo = ref.get();

        assertEquals("zk:a", await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> echo.echo("a"),
                "zk:a"::equals));
        provider.unexport(sc);
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            try {
                echo.echo("b");
                return false;
            } catch (RuntimeException e) {
                return true; // no provider left
            }
        });
    }

    @Test
    void aRefusedExportClosesTheNodeAndFreesItsPort() {
        ServiceConfig<Echo> sc = new ServiceConfig<>();
        sc.setInterface(Echo.class);
        sc.setRef(text -> text);
        sc.setFilter("no-such-filter"); // Dubbo refuses the export: no such extension
        int port = Ports.free();
        DubboNode node = DubboNode.create("refused", null).protocolPort(port).service(sc);
        assertThrows(RuntimeException.class, node::start);
        assertFalse(node.isRunning());
        await().atMost(Duration.ofSeconds(10)).until(() -> !Ports.isListening(port));
    }

    @Test
    void badArgumentsNameTheValue() {
        IllegalArgumentException name = assertThrows(IllegalArgumentException.class,
                () -> DubboNode.create("a b", null));
        assertEquals("name: \"a b\" (expected: 1..64 letters, digits, '.', '_' or '-')", name.getMessage());
        ReferenceConfig<Echo> noInterface = new ReferenceConfig<>();
        IllegalArgumentException aim = assertThrows(IllegalArgumentException.class, () -> DubboNode.aim(noInterface));
        assertEquals("reference: no interface (expected: setInterface(...) first)", aim.getMessage());
        IllegalStateException url = assertThrows(IllegalStateException.class,
                keep(DubboNode.create("c", null))::url);
        assertTrue(url.getMessage().contains("no protocolPort"), url.getMessage());
    }
}
