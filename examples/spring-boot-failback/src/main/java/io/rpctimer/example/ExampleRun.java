package io.rpctimer.example;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import io.rpctimer.example.api.GreetingService;
import io.rpctimer.example.consumer.ConsumerApplication;
import io.rpctimer.example.provider.ProviderApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.apache.dubbo.rpc.RpcContext;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The example in one command: a ZooKeeper, the consumer application, calls that fail back while no provider is up,
 * then the provider application, which receives the retries. Prints what the consumer's Actuator says at each step
 * ({@code /actuator/failback}, {@code /actuator/health/failback}, a meter), stops everything and exits: 0 when every
 * call was delivered, 1 otherwise.
 *
 * <pre>java -jar target/rpc-timer-example-spring-boot-0.1.0-SNAPSHOT.jar</pre>
 */
public final class ExampleRun {

    private static final int CALLS = 5;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private ExampleRun() {
    }

    public static void main(String[] args) throws Exception {
        int exit;
        try (LocalZooKeeper zk = LocalZooKeeper.start()) {
            System.out.println("zookeeper  " + zk.address);
            exit = run(zk.address);
        }
        System.exit(exit);
    }

    private static int run(String zooKeeper) throws Exception {
        try (ConfigurableApplicationContext consumer = start(ConsumerApplication.class, "consumer", zooKeeper)) {
            String actuator = "http://127.0.0.1:"
                    + ((WebServerApplicationContext) consumer).getWebServer().getPort() + "/actuator";
            GreetingService greetings = consumer.getBean(GreetingService.class);
            System.out.println("\n1. No provider is up: every call fails back (the caller gets null at once)");
            for (int i = 1; i <= CALLS; i++) {
                RpcContext.getClientAttachment().setAttachment("retry.id", "order-" + i);
                System.out.println("  consumer   greet(order-" + i + ") -> " + greetings.greet("order-" + i));
            }
            waitFor(() -> get(actuator + "/health/failback").path("status").asText().equals("DEGRADED"));
            System.out.println("\n2. GET /actuator/health/failback while the retries wait\n"
                    + pretty(get(actuator + "/health/failback")));
            System.out.println("\n3. The provider starts; the retries go to it");
            try (ConfigurableApplicationContext provider = start(ProviderApplication.class, "provider", zooKeeper)) {
                boolean all = waitFor(() -> delivered(get(actuator + "/failback")) == CALLS);
                report(actuator, consumer.getBean(MeterRegistry.class));
                return all ? 0 : 1;
            }
        }
    }

    private static void report(String actuator, MeterRegistry meters) throws Exception {
        System.out.println("\n4. GET /actuator/failback\n" + pretty(get(actuator + "/failback")));
        System.out.println("\n5. GET /actuator/failback/calls/order-1 (one line per step here)");
        for (JsonNode step : get(actuator + "/failback/calls/order-1").path("steps")) {
            System.out.printf("  %s %-9s attempt %2d  provider %s%n", step.path("time").asText(),
                    step.path("type").asText(), step.path("attempt").asInt(), step.path("provider").asText("-"));
        }
        System.out.println("\n6. GET /actuator/health/failback: "
                + get(actuator + "/health/failback").path("status").asText());
        double delivered = meters.get("dubbo.consumer.failback.outcomes.total").tag("outcome", "delivered")
                .counter().count();
        System.out.printf("%n7. Meter dubbo.consumer.failback.outcomes.total{outcome=delivered} = %.0f%n", delivered);
        int n = delivered(get(actuator + "/failback"));
        System.out.println((n == CALLS ? "\nOK: " : "\nFAILED: ") + n + " of " + CALLS
                + " calls delivered after the provider came up");
    }

    private static ConfigurableApplicationContext start(Class<?> app, String name, String zooKeeper) {
        return new SpringApplicationBuilder(app).properties("spring.config.name=" + name,
                "example.zookeeper=" + zooKeeper).run();
    }

    private static int delivered(JsonNode overview) {
        JsonNode apps = overview.path("applications");
        return apps.isEmpty() ? 0 : apps.get(0).path("counts").path("delivered").asInt();
    }

    private static JsonNode get(String url) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build();
        return JSON.readTree(HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body());
    }

    private static String pretty(JsonNode json) throws Exception {
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json);
    }

    /** Polls {@code condition} every 200 ms for at most 60 s; returns whether it held. */
    private static boolean waitFor(Check condition) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.holds()) {
                return true;
            }
            Thread.sleep(200);
        }
        return false;
    }

    /** A condition that may throw. */
    private interface Check {
        boolean holds() throws Exception;
    }
}
