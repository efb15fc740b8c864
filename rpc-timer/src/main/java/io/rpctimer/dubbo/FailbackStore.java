package io.rpctimer.dubbo;

import io.rpctimer.journal.EmbeddedJournal;
import io.rpctimer.journal.JdbcRetryJournal;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalException;
import java.io.PrintWriter;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.apache.dubbo.common.URL;

/**
 * Where the failed calls of one Dubbo application are kept while they wait: a {@link RetryJournal} (embedded H2, or a
 * shared database over JDBC), or memory only. Chosen once per application, from the consumer URL of its first
 * {@code wheelfailback} reference; each key's default is the JVM system property {@code rpctimer.<key>}, so that a
 * container or a test suite can set it for every application:
 * <ul>
 *   <li>{@value #STORE}: {@code embedded} (default), {@code memory} or {@code jdbc};
 *   <li>{@value #DIR}: for {@code embedded}, the directory under which each application gets its own
 *       {@code <application>/} directory (default {@code ${user.home}/.rpc-timer/journal});
 *   <li>{@value #URL_KEY}, {@value #USER}, {@value #PASSWORD}: for {@code jdbc}, the database.
 * </ul>
 * A {@link DataSource} given by {@link WheelFailback#useJournalDataSource} for the application selects {@code jdbc}
 * on it, unless the URL's {@value #STORE} says otherwise (it takes precedence over the system property).
 *
 * <p><b>Threading:</b> immutable once opened; {@link #close()} is idempotent.
 */
final class FailbackStore implements AutoCloseable {

    static final String STORE = "failback.store";
    static final String DIR = "failback.store.dir";
    static final String URL_KEY = "failback.store.url";
    static final String USER = "failback.store.user";
    static final String PASSWORD = "failback.store.password";
    /** Prefix of the JVM system properties that give each key's default. */
    static final String SYSTEM_PREFIX = "rpctimer.";

    private static final Map<String, DataSource> DATA_SOURCES = new ConcurrentHashMap<>();

    private final RetryJournal journal;

    private FailbackStore(RetryJournal journal) {
        this.journal = journal;
    }

    /** @return a store that keeps failed calls in memory only */
    static FailbackStore memory() {
        return new FailbackStore(null);
    }

    /** @return the application's journal, or null when calls are kept in memory only */
    RetryJournal journal() {
        return journal;
    }

    static void useDataSource(String application, DataSource dataSource) {
        DATA_SOURCES.put(application, dataSource);
    }

    /**
     * @param url the consumer URL of the application's first reference
     * @throws IllegalArgumentException naming key and value, if a key is invalid or the store cannot be opened
     */
    static FailbackStore open(URL url) {
        String application = FailbackRuntime.application(url);
        DataSource given = DATA_SOURCES.get(application);
        // a DataSource given for this application is more specific than the JVM-wide default, not than the URL
        String kind = url.getParameter(STORE);
        if (kind == null) {
            kind = given != null ? "jdbc" : System.getProperty(SYSTEM_PREFIX + STORE, "embedded");
        }
        return switch (kind.trim().toLowerCase(Locale.ROOT)) {
            case "memory" -> memory();
            case "embedded" -> embedded(url, application);
            case "jdbc" -> jdbc(url, application, given);
            default -> throw invalid(url, STORE, kind, "embedded, memory or jdbc");
        };
    }

    private static FailbackStore embedded(URL url, String application) {
        String dir = value(url, DIR, Path.of(System.getProperty("user.home"), ".rpc-timer", "journal").toString());
        Path base;
        try {
            base = Path.of(dir);
        } catch (InvalidPathException e) {
            throw invalid(url, DIR, dir, "a directory path");
        }
        try {
            return new FailbackStore(EmbeddedJournal.open(base, application));
        } catch (RetryJournalException | IllegalArgumentException e) {
            throw new IllegalArgumentException(invalid(url, DIR, dir, "a directory the journal can open: " + e)
                    .getMessage(), e);
        }
    }

    private static FailbackStore jdbc(URL url, String application, DataSource given) {
        DataSource dataSource = given;
        String jdbcUrl = value(url, URL_KEY, null);
        if (dataSource == null) {
            if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:")) {
                throw invalid(url, URL_KEY, jdbcUrl, "a JDBC URL (jdbc:...) when " + STORE + "=jdbc, or a DataSource"
                        + " given by WheelFailback.useJournalDataSource(\"" + application + "\", ...)");
            }
            dataSource = new DriverManagerDataSource(jdbcUrl, value(url, USER, null), value(url, PASSWORD, null));
        }
        try {
            return new FailbackStore(JdbcRetryJournal.builder(dataSource)
                    .name(jdbcUrl != null && given == null ? jdbcUrl : "DataSource of " + application).build());
        } catch (RetryJournalException | IllegalArgumentException e) {
            throw new IllegalArgumentException(invalid(url, given == null ? URL_KEY : STORE,
                    given == null ? jdbcUrl : "jdbc", "a database the journal can open: " + e).getMessage(), e);
        }
    }

    /** @return the URL's value of {@code key}, else the system property {@code rpctimer.<key>}, else the default */
    static String value(URL url, String key, String defaultValue) {
        String raw = url.getParameter(key);
        return raw != null ? raw : System.getProperty(SYSTEM_PREFIX + key, defaultValue);
    }

    static IllegalArgumentException invalid(URL url, String key, String raw, String expected) {
        return new IllegalArgumentException("wheelfailback: invalid " + key + "=" + raw + " for "
                + url.getServiceInterface() + " (expected: " + expected + ")");
    }

    /** @return a line for logs: where the calls are kept */
    String describe() {
        return journal == null ? "memory (not durable)" : journal.describe();
    }

    @Override
    public void close() {
        if (journal != null) {
            journal.close();
        }
    }

    /** A {@link DataSource} on {@link DriverManager}: a new connection per call (the journal's writer keeps
     * its own open). */
    private record DriverManagerDataSource(String url, String user, String password) implements DataSource {

        @Override
        public Connection getConnection() throws SQLException {
            return getConnection(user, password);
        }

        @Override
        public Connection getConnection(String username, String pass) throws SQLException {
            return username == null ? DriverManager.getConnection(url) : DriverManager.getConnection(url, username, pass);
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
            // DriverManager logs on its own writer
        }

        @Override
        public void setLoginTimeout(int seconds) {
            DriverManager.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() {
            return DriverManager.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException("no parent logger");
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper of " + iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }

        @Override
        public String toString() {
            return "DriverManagerDataSource(" + url + ")";
        }
    }
}
