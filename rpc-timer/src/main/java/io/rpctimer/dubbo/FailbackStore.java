package io.rpctimer.dubbo;

import io.rpctimer.journal.EmbeddedJournal;
import io.rpctimer.journal.JdbcRetryJournal;
import io.rpctimer.journal.JdbcUrls;
import io.rpctimer.retry.DeadLetterPolicy;
import io.rpctimer.retry.DurationText;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalException;
import java.io.PrintWriter;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
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
 *   <li>{@value #URL_KEY}, {@value #USER}: for {@code jdbc}, the database;
 *   <li>{@value #LEASE}: for {@code jdbc}, the instance's lease in ms (default 30000, at least 30): another instance
 *       adopts this one's calls once it has not renewed its lease for that long, by the database's clock;
 *   <li>{@value #CLAIM_PERIOD}: with a journal, how often each reference claims its service's calls again, in ms
 *       (default 10000, at least 100): calls of instances that died are adopted within a lease and a claim period;
 *       a journal's dead letters are trimmed and counted as often;
 *   <li>{@value #DEAD_RETENTION}: how long a call abandoned after its retries is kept as a dead letter (default
 *       {@code 7d}; a duration such as {@code 12h}, {@code 30m}, or milliseconds; at least 1 s);
 *   <li>{@value #DEAD_MAX}: how many dead letters the application keeps at most (default 100000; past it the oldest
 *       are dropped; 0 keeps none). With {@code memory}, dead letters are kept in memory: lost at restart;
 *   <li>the password of {@code jdbc}: the JVM system property {@code rpctimer.failback.store.password}, else the
 *       environment variable {@value #PASSWORD_ENV}, read when the store opens. Never a URL parameter: Dubbo registers
 *       a consumer's URL parameters in the registry, where whoever can read the registry sees them, so a reference
 *       whose URL carries {@value #PASSWORD}, or a {@value #URL_KEY} with a password in it, fails at creation.
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
    /** For {@code jdbc}: how long after its last renewal another instance may adopt this one's calls, in ms. */
    static final String LEASE = "failback.store.lease";
    /** With a journal: how often each reference claims its service's calls again (adopting dead instances'), in ms. */
    static final String CLAIM_PERIOD = "failback.store.claimperiod";
    /** How long a dead letter is kept: a duration ({@code 7d}, {@code 12h}, or milliseconds). */
    static final String DEAD_RETENTION = "failback.dead.retention";
    /** How many dead letters the application keeps at most; 0 keeps none. */
    static final String DEAD_MAX = "failback.dead.max";
    static final long DEFAULT_LEASE_MILLIS = 30_000;
    static final long DEFAULT_CLAIM_PERIOD_MILLIS = 10_000;
    static final String PASSWORD = "failback.store.password";
    /** The environment variable that gives the password of {@code jdbc} when the system property does not. */
    static final String PASSWORD_ENV = "RPCTIMER_FAILBACK_STORE_PASSWORD";
    /** Prefix of the JVM system properties that give each key's default. */
    static final String SYSTEM_PREFIX = "rpctimer.";

    private static final Map<String, DataSource> DATA_SOURCES = new ConcurrentHashMap<>();

    private final RetryJournal journal;
    private final long claimPeriodMillis;
    private final DeadLetterPolicy deadLetters;

    private FailbackStore(RetryJournal journal, long claimPeriodMillis, DeadLetterPolicy deadLetters) {
        this.journal = journal;
        this.claimPeriodMillis = claimPeriodMillis;
        this.deadLetters = deadLetters;
    }

    /** @return a store that keeps failed calls (and dead letters) in memory only */
    static FailbackStore memory(DeadLetterPolicy deadLetters) {
        return new FailbackStore(null, DEFAULT_CLAIM_PERIOD_MILLIS, deadLetters);
    }

    /** @return how many dead letters the application keeps, for how long, trimmed every claim period */
    DeadLetterPolicy deadLetterPolicy() {
        return deadLetters;
    }

    /** @return how often each reference claims its service's calls again, in milliseconds */
    long claimPeriodMillis() {
        return claimPeriodMillis;
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
     * @throws IllegalArgumentException naming key and value, if a key is invalid or the store cannot be opened (a
     *                                  shared database that does not answer is opened later instead)
     */
    static FailbackStore open(URL url) {
        refuseSecrets(url);
        String application = FailbackRuntime.application(url);
        DataSource given = DATA_SOURCES.get(application);
        // a DataSource given for this application is more specific than the JVM-wide default, not than the URL
        String kind = url.getParameter(STORE);
        if (kind == null) {
            kind = given != null ? "jdbc" : System.getProperty(SYSTEM_PREFIX + STORE, "embedded");
        }
        DeadLetterPolicy dead = deadLetterPolicy(url);
        return switch (kind.trim().toLowerCase(Locale.ROOT)) {
            case "memory" -> memory(dead);
            case "embedded" -> embedded(url, application, dead);
            case "jdbc" -> jdbc(url, application, given, dead);
            default -> throw invalid(url, STORE, kind, "embedded, memory or jdbc");
        };
    }

    /** @return {@value #DEAD_RETENTION} and {@value #DEAD_MAX}, trimmed every {@value #CLAIM_PERIOD} */
    private static DeadLetterPolicy deadLetterPolicy(URL url) {
        String retention = value(url, DEAD_RETENTION, null);
        Duration kept = DeadLetterPolicy.DEFAULT_RETENTION;
        if (retention != null) {
            try {
                kept = DurationText.parse(DEAD_RETENTION, retention);
            } catch (IllegalArgumentException e) {
                throw invalid(url, DEAD_RETENTION, retention, "a duration >= 1s such as 7d, 12h, or milliseconds");
            }
            if (kept.compareTo(Duration.ofSeconds(1)) < 0) {
                throw invalid(url, DEAD_RETENTION, retention, "a duration >= 1s such as 7d, 12h, or milliseconds");
            }
        }
        long max = count(url, DEAD_MAX, DeadLetterPolicy.DEFAULT_MAX);
        return new DeadLetterPolicy(kept, max, Duration.ofMillis(millis(url, CLAIM_PERIOD,
                DEFAULT_CLAIM_PERIOD_MILLIS, 100)));
    }

    private static FailbackStore embedded(URL url, String application, DeadLetterPolicy dead) {
        String dir = value(url, DIR, Path.of(System.getProperty("user.home"), ".rpc-timer", "journal").toString());
        Path base;
        try {
            base = Path.of(dir);
        } catch (InvalidPathException e) {
            throw invalid(url, DIR, dir, "a directory path");
        }
        try {
            return new FailbackStore(EmbeddedJournal.open(base, application), millis(url, CLAIM_PERIOD,
                    DEFAULT_CLAIM_PERIOD_MILLIS, 100), dead);
        } catch (RetryJournalException | IllegalArgumentException e) {
            throw new IllegalArgumentException(invalid(url, DIR, dir, "a directory the journal can open: " + e)
                    .getMessage(), e);
        }
    }

    private static FailbackStore jdbc(URL url, String application, DataSource given, DeadLetterPolicy dead) {
        DataSource dataSource = given;
        String jdbcUrl = value(url, URL_KEY, null);
        if (dataSource == null) {
            if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:")) {
                throw invalid(url, URL_KEY, jdbcUrl, "a JDBC URL (jdbc:...) when " + STORE + "=jdbc, or a DataSource"
                        + " given by WheelFailback.useJournalDataSource(\"" + application + "\", ...)");
            }
            dataSource = new DriverManagerDataSource(jdbcUrl, value(url, USER, null), password());
        }
        long leaseMillis = millis(url, LEASE, DEFAULT_LEASE_MILLIS, 30);
        long claimPeriodMillis = millis(url, CLAIM_PERIOD, DEFAULT_CLAIM_PERIOD_MILLIS, 100);
        try {
            // a database that does not answer now is an outage, not a wrong setting: the journal opens when it does
            return new FailbackStore(JdbcRetryJournal.builder(dataSource)
                    .name(jdbcUrl != null && given == null ? JdbcUrls.redact(jdbcUrl) : "DataSource of " + application)
                    .lease(Duration.ofMillis(leaseMillis)).buildOrOpenLater(), claimPeriodMillis, dead);
        } catch (RetryJournalException | IllegalArgumentException e) {
            throw new IllegalArgumentException(invalid(url, given == null ? URL_KEY : STORE,
                    given == null ? jdbcUrl : "jdbc", "a database the journal can open: " + e).getMessage(), e);
        }
    }

    /**
     * A secret in a reference's URL is published in the registry: refuse it, naming the key but never the value.
     *
     * @throws IllegalArgumentException if the URL carries {@value #PASSWORD}, or a {@value #URL_KEY} with a password
     */
    static void refuseSecrets(URL url) {
        String where = "; Dubbo registers a consumer's URL parameters in the registry, where whoever can read the"
                + " registry sees them. Pass the password as the JVM system property " + SYSTEM_PREFIX + PASSWORD
                + " or the environment variable " + PASSWORD_ENV + ", or give a DataSource"
                + " (WheelFailback.useJournalDataSource)";
        if (url.getParameter(PASSWORD) != null) {
            throw new IllegalArgumentException("wheelfailback: " + PASSWORD + " is a URL parameter of "
                    + url.getServiceInterface() + where);
        }
        for (String key : url.getParameters().keySet()) {
            if (key.equalsIgnoreCase("password")) { // a ';' in failback.store.url makes its PASSWORD=... a parameter
                throw new IllegalArgumentException("wheelfailback: " + key + " is a URL parameter of "
                        + url.getServiceInterface() + " (a ';' in " + URL_KEY + " makes each of its properties one)"
                        + where);
            }
        }
        if (JdbcUrls.hasSecret(url.getParameter(URL_KEY))) {
            throw new IllegalArgumentException("wheelfailback: " + URL_KEY + " of " + url.getServiceInterface()
                    + " carries a password (" + JdbcUrls.redact(url.getParameter(URL_KEY)) + ")" + where);
        }
    }

    /** @return the password of {@code jdbc}: the system property, else the environment variable, else null */
    private static String password() {
        String p = System.getProperty(SYSTEM_PREFIX + PASSWORD);
        return p != null ? p : System.getenv(PASSWORD_ENV);
    }

    /** @return a duration key's value in milliseconds, at least {@code min} */
    private static long millis(URL url, String key, long defaultMillis, long min) {
        String raw = value(url, key, null);
        if (raw == null) {
            return defaultMillis;
        }
        try {
            long v = Long.parseLong(raw.trim());
            if (v >= min) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw invalid(url, key, raw, "milliseconds >= " + min);
    }

    /** @return a count key's value, at least 0 */
    private static long count(URL url, String key, long defaultValue) {
        String raw = value(url, key, null);
        if (raw == null) {
            return defaultValue;
        }
        try {
            long v = Long.parseLong(raw.trim());
            if (v >= 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw invalid(url, key, raw, "a whole number >= 0 (0 keeps no dead letter)");
    }

    /** @return the URL's value of {@code key}, else the system property {@code rpctimer.<key>}, else the default */
    static String value(URL url, String key, String defaultValue) {
        String raw = url.getParameter(key);
        return raw != null ? raw : System.getProperty(SYSTEM_PREFIX + key, defaultValue);
    }

    static IllegalArgumentException invalid(URL url, String key, String raw, String expected) {
        return new IllegalArgumentException("wheelfailback: invalid " + key + "=" + JdbcUrls.redact(raw) + " for "
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
            return "DriverManagerDataSource(" + JdbcUrls.redact(url) + ")";
        }
    }
}
