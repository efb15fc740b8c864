package io.rpctimer.spring.boot.actuate;

import java.util.regex.Pattern;

/**
 * Masks credentials in text the Actuator shows: the value after any {@code password}, {@code pwd}, {@code secret} or
 * {@code token} key ({@code key=value} or {@code key: value}, as in a JDBC URL or a Dubbo URL). The starter itself
 * never puts a credential in what rpc-timer reports (the DataSource store has no URL); this guards the texts it does
 * not control, such as a journal configured by URL or a failure message that quotes one.
 *
 * <p><b>Threading:</b> stateless.
 */
final class Redaction {

    static final String MASK = "******";
    private static final Pattern SECRET = Pattern.compile(
            "(?i)((?:password|passwd|pwd|secret|token)[\\w.-]*\\s*[=:]\\s*)[^&;,\\s)\\]}]+");

    private Redaction() {
    }

    /** @return {@code text} with every credential value masked; null for null */
    static String redact(String text) {
        return text == null ? null : SECRET.matcher(text).replaceAll("$1" + MASK);
    }
}
