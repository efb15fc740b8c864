package io.rpctimer.spring.boot.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The failback health when the retry journal's database goes away: a consumer keeps its failed calls in the
 * application's PostgreSQL {@code DataSource}; PostgreSQL is stopped; the next failed call cannot be journalled, so
 * its caller gets the failure ({@code failback.store.down=reject}, the default: a call kept in memory only would not
 * survive a crash), and the {@code failback} health turns {@code DOWN}, with the journal's failure count in its
 * details.
 */
@ExtendWith(InfrastructureExtension.class)
@SpringBootTest(classes = TestApps.Consumer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class FailbackJournalDownIT {

    private static final String CONSUMER = "down-consumer";

    @Autowired
    private GreetingApi greeting;
    @LocalServerPort
    private int port;

    @DynamicPropertySource
    static void consumerProperties(DynamicPropertyRegistry registry) throws Exception {
        TestApps.consumer(registry, CONSUMER, InfrastructureExtension.infrastructure(),
                "rpc-timer.default-cluster=true",
                "rpc-timer.failback.delay=60s",
                "rpc-timer.failback.store=datasource");
    }

    private String call(String retryId) {
        RpcContext.getClientAttachment().setAttachment("retry.id", retryId);
        return greeting.greet(retryId);
    }

    @Test
    @Timeout(300)
    void aJournalWhoseDatabaseStopped_turnsTheFailbackHealthDown_andTheEndpointSaysSo() throws Exception {
        Infrastructure infrastructure = InfrastructureExtension.infrastructure();
        Http http = new Http(port);
        assertNull(call("down-1"), "no provider: failed back");
        assertEquals(1, infrastructure.count("SELECT COUNT(*) FROM rpctimer_call"));
        JsonNode healthy = http.get("/actuator/health/failback").json();
        assertEquals("UP", healthy.path("status").asText(), healthy.toString());

        infrastructure.stopPostgres();
        RpcException refused = assertThrows(RpcException.class, () -> call("down-2"));
        assertTrue(refused.getMessage().contains("failback.store.down=reject"), refused.getMessage());
        assertFalse(refused.getMessage().contains(Infrastructure.DB_PASSWORD), refused.getMessage());

        await().atMost(Duration.ofSeconds(120)).until(() -> http.get("/actuator/health/failback").json()
                .path("status").asText().equals("DOWN"));
        Http.Answer health = http.get("/actuator/health/failback");
        assertEquals(503, health.status(), "DOWN answers 503");
        JsonNode app = health.json().path("details").path("applications").path(CONSUMER);
        assertTrue(app.path("journalFailures").asLong() >= 1, health.body());
        assertEquals(1, app.path("pending").asInt(), "the journaled call still waits: " + health.body());
        JsonNode overview = http.get("/actuator/failback").json();
        assertTrue(overview.path("applications").get(0).path("journalFailures").asLong() >= 1, overview.toString());
        assertFalse(health.body().contains(Infrastructure.DB_PASSWORD), health.body());
    }
}
