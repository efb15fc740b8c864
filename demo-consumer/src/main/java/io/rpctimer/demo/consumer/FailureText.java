package io.rpctimer.demo.consumer;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.dubbo.rpc.RpcException;

/**
 * Says in a few words why a call or a retry failed, for the demo's one-line events: {@code no provider available},
 * {@code timed out after 500 ms}, {@code injected RPC error (error 30%)}, {@code 10 retries already pending
 * (failbacktasks=10)}... Dubbo's own messages run to several lines; the expected failures of the demo never print a
 * stack trace.
 *
 * <p><b>Threading:</b> stateless, thread-safe.
 */
public final class FailureText {

    private static final int MAX_LENGTH = 90;
    private static final Pattern INJECTED = Pattern.compile("injected RPC error \\([^)]*\\)");
    private static final Pattern PENDING = Pattern.compile("\\d+ retries already pending \\(failbacktasks=\\d+\\)");
    private static final Pattern AFTER_MS = Pattern.compile(
            "(?:timed out after|timeout after|elapsed:?)\\s*(\\d+)\\s*ms", Pattern.CASE_INSENSITIVE);
    private static final Pattern REJECTED_BY = Pattern.compile("rejected \\S+ \\(([^)]*)\\)");

    private FailureText() {
    }

    /**
     * @param failure a failure, with its causes; may be null
     * @return a short description, one line, at most 90 characters; {@code "-"} for null
     */
    public static String of(Throwable failure) {
        if (failure == null) {
            return "-";
        }
        String all = messages(failure);
        Matcher m = PENDING.matcher(all);
        if (m.find()) {
            return m.group();
        }
        m = INJECTED.matcher(all);
        if (m.find()) {
            return m.group();
        }
        if (all.contains("No provider available")) {
            return "no provider available";
        }
        if (isTimeout(failure, all)) {
            Matcher ms = AFTER_MS.matcher(all);
            return ms.find() ? "timed out after " + ms.group(1) + " ms" : "timed out";
        }
        if (has(failure, "NotificationRejectedException")) {
            Matcher r = REJECTED_BY.matcher(all);
            return "business failure: rejected by the provider" + (r.find() ? " (" + r.group(1) + ")" : "");
        }
        String lower = all.toLowerCase(Locale.ROOT);
        if (lower.contains("failed to connect") || lower.contains("connection refused")) {
            return "cannot connect";
        }
        if (lower.contains("channel") && lower.contains("closed")) {
            return "connection closed";
        }
        return shorten(root(failure).getClass().getSimpleName() + ": " + firstLine(root(failure).getMessage()));
    }

    private static boolean isTimeout(Throwable failure, String all) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RpcException rpc && rpc.isTimeout()
                    || t.getClass().getSimpleName().equals("TimeoutException")) {
                return true;
            }
        }
        return all.contains("timed out") || all.contains("Waiting server-side response timeout");
    }

    private static boolean has(Throwable failure, String simpleName) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getClass().getSimpleName().equals(simpleName)) {
                return true;
            }
        }
        return false;
    }

    private static String messages(Throwable failure) {
        StringBuilder b = new StringBuilder();
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 10; t = t.getCause() == t ? null : t.getCause(), depth++) {
            b.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append('\n');
        }
        return b.toString();
    }

    private static Throwable root(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t.getCause() != null && t.getCause() != t && depth < 10; depth++) {
            t = t.getCause();
        }
        return t;
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }

    private static String shorten(String text) {
        return text.length() <= MAX_LENGTH ? text : text.substring(0, MAX_LENGTH - 3) + "...";
    }
}
