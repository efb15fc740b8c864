package io.rpctimer.retry;

import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * A failure as the retry lifecycle keeps it: its class name and a short message, never the {@link Throwable}
 * itself (a stack trace and a message with full URLs cost kilobytes per pending call). Equal texts are shared
 * through a small bounded table, since many calls fail the same way during an outage.
 *
 * <p>The text is what the journal keeps, and what dead letters, the QoS command, the Actuator endpoint and the live
 * page show, so a secret that a provider's message carries is hidden before anything else sees it: the value of a
 * {@code password=}, {@code token:}, {@code secret=} (and the like), the password of a {@code //user:password@host}
 * URL, and a {@code Bearer} credential become {@code ***}.
 *
 * <p><b>Threading:</b> thread-safe, stateless apart from the shared table.
 */
final class FailureText {

    /** The longest text kept, in characters. */
    static final int MAX_CHARS = 120;
    private static final int MAX_SHARED = 1024;
    private static final ConcurrentHashMap<String, String> SHARED = new ConcurrentHashMap<>();
    /** A name that says a secret follows, then {@code =} or {@code :}, then the secret (up to a separator). */
    private static final Pattern NAMED_SECRET = Pattern.compile("(?i)((?:password|passwd|pwd|secret|token|api[_-]?key"
            + "|access[_-]?key|credentials?|[a-z0-9_.-]*password)[\"']?\\s*[=:]\\s*[\"']?)[^\\s&;,'\")}\\]]+");
    /** The password of a {@code //user:password@host} authority. */
    private static final Pattern USER_INFO = Pattern.compile("(//[^/\\s:@]*:)[^@/\\s]+@");
    private static final Pattern BEARER = Pattern.compile("(?i)(bearer\\s+)[^\\s,;\"']+");

    private FailureText() {
    }

    /**
     * @return {@code "ClassName: message"} with its secrets hidden, at most {@link #MAX_CHARS} long, or null for
     *     null
     */
    static String of(Throwable failure) {
        if (failure == null) {
            return null;
        }
        String message = failure.getMessage();
        String text = failure.getClass().getName() + (message == null ? "" : ": " + redact(message));
        return shared(text.length() <= MAX_CHARS ? text : text.substring(0, MAX_CHARS - 1) + "…");
    }

    /** @return {@code message} with the value of every secret it names replaced by {@code ***} */
    static String redact(String message) {
        String out = NAMED_SECRET.matcher(message).replaceAll("$1***");
        out = USER_INFO.matcher(out).replaceAll("$1***@");
        return BEARER.matcher(out).replaceAll("$1***");
    }

    /** @return {@code text}, or an equal string already held (null for null) */
    static String shared(String text) {
        if (text == null) {
            return null;
        }
        String held = SHARED.get(text);
        if (held != null) {
            return held;
        }
        if (SHARED.size() >= MAX_SHARED) {
            return text;
        }
        held = SHARED.putIfAbsent(text, text);
        return held == null ? text : held;
    }
}
