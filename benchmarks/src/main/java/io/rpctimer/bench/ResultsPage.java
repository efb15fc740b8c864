package io.rpctimer.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The command line of a report that turns a runner's JSON files into a doc page's tables: {@code <json>...
 * [--doc <page>]} prints the tables, and with {@code --doc} puts them in the page between its marker lines.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
public final class ResultsPage {

    private ResultsPage() {
    }

    /**
     * @param args     the JSON files, and {@code --doc <page>}
     * @param begin    the page's line before the tables
     * @param end      the page's line after them
     * @param markdown the tables of the runs read
     */
    @SuppressWarnings("unchecked")
    public static void run(String[] args, String begin, String end,
                           Function<List<Map<String, Object>>, String> markdown) throws IOException {
        List<Map<String, Object>> runs = new ArrayList<>();
        Path doc = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--doc")) {
                doc = Path.of(args[++i]);
            } else {
                runs.add(new ObjectMapper().readValue(Path.of(args[i]).toFile(), Map.class));
            }
        }
        String md = markdown.apply(runs);
        System.out.print(md);
        if (doc != null) {
            Files.writeString(doc, splice(Files.readString(doc), begin, end, md));
        }
    }

    /** @return {@code page} with the text between its {@code begin} and {@code end} lines replaced by {@code tables} */
    public static String splice(String page, String begin, String end, String tables) {
        int b = page.indexOf(begin);
        int e = page.indexOf(end);
        if (b < 0 || e < b) {
            throw new IllegalArgumentException("doc: no " + begin + " ... " + end + " section");
        }
        return page.substring(0, b + begin.length()) + "\n" + tables + page.substring(e);
    }

    /**
     * Writes a runner's results to {@code <out>/<part>-<mode>[-<label>].json} and prints its tables.
     *
     * @return the JSON file written
     */
    public static Path write(Path out, String part, String mode, String label, Map<String, Object> results,
                             Function<List<Map<String, Object>>, String> markdown) throws IOException {
        Files.createDirectories(out);
        Path json = out.resolve(part + "-" + mode + (label.isEmpty() ? "" : "-" + label) + ".json");
        Files.writeString(json, Json.write(results));
        System.out.println("wrote " + json);
        System.out.print(markdown.apply(List.of(results)));
        return json;
    }
}
