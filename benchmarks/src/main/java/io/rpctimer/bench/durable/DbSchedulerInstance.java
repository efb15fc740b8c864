package io.rpctimer.bench.durable;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.SchedulerName;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import io.rpctimer.bench.ExecutionLedger;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * One db-scheduler instance: a {@link Scheduler} with one one-time task whose execution handler is the provider (it
 * counts the execution in the {@link ExecutionLedger} and returns), on db-scheduler's published PostgreSQL table,
 * polling with {@code lock-and-fetch} (its recommended strategy past 1,000 executions/s). Built stopped;
 * {@link #go} starts it, and it picks due executions from then on.
 *
 * <p><b>Threading:</b> build, {@link #go} and {@link #close} from one thread.
 */
final class DbSchedulerInstance implements AutoCloseable {

    static final String TASK = "durable-call";

    /**
     * db-scheduler's settings for throughput: executor threads, and {@code pollUsingLockAndFetch(lower, upper)} (a
     * batch of up to {@code upper × threads} executions is locked and fetched when at most {@code lower × threads}
     * are left), and the polling interval when a fetch came back short.
     */
    record Tuning(int threads, double lower, double upper, long pollingIntervalMillis) {
    }

    private final Scheduler scheduler;

    DbSchedulerInstance(DataSource dataSource, String table, String name, Tuning tuning, ExecutionLedger ledger) {
        OneTimeTask<byte[]> task = task(ledger);
        this.scheduler = Scheduler.create(dataSource, task).tableName(table).threads(tuning.threads())
                .pollUsingLockAndFetch(tuning.lower(), tuning.upper())
                .pollingInterval(Duration.ofMillis(tuning.pollingIntervalMillis()))
                .schedulerName(new SchedulerName.Fixed(name)).build();
    }

    private static OneTimeTask<byte[]> task(ExecutionLedger ledger) {
        return Tasks.oneTime(TASK, byte[].class).execute((instance, context) -> ledger.executed(instance.getId()));
    }

    /** Starts polling. */
    void go() {
        scheduler.start();
    }

    @Override
    public void close() {
        scheduler.stop();
    }

    /**
     * Creates db-scheduler's table {@code table} as its published PostgreSQL DDL does
     * ({@code postgresql_tables.sql}), indexes named after the table.
     */
    static void createTable(DataSource dataSource, String table) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table);
            st.execute("CREATE TABLE " + table + " (task_name text not null, task_instance text not null,"
                    + " task_data bytea, execution_time timestamp with time zone not null, picked BOOLEAN not null,"
                    + " picked_by text, last_success timestamp with time zone, last_failure timestamp with time zone,"
                    + " consecutive_failures INT, last_heartbeat timestamp with time zone, version BIGINT not null,"
                    + " priority SMALLINT, PRIMARY KEY (task_name, task_instance))");
            st.execute("CREATE INDEX " + table + "_execution_time_idx ON " + table + " (execution_time)");
            st.execute("CREATE INDEX " + table + "_last_heartbeat_idx ON " + table + " (last_heartbeat)");
            st.execute("CREATE INDEX " + table + "_priority_execution_time_idx ON " + table
                    + " (priority desc, execution_time asc)");
        }
    }

    /**
     * Schedules executions {@code c-from} .. {@code c-(to-1)}, due now, each with {@code payload} as its data, with
     * db-scheduler's own client in batches of 1,000.
     */
    static void load(DataSource dataSource, String table, int from, int to, byte[] payload) {
        SchedulerClient client = SchedulerClient.Builder.create(dataSource, task(null)).tableName(table).build();
        OneTimeTask<byte[]> task = task(null);
        for (int start = from; start < to; start += 1_000) {
            List<TaskInstance<?>> batch = new ArrayList<>();
            for (int i = start; i < Math.min(to, start + 1_000); i++) {
                batch.add(task.instance(ExecutionLedger.id(i), payload));
            }
            client.scheduleBatch(batch, Instant.now());
        }
    }
}
