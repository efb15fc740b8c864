package io.rpctimer.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.spring.boot.it.TestApps;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** A real Spring Boot application with the starter refuses to start on a bad value, naming property and value. */
class StartupValidationTest {

    private static InvalidConfigurationPropertyValueException startupFailure(String... properties) {
        RuntimeException e = assertThrows(RuntimeException.class, () -> new SpringApplicationBuilder(
                TestApps.Consumer.class).properties("spring.main.web-application-type=none",
                "dubbo.application.name=validation", "dubbo.application.qos-enable=false",
                "dubbo.registry.address=N/A").properties(properties).run().close());
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InvalidConfigurationPropertyValueException invalid) {
                return invalid;
            }
        }
        throw new AssertionError("no InvalidConfigurationPropertyValueException in the chain", e);
    }

    @Test
    void aPolicyValueOutOfRange_failsStartup() {
        InvalidConfigurationPropertyValueException e = startupFailure("rpc-timer.failback.jitter=2");
        assertEquals("rpc-timer.failback.jitter", e.getName());
        assertEquals(2.0, e.getValue());
        assertTrue(e.getMessage().contains("a number in [0, 1]"), e.getMessage());
    }

    @Test
    void anUnusableLateStatus_failsStartup() {
        InvalidConfigurationPropertyValueException e = startupFailure("rpc-timer.health.late-status=not ok");
        assertEquals("rpc-timer.health.late-status", e.getName());
        assertEquals("not ok", e.getValue());
    }

    @Test
    void theDatasourceStoreWithoutADataSource_failsStartup() {
        InvalidConfigurationPropertyValueException e = startupFailure("rpc-timer.failback.store=datasource",
                "spring.autoconfigure.exclude=org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration");
        assertEquals("rpc-timer.failback.store", e.getName());
        assertTrue(e.getMessage().contains("a DataSource bean"), e.getMessage());
    }

    @Test
    void aDataSourceNameThatIsNoBean_failsStartup() {
        InvalidConfigurationPropertyValueException e = startupFailure("rpc-timer.dedup.store=datasource",
                "rpc-timer.data-source=noSuchDataSource");
        assertEquals("rpc-timer.data-source", e.getName());
        assertEquals("noSuchDataSource", e.getValue());
    }
}
