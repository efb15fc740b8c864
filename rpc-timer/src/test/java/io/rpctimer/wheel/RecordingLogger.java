package io.rpctimer.wheel;

import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;

/**
 * A {@link System.Logger} that records each call (level and whether a throwable came with it), and can be told to
 * throw from the next calls. Single-threaded use only.
 */
final class RecordingLogger implements System.Logger {

    /** One recorded call. */
    record Entry(Level level, String message, Throwable thrown) {
    }

    final List<Entry> entries = new ArrayList<>();
    int throwOnNext;

    @Override
    public String getName() {
        return "recording";
    }

    @Override
    public boolean isLoggable(Level level) {
        return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
        record(new Entry(level, msg, thrown));
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        record(new Entry(level, format, null));
    }

    private void record(Entry entry) {
        entries.add(entry);
        if (throwOnNext > 0) {
            throwOnNext--;
            throw new IllegalStateException("logger failed (test)");
        }
    }

    long withThrowable() {
        return entries.stream().filter(e -> e.thrown() != null).count();
    }
}
