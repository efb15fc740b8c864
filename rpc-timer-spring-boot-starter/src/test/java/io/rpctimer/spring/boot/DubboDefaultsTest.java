package io.rpctimer.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** How {@code rpc-timer.*} properties become Dubbo properties, and how bad values are refused. */
class DubboDefaultsTest {

    @Test
    void noRpcTimerProperty_writesNothing_soTheLibraryDefaultsApply() {
        assertEquals(Map.of(), EnvironmentRun.dubboProperties(Map.of()));
    }

    @Test
    void everyProperty_mapsOntoItsUrlKey_atConsumerOrProviderLevel() {
        Map<String, Object> in = new LinkedHashMap<>();
        in.put("rpc-timer.default-cluster", "true");
        in.put("rpc-timer.retries", "5");
        in.put("rpc-timer.failbacktasks", "250");
        in.put("rpc-timer.timeoutcheck", "true");
        in.put("rpc-timer.failback.delay", "2s");
        in.put("rpc-timer.failback.max-delay", "30000");
        in.put("rpc-timer.failback.multiplier", "1.5");
        in.put("rpc-timer.failback.jitter", "0");
        in.put("rpc-timer.failback.retry-on", "java.io.IOException, java.util.concurrent.TimeoutException");
        in.put("rpc-timer.failback.overflow", "spill");
        in.put("rpc-timer.failback.store-down", "memory");
        in.put("rpc-timer.failback.store", "embedded");
        in.put("rpc-timer.failback.store-dir", "/var/lib/app/journal");
        in.put("rpc-timer.failback.budget.ratio", "0.5");
        in.put("rpc-timer.failback.budget.min-rate", "25");
        in.put("rpc-timer.dedup.enabled", "true");
        in.put("rpc-timer.dedup.store", "datasource");
        in.put("rpc-timer.dedup.size", "1000");
        in.put("rpc-timer.dedup.started", "45s");
        in.put("rpc-timer.dedup.done", "5m");
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("dubbo.consumer.cluster", "wheelfailback");
        expected.put("dubbo.consumer.retries", 5);
        expected.put("dubbo.consumer.parameters.failbacktasks", 250);
        expected.put("dubbo.consumer.parameters.timeoutcheck", true);
        expected.put("dubbo.consumer.parameters.failback.delay", 2000L);
        expected.put("dubbo.consumer.parameters.failback.maxdelay", 30000L);
        expected.put("dubbo.consumer.parameters.failback.multiplier", 1.5);
        expected.put("dubbo.consumer.parameters.failback.jitter", 0.0);
        expected.put("dubbo.consumer.parameters.failback.retryon",
                "java.io.IOException,java.util.concurrent.TimeoutException");
        expected.put("dubbo.consumer.parameters.failback.overflow", "spill");
        expected.put("dubbo.consumer.parameters.failback.store.down", "memory");
        expected.put("dubbo.consumer.parameters.failback.budget.ratio", 0.5);
        expected.put("dubbo.consumer.parameters.failback.budget.minrate", 25.0);
        expected.put("dubbo.consumer.parameters.failback.store", "embedded");
        expected.put("dubbo.consumer.parameters.failback.store.dir", "/var/lib/app/journal");
        expected.put("dubbo.provider.parameters.retrydedup", true);
        expected.put("dubbo.provider.parameters.retrydedup.store", "datasource");
        expected.put("dubbo.provider.parameters.retrydedup.size", 1000L);
        expected.put("dubbo.provider.parameters.retrydedup.started", 45000L);
        expected.put("dubbo.provider.parameters.retrydedup.done", 300000L);
        assertEquals(expected, EnvironmentRun.dubboProperties(in));
    }

    @Test
    void datasourceStore_isTheLibrarysJdbcStore_withNoUrlUserOrPasswordParameter() {
        Map<String, Object> out = EnvironmentRun.dubboProperties(Map.of("rpc-timer.failback.store", "datasource"));
        assertEquals(Map.of("dubbo.consumer.parameters.failback.store", "jdbc"), out);
    }

    @Test
    void applicationsOwnDubboConsumerCluster_allowsRetries_andIsNotOverwritten() {
        Map<String, Object> out = EnvironmentRun.dubboProperties(Map.of("dubbo.consumer.cluster", "wheelfailback",
                "rpc-timer.retries", "0"));
        assertEquals(Map.of("dubbo.consumer.retries", 0), out);
    }

