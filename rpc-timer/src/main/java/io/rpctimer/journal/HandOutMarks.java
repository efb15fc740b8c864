package io.rpctimer.journal;

import io.rpctimer.retry.CallKey;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * For a journal without a lease (a database only this process writes): how far this run has handed out, per service,
 * this instance's calls that an earlier run of it left on its wheel or parked (their {@code run_id} names that run).
 * Those are handed out without a write: a hand-out reads them in claim order ({@code due_at, retry_id, method}) and
 * moves the service's mark to the last one it took, and a call of an earlier run at or before the mark is this run's.
 * A restart that takes back a million calls then reads them and writes none; each is written by its first fence,
 * which makes it this run's ({@code run_id}) as it records the retry. Calls with no run ({@code run_id} NULL: moved in
 * from another slot, revived from the dead letters) and calls this run parked are still marked row by row.
 *
 * <p>The mark holds because no call of an earlier run appears or moves after the restart: calls are inserted with no
 * run or this run's, only a fence moves a call's due time (and makes it this run's), the other writes take a call
 * from this instance (release, bury, remove), and the hand-outs of one service run one at a time ({@link #lock}),
 * reading from the beginning of the claim order.
 *
 * <p><b>Threading:</b> thread-safe. A mark moves forward only, after the page that handed its calls out committed.
 */
final class HandOutMarks {

    /**
     * A call this run holds: this run's, or an earlier run's at or before the service's mark; seven parameters,
     * bound by {@link #bindHeld}. {@code prefix} qualifies the columns ("" or an alias and a dot).
     */
    static String held(String prefix) {
        return "(" + prefix + "run_id = ? OR " + prefix + "run_id <> ? AND (" + prefix + "due_at < ? OR " + prefix
                + "due_at = ? AND (" + prefix + "retry_id < ? OR " + prefix + "retry_id = ? AND " + prefix
                + "method <= ?)))";
    }

    /**
     * A call this run may hand out: with no run, parked by this run, or an earlier run's after the mark; seven
     * parameters, bound by {@link #bindPast}.
     */
    static final String PAST_MARK = "(run_id IS NULL OR run_id = ? AND parked = TRUE OR run_id <> ? AND (due_at > ?"
            + " OR due_at = ? AND (retry_id > ? OR retry_id = ? AND method > ?)))";

    /** Before every call: no call of an earlier run is this run's yet. */
    private static final ParkedPage.Key NONE = ParkedPage.Key.FIRST;

    private final String runId;
    private final ConcurrentHashMap<String, ParkedPage.Key> marks = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Object> locks = new ConcurrentHashMap<>();

    /** @param runId this run's id, the {@code run_id} of the calls it writes */
    HandOutMarks(String runId) {
        this.runId = runId;
    }

    /** @return whether a row of this owner with {@code rowRunId} is an earlier run's (handed out without a write) */
    boolean earlierRun(String rowRunId) {
        return rowRunId != null && !rowRunId.equals(runId);
    }

    /** @return what a hand-out of {@code service} holds while it reads and moves the mark */
    Object lock(String service) {
        return locks.computeIfAbsent(service, s -> new Object());
    }

    /**
     * Moves {@code service}'s mark to {@code last}, the last call of an earlier run a committed page handed out. The
     * caller holds {@link #lock}: a page reads such calls only after the mark, in the database's order, so
     * {@code last} lies after it.
     */
    void advance(String service, ParkedPage.Key last) {
        marks.put(service, last);
    }

    /** @return the name of a service's mark and lock */
    static String service(String application, String serviceKey) {
        return application + '\u0000' + serviceKey;
    }

    /**
     * Binds what tells that this run holds {@code key}: {@link #held}'s parameters with {@code marks}, else (the
     * statements of a journal with a lease) {@code runId}, from index {@code i}.
     *
     * @return the next index
     */
    static int bindHeld(HandOutMarks marks, String runId, PreparedStatement st, int i, CallKey key)
            throws SQLException {
        if (marks != null) {
            return marks.bindHeld(st, i, key);
        }
        st.setString(i, runId);
        return i + 1;
    }

    /** Binds {@link #held}'s parameters for {@code key} from index {@code i}; @return the next index */
    int bindHeld(PreparedStatement st, int i, CallKey key) throws SQLException {
        return bind(st, i, mark(service(key.application(), key.serviceKey())));
    }

    /** Binds {@link #PAST_MARK}'s parameters for a service from index {@code i}; @return the next index */
    int bindPast(PreparedStatement st, int i, String application, String serviceKey) throws SQLException {
        return bind(st, i, mark(service(application, serviceKey)));
    }

    private ParkedPage.Key mark(String service) {
        return marks.getOrDefault(service, NONE);
    }

    private int bind(PreparedStatement st, int i, ParkedPage.Key mark) throws SQLException {
        st.setString(i, runId);
        st.setString(i + 1, runId);
        st.setLong(i + 2, mark.dueAt());
        st.setLong(i + 3, mark.dueAt());
        st.setString(i + 4, mark.retryId());
        st.setString(i + 5, mark.retryId());
        st.setString(i + 6, mark.method());
        return i + 7;
    }
}
