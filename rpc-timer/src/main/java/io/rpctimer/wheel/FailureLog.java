package io.rpctimer.wheel;

import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;

/**
 * Logs one kind of recurring failure at a bounded rate: the first occurrence with its stack trace, then at most one
 * line per interval with how many occurred since the last line and the latest one's message. A failure that repeats
 * every tick (an executor that refuses or throws) would otherwise fill the log from the wheel's worker thread; the
 * retry journal's writer uses it the same way for a store that fails every commit. Shared by rpc-timer's own
 * packages; not an API for users.
 *
 * <p><b>Threading:</b> NOT thread-safe; one thread (the wheel's worker, the journal's writer) calls it, with one
 * clock in nanoseconds.
 */
public final class FailureLog {

    /** The shortest time between two lines after the first (10 s). */
    static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final System.Logger log;
    private final Level level;
    private final String what;
    private boolean loggedOnce;
    private long lastLineNanos;
    private long unreported;

    /**
     * @param log   where lines go
     * @param level the level of every line
     * @param what  the failure and its consequence, the start of every line
     */
    public FailureLog(System.Logger log, Level level, String what) {
        this.log = log;
        this.level = level;
        this.what = what;
    }

    /**
     * @param nowNanos the caller's time, in nanoseconds
     * @param failure  what happened
     */
    public void report(long nowNanos, Throwable failure) {
        if (!loggedOnce) {
            loggedOnce = true;
            lastLineNanos = nowNanos;
            log.log(level, what, failure);
            return;
        }
        unreported++;
        if (nowNanos - lastLineNanos >= INTERVAL_NANOS) {
            long count = unreported;
            long seconds = TimeUnit.NANOSECONDS.toSeconds(nowNanos - lastLineNanos);
            unreported = 0;
            lastLineNanos = nowNanos;
            log.log(level, what + ": " + count + " more in the last " + seconds + " s, the latest: " + failure);
        }
    }
}
