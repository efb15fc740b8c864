package io.rpctimer.demo.provider.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

class DurationsTest {

    @ParameterizedTest
    @CsvSource({
        "500ms, 500", "5s, 5000", "1.5s, 1500", "1m, 60000", "1min, 60000", "2h, 7200000", "0, 0", "0ms, 0",
        "'  250 MS ', 250", "5 s, 5000", "10sec, 10000", "0.25s, 250"})
    void parse_acceptsNumberAndUnit(String text, long millis) {
        assertEquals(Duration.ofMillis(millis), Durations.parse("latency", text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"5x", "", "ms", "-1s", "5", "1,5s", "1.5.0s", "s5", "1e3ms"})
    void parse_rejectsMalformedText_namingParameterAndValue(String text) {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> Durations.parse("hang", text));
        assertEquals("hang: \"" + text + "\" (expected: a number and a unit ms, s, m or h, e.g. 500ms, 5s, 1.5s, 1m; or 0)",
                e.getMessage());
    }

    @Test
    void parse_rejectsFractionsOfAMillisecond_andNull() {
        assertEquals("down: \"1.5ms\" (expected: a whole number of milliseconds, at most 9223372036854775807 ms)",
                assertThrows(IllegalArgumentException.class, () -> Durations.parse("down", "1.5ms")).getMessage());
        assertEquals("down: null (expected: a number and a unit ms, s, m or h, e.g. 500ms, 5s, 1.5s, 1m; or 0)",
                assertThrows(IllegalArgumentException.class, () -> Durations.parse("down", null)).getMessage());
    }

    @ParameterizedTest
    @CsvSource({
        "0, 0 ms", "250, 250 ms", "999, 999 ms", "1000, 1 s", "1500, 1.5 s", "59999, 59.999 s", "60000, 1 min",
        "125000, 2 min 5 s", "90500, 1 min 30.5 s", "3600000, 1 h", "5400000, 1 h 30 min"})
    void format_usesTheLargestShortUnits(long millis, String text) {
        assertEquals(text, Durations.format(Duration.ofMillis(millis)));
    }

    @Test
    void format_dropsSubMilliseconds_andRejectsNegatives() {
        assertEquals("1 ms", Durations.format(Duration.ofNanos(1_999_999)));
        assertEquals("duration: PT-1S (expected: >= 0)",
                assertThrows(IllegalArgumentException.class, () -> Durations.format(Duration.ofSeconds(-1)))
                        .getMessage());
    }

    @Test
    void formatOfParse_roundTrips() {
        for (String text : new String[] {"500ms", "2s", "1.5s", "3m"}) {
            Duration d = Durations.parse("d", text);
            assertEquals(d, Durations.parse("d", Durations.format(d).replace(" min", "m").replace(" ", "")));
        }
    }
}
