package io.rpctimer.console;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * The per-process secret that a state-changing console request must carry: 32 random bytes from
 * {@link SecureRandom}, base64url, made once per JVM and embedded in the page the console serves. Whoever can load
 * the page can act; a page of another origin cannot read it, so it cannot forge a request. Never logged, never part of
 * an error, a URL or a Dubbo parameter.
 *
 * <p><b>Threading:</b> immutable; thread-safe.
 */
final class ConsoleToken {

    /** The JVM's token, shared by the consoles of every application. */
    static final ConsoleToken PROCESS = new ConsoleToken(random());

    private final byte[] value;

    ConsoleToken(String value) {
        this.value = value.getBytes(StandardCharsets.US_ASCII);
    }

    private static String random() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** @return whether {@code presented} is the token, compared in time independent of where they differ */
    boolean matches(String presented) {
        return presented != null
                && MessageDigest.isEqual(value, presented.getBytes(StandardCharsets.US_ASCII));
    }

    /** @return the token, for the page only */
    String reveal() {
        return new String(value, StandardCharsets.US_ASCII);
    }

    @Override
    public String toString() {
        return "ConsoleToken[******]";
    }
}
