package io.rpctimer.chaos;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * An append-only file of records, one line each, written with one unbuffered {@code write()} per line: once
 * {@link #append} returned, the line is in the kernel and survives a {@code kill -9} of this process (not a crash of
 * the machine, which the chaos run does not inject).
 *
 * <p><b>Threading:</b> thread-safe: lines of concurrent writers never interleave.
 */
final class RecordFile implements AutoCloseable {

    private final FileOutputStream out;

    /** Opens {@code path} for appending, creating it and its directories if absent. */
    RecordFile(Path path) throws IOException {
        Files.createDirectories(path.toAbsolutePath().getParent());
        this.out = new FileOutputStream(path.toFile(), true);
    }

    /**
     * Appends one record: its fields joined by a space; a field must hold no space nor line break.
     *
     * @throws UncheckedIOException if the write fails: a record the harness cannot keep must stop the run
     */
    void append(Object... fields) {
        StringBuilder b = new StringBuilder();
        for (Object f : fields) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(f);
        }
        byte[] line = b.append('\n').toString().getBytes(StandardCharsets.UTF_8);
        synchronized (this) {
            try {
                out.write(line);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot append a record", e);
            }
        }
    }

    /** @return the records of {@code path}, each split into its fields; a torn last line is dropped */
    static List<String[]> read(Path path) throws IOException {
        if (!Files.exists(path)) {
            return List.of();
        }
        String text = Files.readString(path, StandardCharsets.UTF_8);
        int end = text.lastIndexOf('\n');
        if (end < 0) {
            return List.of();
        }
        return text.substring(0, end).lines().filter(l -> !l.isBlank()).map(l -> l.split(" ")).toList();
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }
}
