package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.testkit.Ports;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The QoS command {@code failback} on whichever Dubbo line the matrix runs: Dubbo 3.1 finds
 * {@link LegacyFailbackCommand} through its own QoS interface, 3.2 and later {@link FailbackCommand}; both list the
 * command in {@code help} and report a failed call pending, its history, then its delivery, over Dubbo's real QoS
 * port (HTTP and telnet). Two hanging providers make the call fail until they are released. The meters, which need
 * Dubbo's metrics registry (3.2 and later), are checked by {@link FailbackOperationsIT}.
 */
@Timeout(120)
class FailbackQosMatrixIT {

    private static final String APP = "matrix-consumer";

    private final int qosPort = Ports.free();
    private final QosClient qos = new QosClient(qosPort);
    private HangingProviders providers;
    private FrameworkModel framework;

    @BeforeEach
    void start() {
        providers = new HangingProviders();
    }

    @AfterEach
    void stop() {
        providers.release();
        if (framework != null) {
            framework.destroy();
        }
        providers.close();
    }

    @Test
    void failedCall_isPendingInTheFailbackCommand_thenDelivered() throws Exception {
        GreetingService svc = consumer();
        assertTrue(qos.telnet("help").contains("failback"), "Dubbo lists the command in its help");

        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "matrix-1");
        assertNull(svc.notify("order-1"), "failback: the caller gets the empty result");
        String overview = await().atMost(Duration.ofSeconds(30)).until(() -> qos.get("/failback"),
                out -> out.contains("application " + APP + ": failedCalls=1 pending=1"));
        assertTrue(overview.contains("reference " + GreetingService.class.getName()), overview);
        String history = await().atMost(Duration.ofSeconds(30)).until(() -> qos.telnet("failback matrix-1"),
                out -> out.contains("FAILED"));
        assertTrue(history.contains("retry.id=matrix-1:\n"), history);
        assertTrue(history.contains("SCHEDULED application=" + APP), history);

        providers.release();
        await().atMost(Duration.ofSeconds(30)).until(() -> qos.get("/failback"),
                out -> out.contains("application " + APP + ": failedCalls=1 pending=0 delivered=1"));
    }

    private GreetingService consumer() {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(200);
        ref.setParameters(new HashMap<>(Map.of("failback.delay", "400", "failback.jitter", "0",
                "failback.multiplier", "1", "retries", "1000")));
        providers.aim(ref);
        framework = new FrameworkModel();
        ApplicationModel app = framework.newApplication();
        DubboBootstrap.getInstance(app).application(QosClient.application(APP, qosPort))
                .registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE)).reference(ref).start();
        return ref.get();
    }
}
