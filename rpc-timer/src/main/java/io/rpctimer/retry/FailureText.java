package io.rpctimer.retry;

import java.util.concurrent.ConcurrentHashMap;

/**
 * A failure as the retry lifecycle keeps it: its class name and a short message, never the {@link Throwable}
 * itself (a stack trace and a message with full URLs cost kilobytes per pending call). Equal texts are shared
 * through a small bounded table, since many calls fail the same way during an outage.
 *
 * <p><b>Threading:</b> thread-safe, stateless apart from the shared table.
 */
final class FailureText {

    /** The longest text kept, in characters. */
    static final int MAX_CHARS = 120;
    private static final int MAX_SHARED = 1024;
    private static final ConcurrentHashMap<String, String> SHARED = new ConcurrentHashMap<>();

    private FailureText() {
    }

    /** @return {@code "ClassName: message"} at most {@link #MAX_CHARS} long, or null for null */
    static String of(Throwable failure) {
        if (failure == null) {
            return null;
        }
        String message = failure.getMessage();
        String text = failure.getClass().getName() + (message == null ? "" : ": " + message);
        return shared(text.length() <= MAX_CHARS ? text : text.substring(0, MAX_CHARS - 1) + "…");
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
