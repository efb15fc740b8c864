package io.rpctimer.dubbo;

import org.apache.dubbo.common.resource.Disposable;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.cluster.Directory;
import org.apache.dubbo.rpc.cluster.support.AbstractClusterInvoker;
import org.apache.dubbo.rpc.cluster.support.wrapper.AbstractCluster;

/**
 * The {@code wheelfailback} cluster: {@code <dubbo:reference cluster="wheelfailback">}. See
 * {@link WheelFailbackClusterInvoker}.
 *
 * <p>Dubbo keeps one instance per application. The first reference it joins borrows the JVM-wide shared wheel and
 * builds the application's retry lifecycle and store; when the application is destroyed, Dubbo calls
 * {@link #destroy()}, which hands the retries still pending over (kept in the journal, or given to the
 * {@link io.rpctimer.retry.RetryStore} without one), closes the journal and gives the wheel back (the last holder
 * stops it). No JVM shutdown hook.
 *
 * <p><b>Threading:</b> thread-safe.
 */
public class WheelFailbackCluster extends AbstractCluster implements Disposable {

    /** The extension name. */
    public static final String NAME = "wheelfailback";

    private FailbackRuntime runtime; // guarded by this

    @Override
    protected <T> AbstractClusterInvoker<T> doJoin(Directory<T> directory) throws RpcException {
        return new WheelFailbackClusterInvoker<>(directory, runtime());
    }

    private synchronized FailbackRuntime runtime() {
        if (runtime == null) {
            runtime = new FailbackRuntime();
        }
        return runtime;
    }

    @Override
    public void destroy() {
        FailbackRuntime r;
        synchronized (this) {
            r = runtime;
            runtime = null;
        }
        if (r != null) {
            r.close();
        }
    }
}
