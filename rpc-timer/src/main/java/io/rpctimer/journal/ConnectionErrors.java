package io.rpctimer.journal;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * Tells a database that did not answer from one that answered and refused, for the stores that open on a shared
 * database ({@link JdbcRetryJournal.Builder#buildOrOpenLater()}, {@code JdbcDedupStore}): the first is an outage, to be
 * waited out, the second a wrong setting, to be reported at once.
 *
 * <p><b>Threading:</b> stateless.
 */
public final class ConnectionErrors {

    private ConnectionErrors() {
    }

    /**
     * @return whether {@code e}, or a cause of it, is a connection error: SQLState class 08, a
     *     {@link SQLTransientConnectionException} (a pool that timed out), or a connection refused, timed out, with no
     *     route, or to a host that does not resolve. Not so for a database that answered and refused (credentials, a
     *     database that does not exist, no right to create a table) or is not supported.
     */
    public static boolean unreachable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLTransientConnectionException || t instanceof ConnectException
                    || t instanceof NoRouteToHostException || t instanceof SocketTimeoutException
                    || t instanceof UnknownHostException) {
                return true;
            }
            if (t instanceof SQLException s && s.getSQLState() != null && s.getSQLState().startsWith("08")) {
                return true;
            }
        }
        return false;
    }
}
