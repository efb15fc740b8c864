package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** What the lifecycle keeps of a failure: short, shared, and never a secret the provider's message carried. */
class FailureTextTest {

    @ParameterizedTest
    @ValueSource(strings = {
            "cannot reach jdbc:postgresql://db/app?user=app&password=s3cret: refused",
            "login failed for user app, password: s3cret",
            "jdbc:h2:file:/data/x;PASSWORD=s3cret is locked",
            "upstream http://app:s3cret@inventory:8080/stock answered 503",
            "401 from gateway (Authorization: Bearer s3cret)",
            "config {\"apiKey\": \"s3cret\"} rejected",
            "token=s3cret expired",
            "secret:s3cret, retry later"})
    void aSecretInTheMessageIsHidden_andTheRestKept(String message) {
        String text = FailureText.of(new IllegalStateException(message));

        assertFalse(text.contains("s3cret"), text);
        assertTrue(text.startsWith("java.lang.IllegalStateException: "), text);
        assertTrue(text.contains("***"), text);
    }

    @Test
    void aMessageWithoutASecretIsKeptAsItIs() {
        assertEquals("java.net.ConnectException: connect to 127.0.0.1:20880 refused (tokens left: 0)",
                FailureText.of(new ConnectException("connect to 127.0.0.1:20880 refused (tokens left: 0)")));
        assertEquals("java.lang.IllegalStateException", FailureText.of(new IllegalStateException()));
        assertNull(FailureText.of(null));
    }

    @Test
    void aSecretPastTheLengthKeptIsHiddenBeforeTheTextIsCut() {
        String text = FailureText.of(new IllegalStateException("x".repeat(FailureText.MAX_CHARS - 60)
                + " password=s3cret-that-runs-far-past-the-end-of-the-kept-text-" + "s3cret".repeat(20)));

        assertTrue(text.length() <= FailureText.MAX_CHARS, text);
        assertTrue(text.endsWith(" password=***"), text);
    }
}
