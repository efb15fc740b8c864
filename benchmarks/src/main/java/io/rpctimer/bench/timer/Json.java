package io.rpctimer.bench.timer;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A minimal JSON writer for the result file: maps, lists, strings, numbers, booleans and null. Non-finite numbers
 * are written as null.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class Json {

    private Json() {
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, 0);
        return out.append('\n').toString();
    }

    private static void write(Object value, StringBuilder out, int indent) {
        if (value instanceof Map<?, ?> map) {
            writeMap(map, out, indent);
        } else if (value instanceof List<?> list) {
            writeList(list, out, indent);
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            out.append(Double.isFinite(d) ? String.format(Locale.ROOT, "%.6g", d).replaceFirst("\\.?0+(e|$)", "$1")
                    : "null");
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value == null) {
            out.append("null");
        } else {
            writeString(value.toString(), out);
        }
    }

    private static void writeMap(Map<?, ?> map, StringBuilder out, int indent) {
        if (map.isEmpty()) {
            out.append("{}");
            return;
        }
        out.append("{\n");
        int i = 0;
        for (Map.Entry<?, ?> e : map.entrySet()) {
            pad(out, indent + 1);
            writeString(String.valueOf(e.getKey()), out);
            out.append(": ");
            write(e.getValue(), out, indent + 1);
            out.append(++i < map.size() ? ",\n" : "\n");
        }
        pad(out, indent);
        out.append('}');
    }

    private static void writeList(List<?> list, StringBuilder out, int indent) {
        boolean flat = list.stream().noneMatch(v -> v instanceof Map || v instanceof List);
        if (flat) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                write(list.get(i), out, indent);
                out.append(i + 1 < list.size() ? ", " : "");
            }
            out.append(']');
            return;
        }
        out.append("[\n");
        for (int i = 0; i < list.size(); i++) {
            pad(out, indent + 1);
            write(list.get(i), out, indent + 1);
            out.append(i + 1 < list.size() ? ",\n" : "\n");
        }
        pad(out, indent);
        out.append(']');
    }

    private static void writeString(String s, StringBuilder out) {
        out.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static void pad(StringBuilder out, int indent) {
        out.append("  ".repeat(indent));
    }
}