    @Test
    void disabled_writesNothing() {
        assertEquals(Map.of(), EnvironmentRun.dubboProperties(Map.of("rpc-timer.enabled", "false",
                "rpc-timer.failback.jitter", "7")));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "rpc-timer.retries|-1|expected: >= 0",
        "rpc-timer.failbacktasks|0|expected: >= 1",
        "rpc-timer.failback.delay|0|milliseconds in 1..",
        "rpc-timer.failback.delay|1500us|whole milliseconds",
        "rpc-timer.failback.delay|2m|<= rpc-timer.failback.max-delay (default 60000 ms)",
        "rpc-timer.failback.max-delay|-5s|milliseconds in 1..",
        "rpc-timer.failback.multiplier|0.5|a number in [1, 1000000]",
        "rpc-timer.failback.multiplier|NaN|a number in [1, 1000000]",
        "rpc-timer.failback.jitter|1.5|a number in [0, 1]",
        "rpc-timer.failback.retry-on|com.example.NoSuchException|com.example.NoSuchException was not found",
        "rpc-timer.failback.retry-on|java.lang.String|java.lang.String is not a Throwable",
        "rpc-timer.failback.budget.ratio|-0.1|a number in [0, 1000000]",
        "rpc-timer.failback.budget.min-rate|2e9|a number in [0, 1000000000]",
        "rpc-timer.failback.store-dir|'  '|a directory",
        "rpc-timer.dedup.size|0|1..100000000 entries",
        "rpc-timer.dedup.started|2d|milliseconds in 1..86400000",
        "rpc-timer.dedup.done|0s|milliseconds in 1..2592000000",
    })
    void badValue_failsNamingThePropertyAndTheValue(String property, String value, String expected) {
        InvalidConfigurationPropertyValueException e = assertThrows(InvalidConfigurationPropertyValueException.class,
                () -> EnvironmentRun.dubboProperties(Map.of(property, value, "rpc-timer.default-cluster", "true")));
        assertEquals(property, e.getName());
        assertTrue(e.getMessage().contains("Property " + property + " with value '"), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void retriesWithoutTheWheelfailbackConsumerCluster_isRefused_becauseFailoverReferencesWouldReadThem() {
        InvalidConfigurationPropertyValueException e = assertThrows(InvalidConfigurationPropertyValueException.class,
                () -> EnvironmentRun.dubboProperties(Map.of("rpc-timer.retries", "4")));
        assertEquals("rpc-timer.retries", e.getName());
        assertTrue(e.getMessage().contains("consumer-level cluster of wheelfailback"), e.getMessage());
    }

    @Test
    void maxDelayBelowDelay_namesMaxDelayAndTheDelay() {
        InvalidConfigurationPropertyValueException e = assertThrows(InvalidConfigurationPropertyValueException.class,
                () -> EnvironmentRun.dubboProperties(Map.of("rpc-timer.failback.delay", "3s",
                        "rpc-timer.failback.max-delay", "2s")));
        assertEquals("Property rpc-timer.failback.max-delay with value '2000ms' is invalid: expected: >="
                + " rpc-timer.failback.delay (3000 ms)", e.getMessage());
    }

    @Test
    void spillWithoutAJournal_isRefused() {
        InvalidConfigurationPropertyValueException e = assertThrows(InvalidConfigurationPropertyValueException.class,
                () -> EnvironmentRun.dubboProperties(Map.of("rpc-timer.failback.overflow", "spill",
                        "rpc-timer.failback.store", "memory")));
        assertEquals("rpc-timer.failback.overflow", e.getName());
        assertTrue(e.getMessage().contains("spill needs a journal"), e.getMessage());
    }

    @Test
    void aBudgetThatAllowsNoRetry_isRefused() {
        InvalidConfigurationPropertyValueException e = assertThrows(InvalidConfigurationPropertyValueException.class,
                () -> EnvironmentRun.dubboProperties(Map.of("rpc-timer.failback.budget.ratio", "0",
                        "rpc-timer.failback.budget.min-rate", "0")));
        assertEquals("rpc-timer.failback.budget.min-rate", e.getName());
    }

    @Test
    void storeDirWithAnotherStore_isRefused() {
        InvalidConfigurationPropertyValueException e = assertThrows(InvalidConfigurationPropertyValueException.class,
                () -> EnvironmentRun.dubboProperties(Map.of("rpc-timer.failback.store", "datasource",
                        "rpc-timer.failback.store-dir", "/tmp/j")));
        assertEquals("rpc-timer.failback.store-dir", e.getName());
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "rpc-timer.failback.delay|soon",
        "rpc-timer.failback.overflow|drop",
        "rpc-timer.failback.store|jdbc",
        "rpc-timer.failback.jitter|a lot",
    })
    void unconvertibleValue_failsBindingNamingTheProperty(String property, String value) {
        BindException e = assertThrows(BindException.class,
                () -> EnvironmentRun.dubboProperties(Map.of(property, value)));
        assertEquals(property, e.getProperty().getName().toString());
        assertEquals(value, String.valueOf(e.getProperty().getValue()));
    }
}
