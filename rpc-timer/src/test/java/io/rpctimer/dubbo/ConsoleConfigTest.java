package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apache.dubbo.common.URL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConsoleConfigTest {

    private static URL url(String query) {
        return URL.valueOf("consumer://127.0.0.1/com.example.Orders?" + query);
    }

    @Test
    void withoutAPortThereIsNoConsole() {
        ConsoleConfig c = ConsoleConfig.of(url("application=a"));
        assertEquals(-1, c.port());
        assertEquals("127.0.0.1", c.host(), "loopback unless said otherwise");
        assertNull(c.start(null), "nothing is started");
    }

    @Test
    void aPortAndAHostAreRead() {
        ConsoleConfig c = ConsoleConfig.of(url("failback.console.port=8089&failback.console.host=0.0.0.0"));
        assertEquals(8089, c.port());
        assertEquals("0.0.0.0", c.host());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "0", "65536", "-1"})
    void aBadPortFailsNamingKeyAndValue(String port) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConsoleConfig.of(url("failback.console.port=" + port)));
        assertEquals("wheelfailback: invalid failback.console.port=" + port + " for com.example.Orders (expected: a"
                + " TCP port, 1 to 65535)", e.getMessage());
    }
}
