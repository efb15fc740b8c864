package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rpctimer.dedup.CaffeineDedupStore;
import io.rpctimer.dedup.DedupWindows;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.spring.boot.EnvironmentRun;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.dubbo.common.URL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.convert.DurationStyle;

/**
 * The starter's checks and defaults against the library's own: a value the starter accepts is one the library
 * accepts in the URL key it becomes, a value it refuses is one the library refuses too, and the defaults in the
 * configuration metadata are the library's. In the library's package, to reach its package-private URL parsers.
 */
class StarterAgreesWithLibraryTest {

    private static final String SERVICE = "dubbo://127.0.0.1:20880/com.example.Api?";

    /**
     * @param urlKey   the URL key the property becomes
     * @param urlValue what the library reads when the value reaches it unchecked (milliseconds for durations)
     */
    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "rpc-timer.failbacktasks|1|failbacktasks|1",
        "rpc-timer.failbacktasks|0|failbacktasks|0",
        "rpc-timer.failback.delay|1ms|failback.delay|1",
        "rpc-timer.failback.delay|0ms|failback.delay|0",
        "rpc-timer.failback.delay|61s|failback.delay|61000",
        "rpc-timer.failback.max-delay|5s|failback.maxdelay|5000",
        "rpc-timer.failback.max-delay|4999ms|failback.maxdelay|4999",
        "rpc-timer.failback.multiplier|1|failback.multiplier|1",
        "rpc-timer.failback.multiplier|0.99|failback.multiplier|0.99",
        "rpc-timer.failback.multiplier|1000000|failback.multiplier|1000000",
        "rpc-timer.failback.multiplier|1000001|failback.multiplier|1000001",
        "rpc-timer.failback.jitter|0|failback.jitter|0",
        "rpc-timer.failback.jitter|1|failback.jitter|1",
        "rpc-timer.failback.jitter|1.01|failback.jitter|1.01",
        "rpc-timer.failback.retry-on|all|failback.retryon|all",
        "rpc-timer.failback.retry-on|java.io.IOException|failback.retryon|java.io.IOException",
        "rpc-timer.failback.retry-on|java.lang.Object|failback.retryon|java.lang.Object",
        "rpc-timer.failback.retry-on|no.such.Exception|failback.retryon|no.such.Exception",
        "rpc-timer.failback.budget.ratio|0|failback.budget.ratio|0",
        "rpc-timer.failback.budget.ratio|-0.5|failback.budget.ratio|-0.5",
        "rpc-timer.failback.budget.ratio|1000000|failback.budget.ratio|1000000",
        "rpc-timer.failback.budget.ratio|1000001|failback.budget.ratio|1000001",
        "rpc-timer.failback.budget.min-rate|0|failback.budget.minrate|0",
        "rpc-timer.failback.budget.min-rate|1000000000|failback.budget.minrate|1000000000",
        "rpc-timer.failback.budget.min-rate|1000000001|failback.budget.minrate|1000000001",
        "rpc-timer.failback.overflow|log|failback.overflow|log",
        "rpc-timer.failback.store-down|memory|failback.store.down|memory",
        "rpc-timer.failback.store-down|wait|failback.store.down|wait",
    })
    void starterAcceptsAPolicyValue_exactlyWhenTheLibraryDoes(String property, String value, String urlKey,
                                                             String urlValue) {
        boolean starter = accepts(() -> dubboProperties(Map.of(property, value)));
        boolean library = accepts(() -> FailbackConfig.from(URL.valueOf(SERVICE + urlKey + "=" + urlValue), null));
        assertEquals(library, starter, "library accepts " + urlKey + "=" + urlValue + ": " + library);
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "rpc-timer.dedup.size|1|retrydedup.size|1",
        "rpc-timer.dedup.size|0|retrydedup.size|0",
        "rpc-timer.dedup.size|100000000|retrydedup.size|100000000",
        "rpc-timer.dedup.size|100000001|retrydedup.size|100000001",
        "rpc-timer.dedup.started|1ms|retrydedup.started|1",
        "rpc-timer.dedup.started|1d|retrydedup.started|86400000",
        "rpc-timer.dedup.started|86400001ms|retrydedup.started|86400001",
        "rpc-timer.dedup.done|30d|retrydedup.done|2592000000",
        "rpc-timer.dedup.done|0ms|retrydedup.done|0",
    })
    void starterAcceptsADedupValue_exactlyWhenTheLibraryDoes(String property, String value, String urlKey,
                                                            String urlValue) {
        boolean starter = accepts(() -> dubboProperties(Map.of(property, value)));
        boolean library = accepts(() -> RetryDedupConfig.from(URL.valueOf(SERVICE + urlKey + "=" + urlValue),
                Set.of()));
        assertEquals(library, starter, "library accepts " + urlKey + "=" + urlValue + ": " + library);
    }

    @Test
    void whatTheStarterWrites_theLibraryReadsBack() {
        Map<String, Object> dubbo = dubboProperties(Map.of("rpc-timer.failback.delay", "1500ms",
                "rpc-timer.failback.max-delay", "4s", "rpc-timer.failback.multiplier", "3", "rpc-timer.failback.jitter",
                "0", "rpc-timer.failbacktasks", "7"));
        String query = dubbo.entrySet().stream().map(e -> e.getKey().substring("dubbo.consumer.parameters.".length())
                + "=" + e.getValue()).collect(Collectors.joining("&"));
        RetryPolicy policy = FailbackConfig.from(URL.valueOf(SERVICE + query), null).policy(null);
        assertEquals(7, policy.maxPending());
        assertEquals(1_500_000_000L, policy.backoffNanos(1, 0.0));
        assertEquals(4_000_000_000L, policy.backoffNanos(3, 0.0), "1.5 s x 3^2 capped at 4 s");
    }

    @Test
    void metadataDefaults_areTheLibrarysDefaults() throws Exception {
        Map<String, JsonNode> defaults = new HashMap<>();
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertNotNull(in, "generated metadata");
            for (JsonNode p : new ObjectMapper().readTree(in).get("properties")) {
                if (p.has("defaultValue")) {
                    defaults.put(p.get("name").asText(), p.get("defaultValue"));
                }
            }
        }
        assertEquals(RetryPolicy.DEFAULT_RETRIES, defaults.get("rpc-timer.retries").asInt());
        assertEquals(RetryPolicy.DEFAULT_MAX_PENDING, defaults.get("rpc-timer.failbacktasks").asInt());
        assertEquals(RetryPolicy.DEFAULT_FIRST_DELAY_MILLIS, millis(defaults, "rpc-timer.failback.delay"));
        assertEquals(RetryPolicy.DEFAULT_MAX_DELAY_MILLIS, millis(defaults, "rpc-timer.failback.max-delay"));
        assertEquals(RetryPolicy.DEFAULT_MULTIPLIER, defaults.get("rpc-timer.failback.multiplier").asDouble());
        assertEquals(RetryPolicy.DEFAULT_JITTER, defaults.get("rpc-timer.failback.jitter").asDouble());
        assertEquals(FailbackConfig.DEFAULT_BUDGET_RATIO, defaults.get("rpc-timer.failback.budget.ratio").asDouble());
        assertEquals(FailbackConfig.DEFAULT_BUDGET_MIN_RATE,
                defaults.get("rpc-timer.failback.budget.min-rate").asDouble());
        assertEquals(CaffeineDedupStore.DEFAULT_MAX_ENTRIES, defaults.get("rpc-timer.dedup.size").asLong());
        assertEquals(DedupWindows.DEFAULT_STARTED_MILLIS, millis(defaults, "rpc-timer.dedup.started"));
        assertEquals(DedupWindows.DEFAULT_DONE_MILLIS, millis(defaults, "rpc-timer.dedup.done"));
    }

    private static long millis(Map<String, JsonNode> defaults, String property) {
        return DurationStyle.detectAndParse(defaults.get(property).asText()).toMillis();
    }

    private static boolean accepts(Runnable check) {
        try {
            check.run();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static Map<String, Object> dubboProperties(Map<String, Object> properties) {
        return EnvironmentRun.dubboProperties(properties);
    }
}
