package io.rpctimer.spring.boot.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.rpctimer.spring.boot.it.provider.GreetingProvider;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * A consumer and a provider Spring Boot application on the starter, over real Dubbo RPC, a real ZooKeeper and a real
 * PostgreSQL that both use as their own {@code DataSource}: the consumer for its retry journal
 * ({@code rpc-timer.failback.store=datasource}), the provider for its {@code retrydedup} store
 * ({@code rpc-timer.dedup.store=datasource}).
 *
 * <p>The tests run in order on one pair of applications, as an operator would see them: calls fail back while no
 * provider is up (journalled, health late), then the provider starts and delivers them (endpoint, meters, health,
 * dedup table), then what the registry and the endpoint reveal.
 */
@ExtendWith(InfrastructureExtension.class)
@SpringBootTest(classes = TestApps.Consumer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DirtiesContext
class FailbackStarterIT {

    private static final String CONSUMER = "it-consumer";
    private static final String PROVIDER = "it-provider";
    private static final int CALLS = 5;
    private static final String JOURNAL_TABLE = "rpctimer_call";
    private static Infrastructure infrastructure;

    @Autowired
    private GreetingApi greeting;
    @Autowired
    private MeterRegistry meters;
    @LocalServerPort
    private int port;

    @DynamicPropertySource
    static void consumerProperties(DynamicPropertyRegistry registry) throws Exception {
        infrastructure = InfrastructureExtension.infrastructure();
        TestApps.consumer(registry, CONSUMER, infrastructure,
                "rpc-timer.default-cluster=true",
                "rpc-timer.retries=1000",
                "rpc-timer.failback.delay=200",
                "rpc-timer.failback.max-delay=500ms",
                "rpc-timer.failback.jitter=0",
                "rpc-timer.failback.store=datasource",
                "rpc-timer.health.max-pending-age=300ms");
    }

    private static String retryId(int i) {
        return "boot-call-" + i;
    }

    @Test
    @Order(1)
    @Timeout(300)
    void withNoProviderUp_failedCallsWaitInTheApplicationsDataSource_andHealthTurnsLate() throws Exception {
        for (int i = 0; i < CALLS; i++) {
            RpcContext.getClientAttachment().setAttachment("retry.id", retryId(i));
            assertNull(greeting.greet("c" + i), "failed back: the caller gets the empty result");
        }
        assertEquals(CALLS, infrastructure.count("SELECT COUNT(*) FROM " + JOURNAL_TABLE
                + " WHERE application = '" + CONSUMER + "'"), "every failed call is in the journal");
        Http http = new Http(port);
        await().atMost(Duration.ofSeconds(120)).until(() -> http.get("/actuator/health/failback").status() == 200
                && http.get("/actuator/health/failback").json().path("status").asText().equals("DEGRADED"));
        JsonNode health = http.get("/actuator/health/failback").json();
        JsonNode app = health.path("details").path("applications").path(CONSUMER);
        assertEquals(CALLS, app.path("pending").asInt(), health.toString());
        assertTrue(app.path("oldestPendingAgeMillis").asLong() > 300, health.toString());
        assertTrue(app.path("journal").asText().contains("DataSource of " + CONSUMER), health.toString());
        assertEquals("UP", http.get("/actuator/health").json().path("status").asText(),
                "DEGRADED leaves the application's health UP");
    }

    @Test
    @Order(2)
    @Timeout(300)
    void whenTheProviderComesUp_theRetriesAreDeliveredOnce_andEndpointMetersAndHealthSaySo() throws Exception {
        List<String> properties = new ArrayList<>(TestApps.common(PROVIDER, infrastructure.zooKeeper()));
        properties.addAll(infrastructure.dataSource());
        properties.addAll(List.of("spring.main.web-application-type=none", "rpc-timer.dedup.enabled=true",
                "rpc-timer.dedup.store=datasource"));
        InfrastructureExtension.track(new SpringApplicationBuilder(TestApps.Provider.class)
                .properties(properties.toArray(String[]::new)).run());
        Http http = new Http(port);
        await().atMost(Duration.ofSeconds(120)).until(() -> delivered(http.get("/actuator/failback").json()) == CALLS);

        JsonNode overview = http.get("/actuator/failback").json();
        JsonNode app = overview.path("applications").get(0);
        assertEquals(CONSUMER, app.path("application").asText(), overview.toString());
        assertEquals(CALLS, app.path("counts").path("failedCalls").asInt(), overview.toString());
        assertEquals(0, app.path("counts").path("pending").asInt(), overview.toString());
        JsonNode reference = app.path("references").get(0);
        assertTrue(reference.path("serviceKey").asText().endsWith(GreetingApi.class.getName()), overview.toString());
        assertTrue(overview.path("wheel").path("scheduled").asLong() > 0, overview.toString());

        JsonNode history = http.get("/actuator/failback/calls/" + retryId(0)).json();
        assertEquals(retryId(0), history.path("retryId").asText());
        List<String> types = new ArrayList<>();
        history.path("steps").forEach(s -> types.add(s.path("type").asText()));
        assertEquals("SCHEDULED", types.get(0), history.toString());
        assertEquals("DELIVERED", types.get(types.size() - 1), history.toString());

        assertEquals(0, infrastructure.count("SELECT COUNT(*) FROM " + JOURNAL_TABLE), "delivered calls leave it");
        assertEquals(CALLS, infrastructure.count("SELECT COUNT(*) FROM rpc_retry_dedup WHERE state = 'D'"
                + " AND dedup_key LIKE '%#boot-call-%'"), "the provider recorded each call in its DataSource");
        assertEquals(CALLS, GreetingProvider.RAN.stream().filter(id -> id.startsWith("boot-call-")).distinct().count());
        await().atMost(Duration.ofSeconds(120)).until(() -> http.get("/actuator/health/failback").json()
                .path("status").asText().equals("UP"));
    }

    private static int delivered(JsonNode overview) {
        JsonNode apps = overview.path("applications");
        return apps.size() == 0 ? 0 : apps.get(0).path("counts").path("delivered").asInt();
    }

    @Test
    @Order(3)
    void theFailbackMeters_areInBootsMeterRegistry() {
        Counter delivered = meters.find("dubbo.consumer.failback.outcomes.total")
                .tags("application.name", CONSUMER, "interface", GreetingApi.class.getName(), "method", "greet",
                        "outcome", "delivered").counter();
        assertTrue(delivered != null, "no delivered counter; failback meters in Boot's registry: "
                + failbackMeters(meters));
        assertEquals(CALLS, delivered.count());
        assertEquals(0, meters.get("dubbo.consumer.failback.pending").tag("application.name", CONSUMER).gauge()
                .value());
    }

    private static List<String> failbackMeters(MeterRegistry registry) {
        return registry.getMeters().stream().map(m -> m.getId().toString()).filter(n -> n.contains("failback"))
                .toList();
    }

    @Test
    @Order(4)
    void theRegistryCarriesTheDefaultsAsUrlParameters_andNoPasswordAnywhere() throws Exception {
        List<String> nodes = infrastructure.registryNodes().stream()
                .map(n -> URLDecoder.decode(n, StandardCharsets.UTF_8)).toList();
        String consumerUrl = nodes.stream().filter(n -> n.contains("/consumers/consumer://")).findFirst()
                .orElseThrow(() -> new AssertionError("no consumer URL in " + nodes));
        for (String parameter : List.of("cluster=wheelfailback", "failback.delay=200", "failback.maxdelay=500",
                "failback.store=jdbc", "retries=1000")) {
            assertTrue(consumerUrl.contains(parameter), parameter + " in " + consumerUrl);
        }
        String providerUrl = nodes.stream().filter(n -> n.contains("/providers/dubbo://")).findFirst()
                .orElseThrow(() -> new AssertionError("no provider URL in " + nodes));
        assertTrue(providerUrl.contains("retrydedup.store=datasource"), providerUrl);
        for (String node : nodes) {
            assertFalse(node.contains(Infrastructure.DB_PASSWORD), "the DataSource's password in " + node);
            assertFalse(node.contains("failback.store.url") || node.contains("failback.store.password"), node);
        }
    }

    @Test
    @Order(5)
    void theEndpointAndHealthJson_carryNoPassword() {
        Http http = new Http(port);
        for (String path : List.of("/actuator/failback", "/actuator/failback/calls/" + retryId(1),
                "/actuator/health")) {
            Http.Answer a = http.get(path);
            assertEquals(200, a.status(), path + ": " + a.body());
            assertFalse(a.body().contains(Infrastructure.DB_PASSWORD), path + ": " + a.body());
        }
    }

    @Test
    @Order(6)
    void anUnknownCallOrSection_is404() {
        Http http = new Http(port);
        assertEquals(404, http.get("/actuator/failback/calls/no-such-call").status());
        assertEquals(404, http.get("/actuator/failback/no-such-section").status());
        assertEquals(404, http.get("/actuator/failback/no-such-section/x").status());
    }
}
