package io.rpctimer.dubbo;

import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.cluster.Directory;
import org.apache.dubbo.rpc.cluster.support.AbstractClusterInvoker;
import org.apache.dubbo.rpc.cluster.support.wrapper.AbstractCluster;

/**
 * The {@code wheelfailback} cluster: {@code <dubbo:reference cluster="wheelfailback">}. See
 * {@link WheelFailbackClusterInvoker}.
 *
 * <p>Dubbo keeps one instance per application. The first reference it joins borrows the JVM-wide shared wheel and
 * builds the application's retry lifecycle and store; when the application is destroyed, right before Dubbo destroys
 * its extensions, {@link #destroy()} runs ({@link ScopeCleanUp}): it hands the retries still pending over (kept in the
 * journal, or given to the {@link io.rpctimer.retry.RetryStore} without one), closes the journal and gives the wheel
 * back (the last holder stops it). No JVM shutdown hook.
 *
 * <p>On a Dubbo line rpc-timer does not support, joining a reference fails with {@link DubboSupport}'s message; this
 * class links only to types that Dubbo 2.7 has too, so that Dubbo can load it there to say so.
 *
 * <p><b>Threading:</b> thread-safe.
 */
public class WheelFailbackCluster extends AbstractCluster {

    /** The extension name. */
    public static final String NAME = "wheelfailback";

    private FailbackRuntime runtime; // guarded by this

    @Override
    protected <T> AbstractClusterInvoker<T> doJoin(Directory<T> directory) throws RpcException {
        DubboSupport.require("cluster " + NAME);
        return new WheelFailbackClusterInvoker<>(directory, runtime(directory));
    }

    private synchronized FailbackRuntime runtime(Directory<?> directory) {
        if (runtime == null) {
            ScopeCleanUp.withApplication(directory.getConsumerUrl(), this::destroy);
            runtime = new FailbackRuntime();
        }
        return runtime;
    }

    /** Hands the application's pending retries over and gives the wheel back; idempotent. */
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
