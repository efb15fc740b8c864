package io.rpctimer.spring.boot.actuate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class RedactionTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "jdbc:postgresql://db/app?user=app&password=hunter2&ssl=true|jdbc:postgresql://db/app?user=app&password=******&ssl=true",
        "retry journal jdbc:h2:mem:x;USER=sa;PASSWORD=s3cret (H2)|retry journal jdbc:h2:mem:x;USER=sa;PASSWORD=****** (H2)",
        "consumer://1.2.3.4/Api?failback.store.password=abc,def|consumer://1.2.3.4/Api?failback.store.password=******,def",
        "token: xyz, secret=1|token: ******, secret=******",
        "retry journal DataSource of app (POSTGRESQL), healthy|retry journal DataSource of app (POSTGRESQL), healthy",
    })
    void credentialValues_areMasked_andNothingElse(String text, String expected) {
        assertEquals(expected, Redaction.redact(text));
    }

    @Test
    void null_staysNull() {
        assertNull(Redaction.redact(null));
    }
}
