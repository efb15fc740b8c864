package io.rpctimer.demo.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.testkit.EmbeddedZooKeeper;
import io.rpctimer.testkit.Ports;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The standalone consumer against a registry and providers it did not start (here in the same JVM, as the test's
 * own): p2 fails half its calls at the RPC level, so calls are retried on p1; duplicates come from the providers'
 * ledgers through ProviderControl.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsumerAppIT {

    private EmbeddedZooKeeper zk;
    private DemoProvider p1;
    private DemoProvider p2;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeAll
    void start() {
        zk = EmbeddedZooKeeper.start();
        p1 = DemoProvider.start("p1", zk.registryAddress(), 0);
        p2 = DemoProvider.start("p2", zk.registryAddress(), 0);
        p2.faults().errorRate(0.5);
    }

    @AfterAll
    void stop() {
        p1.stop();
        p2.stop();
        zk.close();
    }

    private ConsumerApp app;

    private int run(String... args) {
        out.reset();
        err.reset();
        app = new ConsumerApp(new PrintStream(out, true, StandardCharsets.UTF_8), false);
        return app.execute(new PrintStream(err, true, StandardCharsets.UTF_8), args);
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void findsTheProvidersInTheRegistry_retries_andReportsDuplicatesFromTheirLedgers() {
        int code = run("--registry", zk.registryAddress(), "--calls", "40", "--rate", "40", "--delay", "100ms");
        String o = out();
        assertEquals(0, code, o + err);
        assertTrue(o.contains("ProviderControl group p1"), o);
        assertTrue(o.contains("ProviderControl group p2"), o);
        FinalReport fr = app.result().orElseThrow().report().orElseThrow();
        Report r = fr.report();
        assertEquals(40, r.sent(), o);
        assertEquals(0, r.lost(), o);
        assertTrue(r.addsUp(), o);
        assertTrue(r.deliveredOnAnyRetry() > 0, "p2 failed no call\n" + o);
        assertTrue(fr.duplicates().count() != null, o);
        assertTrue(o.contains("from their ledgers"), o);
    }

    @Test
    void aProviderWithoutControl_makesDuplicatesUnknown_notZero() {
        int code = run("--registry", zk.registryAddress(), "--providers", "p1,p9", "--calls", "10", "--rate", "50",
                "--delay", "100ms", "--events", "none");
        String o = out();
        assertEquals(0, code, o + err);
        assertTrue(o.contains("p9") && o.contains("ProviderControl unreachable"), o);
        FinalReport fr = app.result().orElseThrow().report().orElseThrow();
        assertNull(fr.duplicates().count(), o);
        assertTrue(o.contains("duplicates seen by providers          n/a   no ProviderControl for p9"), o);
    }

    @Test
    void unreachableRegistry_exitsWith3_inOneLine() {
        int port = Ports.free(); // nothing listens there
        assertEquals(3, run("--registry", "zookeeper://127.0.0.1:" + port));
        assertEquals("error: --registry zookeeper://127.0.0.1:" + port + ": cannot connect (Connection refused)\n",
                err.toString(StandardCharsets.UTF_8));
    }
}
