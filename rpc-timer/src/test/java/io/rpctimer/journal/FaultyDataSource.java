package io.rpctimer.journal;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Logger;

/**
 * A DataSource wrapper that injects store failures into every connection it gave out, old or new: the database
 * down (connections and statements throw), the disk full (statements throw what PostgreSQL says then), or slow
 * (statements and new connections block until {@link #heal}).
 *
 * <p><b>Threading:</b> thread-safe; the mode is volatile.
 */
final class FaultyDataSource implements DataSource {

    /**
     * DOWN: what a driver throws when the database does not answer; POOL_DOWN: what a pool that cannot start throws
     * then (HikariCP's {@code PoolInitializationException}: unchecked, the driver's exception its cause).
     */
    enum Mode { HEALTHY, DOWN, POOL_DOWN, DISK_FULL, HANG }

    private final DataSource delegate;
    private volatile Mode mode = Mode.HEALTHY;
    private volatile CountDownLatch healed = new CountDownLatch(0);
    /** Calls blocked in HANG now. */
    final java.util.concurrent.atomic.AtomicInteger hanging = new java.util.concurrent.atomic.AtomicInteger();
    final java.util.concurrent.atomic.AtomicInteger commits = new java.util.concurrent.atomic.AtomicInteger();
    /** The number (counted by {@link #commits}) of the one commit that fails; 0: none. */
    volatile int failCommit;
    /** How many of the next statement executions throw an unchecked exception (as a broken pool or driver may). */
    final java.util.concurrent.atomic.AtomicInteger runtimeFailures = new java.util.concurrent.atomic.AtomicInteger();

    FaultyDataSource(DataSource delegate) {
        this.delegate = delegate;
    }

    void inject(Mode mode) {
        if (mode == Mode.HANG) {
            healed = new CountDownLatch(1);
        }
        this.mode = mode;
    }

    /** The next commit, whichever connection makes it, blocks until {@link #heal}; the others go on. */
    void hangNextCommit() {
        healed = new CountDownLatch(1);
        commitsToHang.set(1);
    }

    private final java.util.concurrent.atomic.AtomicInteger commitsToHang =
            new java.util.concurrent.atomic.AtomicInteger();

    void heal() {
        mode = Mode.HEALTHY;
        healed.countDown();
    }

    private void fault() throws SQLException {
        switch (mode) {
            case DOWN -> throw new SQLException("Connection refused (injected: store down)", "08001");
            case POOL_DOWN -> throw new IllegalStateException("Failed to initialize pool: Connection refused"
                    + " (injected)", new SQLException("Connection refused (injected: store down)", "08001"));
            case DISK_FULL -> throw new SQLException("could not extend file: No space left on device (injected)",
                    "53100");
            case HANG -> {
                hanging.incrementAndGet();
                try {
                    healed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SQLException("interrupted while hanging (injected)", "08006", e);
                } finally {
                    hanging.decrementAndGet();
                }
            }
            case HEALTHY -> {
            }
        }
    }

    @Override
    public Connection getConnection() throws SQLException {
        fault();
        return wrap(Connection.class, delegate.getConnection());
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        fault();
        return wrap(Connection.class, delegate.getConnection(user, password));
    }

    @SuppressWarnings("unchecked")
    private <T> T wrap(Class<T> type, T target) {
        InvocationHandler handler = (proxy, method, args) -> {
            String name = method.getName();
            if (name.startsWith("execute") || name.equals("commit")) {
                fault();
            }
            if (name.startsWith("execute") && runtimeFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new IllegalStateException("connection pool shut down (injected)");
            }
            if (name.equals("commit") && commitsToHang.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                healed.await();
            }
            if (name.equals("commit") && commits.incrementAndGet() == failCommit) {
                throw new SQLException("connection reset during commit (injected)", "08006");
            }
            try {
                Object result = method.invoke(target, args);
                if (result instanceof Statement st && !name.equals("unwrap")) {
                    Class<?> iface = method.getReturnType();
                    return wrap((Class<Object>) iface, st);
                }
                return result;
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (T) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{type}, handler);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() {
        return Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return delegate.isWrapperFor(iface);
    }
}
