package io.rpctimer.console;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;

/**
 * A small JSON writer for the console's answers: objects, arrays, strings, numbers, booleans and null, written as
 * they are added. Strings are escaped so that the text is also safe inside HTML ({@code <}, {@code >} and {@code &}
 * as {@code \\u} escapes).
 *
 * <p><b>Threading:</b> not thread-safe; one per answer.
 */
final class Json {

    private final StringBuilder out = new StringBuilder();
    /** The closing characters of the containers still open, innermost first. */
    private final Deque<Character> open = new ArrayDeque<>();
    /** Whether the container being written needs a comma before its next member. */
    private boolean comma;

    Json object() {
        separate();
        return open('{', '}');
    }

    /** Closes the innermost object or array. */
    Json end() {
        if (open.isEmpty()) {
            throw new IllegalStateException("end: nothing open (expected: an object or array to close)");
        }
        out.append(open.pop());
        comma = true;
        return this;
    }

    private Json open(char opening, char closing) {
        out.append(opening);
        open.push(closing);
        comma = false;
        return this;
    }

    Json array(String name) {
        name(name);
        return open('[', ']');
    }

    Json object(String name) {
        name(name);
        return open('{', '}');
    }

    Json field(String name, Object value) {
        name(name);
        value(value);
        comma = true;
        return this;
    }

    Json fields(Map<String, ?> values) {
        values.forEach(this::field);
        return this;
    }

    /** Adds {@code value} to the array being written. */
    Json item(Object value) {
        separate();
        value(value);
        comma = true;
        return this;
    }

    @Override
    public String toString() {
        return out.toString();
    }

    private void name(String name) {
        separate();
        string(name);
        out.append(':');
    }

    private void separate() {
        if (comma) {
            out.append(',');
        }
    }

    private void value(Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else {
            string(value.toString());
        }
    }

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
