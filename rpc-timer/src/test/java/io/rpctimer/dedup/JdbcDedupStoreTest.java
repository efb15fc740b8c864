package io.rpctimer.dedup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** {@link JdbcDedupStore} on H2, when its database does not answer or answers and refuses when the store is made. */
class JdbcDedupStoreTest {

    private static final String KEY = "group/io.rpctimer.Greeting:1.0#greet#r-1";

    /** What {@link #dataSource} throws at {@code getConnection} now; null: it connects. */
    private final AtomicReference<SQLException> fault = new AtomicReference<>();

    private DataSource dataSource() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:dedup-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    SQLException f = fault.get();
                    if (f != null && method.getName().equals("getConnection")) {
                        throw f;
                    }
                    try {
                        return method.invoke(h2, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aStoreMadeWhileItsDatabaseIsDownCreatesItsTableAtTheFirstClaimThatReachesIt() {
        DataSource db = dataSource();
        fault.set(new SQLException("Connection refused", "08001"));
        JdbcDedupStore store = new JdbcDedupStore(db, DedupWindows.defaults());

        DedupStoreException down = assertThrows(DedupStoreException.class, () -> store.claim(KEY));
        assertTrue(down.getMessage().contains("rpc_retry_dedup"), down.getMessage());

        fault.set(null);
        Claim first = store.claim(KEY);
        assertEquals(Claim.Status.CLAIMED, first.status());
        store.done(first);
        assertEquals(Claim.Status.ALREADY_DONE, store.claim(KEY).status());
    }

    @Test
    void aDatabaseThatAnswersAndRefusesFailsTheStoreAtOnce() {
        DataSource db = dataSource();
        fault.set(new SQLException("password authentication failed for user \"app\"", "28P01"));
        DedupStoreException e = assertThrows(DedupStoreException.class,
                () -> new JdbcDedupStore(db, DedupWindows.defaults()));
        assertTrue(e.getCause().getMessage().contains("password authentication failed"), String.valueOf(e.getCause()));
    }
}
