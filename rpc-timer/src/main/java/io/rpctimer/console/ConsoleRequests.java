package io.rpctimer.console;

import com.sun.net.httpserver.HttpExchange;
import io.rpctimer.retry.DeadLetterWords;
import io.rpctimer.retry.ReplayResult;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.retry.RetryLifecycle;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Answers the console's requests for one application ({@link FailbackConsole} lists the paths). Refuses, with 403 and
 * without acting: a request whose {@code Host} is not an IP address, {@code localhost} or the configured host; a
 * {@code POST} whose {@code Origin} is another site's; a {@code replay} or {@code purge} that is not a {@code POST}, or
 * whose {@code token} field is missing or wrong. Dead-letter requests are read by {@link DeadLetterWords}, as the QoS
 * command's, and refused in the same words and with the same status.
 *
 * <p><b>Threading:</b> thread-safe; the server's threads call {@link #handle} concurrently.
 */
final class ConsoleRequests {

    private static final int MAX_BODY = 16 * 1024;
    private static final String PAGE = page();

    private final RetryLifecycle lifecycle;
    private final OutcomesPerMinute outcomes;
    private final ConsoleToken token;
    private final String configuredHost;

    ConsoleRequests(RetryLifecycle lifecycle, OutcomesPerMinute outcomes, ConsoleToken token, String configuredHost) {
        this.lifecycle = lifecycle;
        this.outcomes = outcomes;
        this.token = token;
        this.configuredHost = configuredHost;
    }

    void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            if (!hostAllowed(exchange.getRequestHeaders().getFirst("Host"))) {
                send(exchange, 403, "text/plain", "forbidden: the Host header names no address of this console");
            } else if (path.equals("/replay") || path.equals("/purge")) {
                change(exchange, method, path.substring(1));
            } else if (!method.equals("GET")) {
                send(exchange, 405, "text/plain", "method: " + method + " (expected: GET)");
            } else {
                read(exchange, path);
            }
        }
    }

    private void read(HttpExchange exchange, String path) throws IOException {
        switch (path) {
            case "/" -> send(exchange, 200, "text/html", PAGE.replace("{{APPLICATION}}", html(lifecycle.application()))
                    .replace("{{TOKEN}}", token.reveal()));
            case "/state.json" -> send(exchange, 200, "application/json", ConsoleViews.state(lifecycle, outcomes));
            case "/call.json" -> {
                String id = form(exchange.getRequestURI().getRawQuery()).get("id");
                send(exchange, id == null ? 400 : 200, "application/json", id == null
                        ? ConsoleViews.error(400, "id: none (expected: ?id=<retry.id>)")
                        : ConsoleViews.history(lifecycle, id));
            }
            default -> send(exchange, 404, "text/plain", "not found: " + path);
        }
    }

    private void change(HttpExchange exchange, String method, String action) throws IOException {
        if (!method.equals("POST") || !originAllowed(exchange)) {
            send(exchange, 403, "application/json", ConsoleViews.error(403, action + ": refused (expected: a POST"
                    + " from the console's page, with its token)"));
            return;
        }
        Map<String, String> form = form(FailbackConsole.body(exchange, MAX_BODY));
        if (!token.matches(form.get("token"))) {
            send(exchange, 403, "application/json", ConsoleViews.error(403, "token: missing or wrong (expected: the"
                    + " token of the console's page; reload the page)"));
            return;
        }
        try {
            DeadLetterWords words = DeadLetterWords.change(action, form.get("target"), form.get("rate"));
            String answer = words.onEach(List.of(lifecycle), l -> answer(words, l)).get(0);
            send(exchange, 200, "application/json", answer);
        } catch (IllegalArgumentException | IllegalStateException | RetryJournalException e) {
            int status = DeadLetterWords.status(e);
            send(exchange, status, "application/json", ConsoleViews.error(status, DeadLetterWords.explain(e)));
        }
    }

    private static String answer(DeadLetterWords words, RetryLifecycle l) throws RetryJournalException {
        Object result = words.apply(l.deadLetters());
        return result instanceof ReplayResult r ? ConsoleViews.replayed(l.application(), r)
                : ConsoleViews.purged(l.application(), (Long) result);
    }

    /** A page of another site may post a form here: its browser names that site as the Origin. */
    private static boolean originAllowed(HttpExchange exchange) {
        String origin = exchange.getRequestHeaders().getFirst("Origin");
        String host = exchange.getRequestHeaders().getFirst("Host");
        return origin == null || origin.equalsIgnoreCase("http://" + host);
    }

    /**
     * A page of another site can point its own name at this address (DNS rebinding) and then read the console as its
     * own origin; its requests carry that name as the Host. Only addresses, {@code localhost} and the configured host
     * are let through.
     */
    boolean hostAllowed(String hostHeader) {
        if (hostHeader == null) {
            return false;
        }
        String host = hostHeader.startsWith("[") ? hostHeader.substring(1, Math.max(1, hostHeader.indexOf(']')))
                : hostHeader.replaceFirst(":\\d*$", "");
        host = host.toLowerCase(Locale.ROOT);
        return host.equals("localhost") || host.equalsIgnoreCase(configuredHost) || host.contains(":")
                || host.matches("\\d{1,3}(\\.\\d{1,3}){3}");
    }

    static Map<String, String> form(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            out.put(name, eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        return out;
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        var headers = exchange.getResponseHeaders();
        headers.set("Content-Type", type + "; charset=utf-8");
        headers.set("Cache-Control", "no-store");
        headers.set("X-Content-Type-Options", "nosniff");
        headers.set("X-Frame-Options", "DENY");
        headers.set("Referrer-Policy", "no-referrer");
        headers.set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src"
                + " 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static String html(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static String page() {
        try (InputStream in = ConsoleRequests.class.getResourceAsStream("console.html")) {
            if (in == null) {
                throw new IllegalStateException("console.html: not on the class path (expected: next to "
                        + ConsoleRequests.class.getName() + ")");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
