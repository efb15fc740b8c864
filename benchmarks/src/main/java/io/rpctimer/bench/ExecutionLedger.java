package io.rpctimer.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a "provider" saw: how many times each of {@code calls} calls (ids {@code c-0} .. {@code c-<calls-1>}) was
 * executed, counted where the execution happens. Ledgers of several processes are written to files and
 * {@link #tally added up}: a call counted 0 times in every ledger was lost, one counted twice or more (in one ledger
 * or across them) ran twice.
 *
 * <p><b>Threading:</b> {@link #executed} is thread-safe and lock-free; {@link #write} reads a moment's counts.
 */
public final class ExecutionLedger {

    private static final String PREFIX = "c-";

    private final AtomicIntegerArray counts;
    private final LongAdder executions = new LongAdder();
    private final LongAdder foreign = new LongAdder();

    /**
     * @param calls how many calls the run has
     * @throws IllegalArgumentException if {@code calls < 1}
     */
    public ExecutionLedger(int calls) {
        if (calls < 1) {
            throw new IllegalArgumentException("calls: " + calls + " (expected: >= 1)");
        }
        this.counts = new AtomicIntegerArray(calls);
    }

    /** @return the id of call {@code index}: {@code c-<index>} */
    public static String id(int index) {
        return PREFIX + index;
    }

    /** Counts one execution of the call {@code id}; an id that is not one of this run's is counted as foreign. */
    public void executed(String id) {
        executions.increment();
        int index = index(id);
        if (index < 0 || index >= counts.length()) {
            foreign.increment();
            return;
        }
        counts.incrementAndGet(index);
    }

    /** @return executions counted so far, foreign ones included */
    public long executions() {
        return executions.sum();
    }

    private static int index(String id) {
        if (id == null || !id.startsWith(PREFIX)) {
            return -1;
        }
        try {
            return Integer.parseInt(id, PREFIX.length(), id.length(), 10);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Writes the counts, one byte a call (saturating at 127), then the foreign executions' count. */
    public void write(Path file) throws IOException {
        byte[] bytes = new byte[counts.length() + 8];
        for (int i = 0; i < counts.length(); i++) {
            bytes[i] = (byte) Math.min(127, counts.get(i));
        }
        long f = foreign.sum();
        for (int b = 0; b < 8; b++) {
            bytes[counts.length() + b] = (byte) (f >>> (8 * b));
        }
        Files.write(file, bytes);
    }

    /**
     * Adds up the ledgers {@link #write} wrote for one run.
     *
     * @param calls the run's calls
     * @return {@code calls}, {@code executions}, {@code lost} (calls executed nowhere), {@code ranTwice} (calls
     *     executed more than once, anywhere), {@code extraExecutions} (executions past the first of each call) and
     *     {@code foreign} (executions of ids that are not the run's)
     * @throws IOException if a file cannot be read or does not hold {@code calls} counts
     */
    public static Map<String, Long> tally(int calls, List<Path> files) throws IOException {
        int[] total = new int[calls];
        long foreign = 0;
        for (Path f : files) {
            byte[] bytes = Files.readAllBytes(f);
            if (bytes.length != calls + 8) {
                throw new IOException(f + ": " + bytes.length + " bytes (expected: " + (calls + 8) + ")");
            }
            for (int i = 0; i < calls; i++) {
                total[i] += bytes[i];
            }
            long fileForeign = 0;
            for (int b = 0; b < 8; b++) {
                fileForeign |= (bytes[calls + b] & 0xFFL) << (8 * b);
            }
            foreign += fileForeign;
        }
        long executions = 0;
        long lost = 0;
        long twice = 0;
        for (int n : total) {
            executions += n;
            lost += n == 0 ? 1 : 0;
            twice += n > 1 ? 1 : 0;
        }
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("calls", (long) calls);
        m.put("executions", executions + foreign);
        m.put("lost", lost);
        m.put("ranTwice", twice);
        m.put("extraExecutions", executions - (calls - lost));
        m.put("foreign", foreign);
        return m;
    }
}
