package io.rpctimer.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.UncheckedIOException;

/**
 * Writes the benchmark result files: maps, lists, strings, numbers and booleans as indented JSON (Jackson), in the
 * maps' iteration order. A non-finite number is written as a string ({@code "NaN"}).
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
public final class Json {

    private static final ObjectWriter WRITER = new ObjectMapper().writerWithDefaultPrettyPrinter();

    private Json() {
    }

    /**
     * @param value the results, built of maps, lists and plain values
     * @return the indented JSON text, ending with a newline
     * @throws UncheckedIOException if {@code value} holds something Jackson cannot write
     */
    public static String write(Object value) {
        try {
            return WRITER.writeValueAsString(value) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("cannot write the results as JSON: " + e.getMessage(), e);
        }
    }
}
