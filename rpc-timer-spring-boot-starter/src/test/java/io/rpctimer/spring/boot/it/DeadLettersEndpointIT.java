package io.rpctimer.spring.boot.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rpctimer.spring.boot.it.provider.GreetingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.dubbo.rpc.RpcContext;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The dead letters through the Actuator ({@code /actuator/failback/dead}) of a consumer Spring Boot application over
 * real Dubbo RPC and a ZooKeeper (the test kit's {@code EmbeddedZooKeeper}): with no provider, calls are abandoned
 * after their one retry and kept (in memory); they are listed and shown; bad requests are refused in the QoS command's
 * words; once a provider is up, one replayed over HTTP is delivered, and the rest are purged.
 */
@ExtendWith(InfrastructureExtension.class)
@SpringBootTest(classes = TestApps.Consumer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DirtiesContext
class DeadLettersEndpointIT {

    private static final String CONSUMER = "dead-boot-consumer";
    private static final int CALLS = 3;
    private static final Duration AWAIT = Duration.ofSeconds(120);
    private static Infrastructure infrastructure;

    @Autowired
    private GreetingApi greeting;
    @LocalServerPort
    private int port;

    @DynamicPropertySource
    static void consumerProperties(DynamicPropertyRegistry registry) throws Exception {
        infrastructure = InfrastructureExtension.infrastructure();
        TestApps.consumer(registry, CONSUMER, infrastructure,
                "rpc-timer.default-cluster=true",
                "rpc-timer.retries=1",
                "rpc-timer.failback.delay=200",
                "rpc-timer.failback.jitter=0",
                "rpc-timer.failback.store=memory");
    }

    private static String retryId(int i) {
        return "boot-dead-" + i;
    }

    @Test
    @Order(1)
    @Timeout(300)
    void abandonedCalls_areListedAndShown() {
        for (int i = 0; i < CALLS; i++) {
            RpcContext.getClientAttachment().setAttachment("retry.id", retryId(i));
            assertNull(greeting.greet("d" + i), "failed back: the caller gets the empty result");
        }
        Http http = new Http(port);
        await().atMost(AWAIT).until(() -> http.get("/actuator/failback/dead").json().path(0).path("total")
                .asInt() == CALLS);
        JsonNode page = http.get("/actuator/failback/dead").json().get(0);
        assertEquals(CONSUMER, page.path("application").asText(), page.toString());
        assertTrue(page.path("kept").asText().startsWith("memory (not durable"), page.toString());
        Set<String> ids = new HashSet<>();
        page.path("letters").forEach(l -> ids.add(l.path("retryId").asText()));
        assertEquals(Set.of(retryId(0), retryId(1), retryId(2)), ids, page.toString());

        JsonNode one = http.get("/actuator/failback/dead/" + retryId(0)).json().get(0);
        assertEquals(retryId(0), one.path("letters").get(0).path("retryId").asText(), one.toString());
        assertEquals(1, one.path("letters").get(0).path("attempts").asInt(), one.toString());
        assertEquals("ABANDONED", last(one.path("steps")).path("type").asText(), one.toString());
        assertEquals(404, http.get("/actuator/failback/dead/no-such-call").status());
    }

    @Test
    @Order(2)
    void badRequests_areRefusedInTheQosWords_andChangeNothing() {
        Http http = new Http(port);
        Http.Answer none = http.post("/actuator/failback/dead/replay", "{}");
        assertEquals(400, none.status(), none.body());
        assertTrue(none.json().path("error").asText().startsWith("target: none (expected: a retry.id, 'all', or a"
                + " filter"), none.body());
        Http.Answer rate = http.post("/actuator/failback/dead/replay", "{\"target\":\"all\",\"rate\":\"fast\"}");
        assertEquals(400, rate.status(), rate.body());
        assertTrue(rate.json().path("error").asText().startsWith("rate: 'fast' (expected: replays per second"),
                rate.body());
        Http.Answer unknown = http.post("/actuator/failback/dead/purge", "{\"target\":\"no-such-call\"}");
        assertEquals(404, unknown.status(), unknown.body());
        assertTrue(unknown.json().path("error").asText().startsWith("retryId: 'no-such-call' (expected: the"
                + " retry.id of a dead letter of " + CONSUMER), unknown.body());
        assertEquals(404, http.post("/actuator/failback/dead/bury", "{\"target\":\"all\"}").status());
        assertEquals(CALLS, http.get("/actuator/failback/dead").json().get(0).path("total").asInt());
    }

    @Test
    @Order(3)
    @Timeout(300)
    void aReplayedDeadLetter_isDelivered_andTheRestPurged() {
        List<String> properties = new ArrayList<>(TestApps.common("dead-boot-provider", infrastructure.zooKeeper()));
        properties.add("spring.main.web-application-type=none");
        InfrastructureExtension.track(new SpringApplicationBuilder(TestApps.Provider.class)
                .properties(properties.toArray(String[]::new)).run());
        Http http = new Http(port);
        // the provider may not be in the consumer's directory yet: replay until one replay is delivered
        await().atMost(AWAIT).until(() -> {
            Http.Answer shown = http.get("/actuator/failback/dead/" + retryId(1));
            if (shown.status() == 200) {
                Http.Answer r = http.post("/actuator/failback/dead/replay", "{\"target\":\"" + retryId(1) + "\"}");
                System.out.println("replay of " + retryId(1) + " answered " + r.status() + " " + r.body());
                assertEquals(200, r.status(), r.body());
                assertEquals(CONSUMER, r.json().get(0).path("application").asText(), r.body());
            }
            return GreetingProvider.RAN.contains(retryId(1));
        });
        Http.Answer purged = http.post("/actuator/failback/dead/purge", "{\"target\":\"all\"}");
        assertEquals(200, purged.status(), purged.body());
        assertEquals(CALLS - 1, purged.json().get(0).path("purged").asInt(), purged.body());
        assertEquals(0, http.get("/actuator/failback/dead").json().get(0).path("total").asInt());
        assertEquals(Set.of(retryId(1)), GreetingProvider.RAN.stream().filter(id -> id.startsWith("boot-dead-"))
                .collect(Collectors.toSet()), "only the replayed call ran (a retry whose reply timed out runs again)");
    }

    private static JsonNode last(JsonNode array) {
        return array.get(array.size() - 1);
    }
}
