package io.rpctimer.bench.happypath;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Judges the rounds of several {@link CallCost} runs of the same code together, as one run judges its own
 * ({@link CallCostSummary}, {@link CallCost#PAIRS}): each file's phase lines are read back, its rounds before
 * {@code first} left out, and each round of each file kept a round of its own, since a round's ratio compares
 * configurations measured in the same round of the same run. Each file is a run: the interval resamples the files,
 * then the rounds within each ({@link CallCostSummary}). After the verdicts it prints each run's own ratio per pair,
 * and, for runs made with {@code --groups 1}, each thread group's share of each pair's difference
 * ({@link CallCostGroups}: groups with at least 0.05 µs a call, or a difference that large).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.happypath.CallCostPool first run.txt [run.txt ...]
 * </pre>
 *
 * <p><b>Threading:</b> single-threaded {@code main}.
 */
public final class CallCostPool {

    /** A phase line of a {@link CallCost} run: round, mode, configuration, bytes, thread CPU, process CPU, GC. */
    static final Pattern PHASE = Pattern.compile(
            "^\\s*(\\d+) (sync|async)\\s+(\\S+)\\s+(\\d+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s*$");
    private CallCostPool() {
    }

    /**
     * @param lines  a {@link CallCost} run's output
     * @param first  its first round that counts
     * @param run    the run's number, 0..
     * @return its phases from round {@code first} on
     */
    static List<CallCostSummary.Phase> phases(List<String> lines, int first, int run) {
        List<CallCostSummary.Phase> out = new ArrayList<>();
        for (String line : lines) {
            Matcher m = PHASE.matcher(line);
            if (m.matches() && Integer.parseInt(m.group(1)) >= first) {
                out.add(new CallCostSummary.Phase(run, Integer.parseInt(m.group(1)), m.group(2), m.group(3),
                        Double.parseDouble(m.group(5)), Double.parseDouble(m.group(4))));
            }
        }
        return out;
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: CallCostPool <first round> <CallCost output> [<CallCost output> ...]");
            System.exit(2);
            return;
        }
        int first = Integer.parseInt(args[0]);
        CallCostSummary summary = new CallCostSummary(1);
        CallCostGroups groups = new CallCostGroups(first);
        for (int i = 1; i < args.length; i++) {
            List<String> lines = Files.readAllLines(Path.of(args[i]), StandardCharsets.UTF_8);
            groups.add(lines, i - 1);
            List<CallCostSummary.Phase> phases = phases(lines, first, i - 1);
            System.out.printf(Locale.ROOT, "%s: %d phases from round %d on%n", args[i], phases.size(), first);
            phases.forEach(summary::add);
        }
        System.out.println();
        List<CallCostSummary.Verdict> verdicts = summary.verdicts(CallCost.PAIRS);
        System.out.print(CallCostSummary.markdown(verdicts, CallCost.THRESHOLD));
        System.out.println();
        System.out.print(CallCostSummary.runRatios(verdicts));
        List<CallCostGroups.Delta> deltas = groups.deltas(CallCost.PAIRS);
        if (!deltas.isEmpty()) {
            System.out.println();
            System.out.print(CallCostGroups.markdown(deltas, 0.05));
        }
    }
}
