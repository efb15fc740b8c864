package io.rpctimer.dubbo;

import org.apache.dubbo.common.deploy.ApplicationDeployListener;
import org.apache.dubbo.common.utils.ClassUtils;
import org.apache.dubbo.rpc.model.ApplicationModel;

/**
 * Registers the failback meters of each Dubbo application in Dubbo's {@code MeterRegistry} when Micrometer and
 * Dubbo's metrics support are on the classpath, and does nothing when they are not. A Dubbo
 * {@link ApplicationDeployListener} ({@code META-INF/dubbo/org.apache.dubbo.common.deploy.ApplicationDeployListener}),
 * so Dubbo makes one per application.
 *
 * <p>The meters are bound when the application has started (its references exist, and with them its retry
 * lifecycle), looked for again whenever one of its modules starts, and removed when the application stops. This
 * class never names a Micrometer type: {@link FailbackMicrometer}, which does, is loaded only after the
 * class-presence check.
 *
 * <p><b>Threading:</b> Dubbo's deployer calls it; the binding is guarded by this instance's monitor.
 */
public final class FailbackMeterListener implements ApplicationDeployListener {

    /** Classes that must be present for the meters: Micrometer's registry, and Dubbo's holder of it. */
    static final String[] REQUIRED_CLASSES = {
        "io.micrometer.core.instrument.MeterRegistry", "org.apache.dubbo.metrics.MetricsGlobalRegistry"};

    /** The meters of one application; implemented by the Micrometer-facing class. */
    interface Binding {
        /** Starts counting the events of this application's lifecycles not counted yet. */
        void attach();

        /** Removes this application's meters from the registry. */
        void close();
    }

    private Binding binding; // guarded by this

    /** @return whether Micrometer and Dubbo's metrics support can be loaded from rpc-timer's class loader */
    public static boolean micrometerPresent() {
        for (String name : REQUIRED_CLASSES) {
            if (!ClassUtils.isPresent(name, FailbackMeterListener.class.getClassLoader())) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void onInitialize(ApplicationModel app) {
        // the application's references, and its lifecycle, exist only once it has started
    }

    @Override
    public void onStarting(ApplicationModel app) {
        // as onInitialize
    }

    @Override
    public synchronized void onStarted(ApplicationModel app) {
        if (binding == null && micrometerPresent()) {
            binding = FailbackMicrometer.bind(app);
        }
        if (binding != null) {
            binding.attach();
        }
    }

    @Override
    public void onModuleStarted(ApplicationModel app) {
        onStarted(app); // a module started later may have brought the application's first wheelfailback reference
    }

    @Override
    public void onStopping(ApplicationModel app) {
        // keep the meters while the references hand their pending calls over
    }

    @Override
    public synchronized void onStopped(ApplicationModel app) {
        if (binding != null) {
            binding.close();
            binding = null;
        }
    }

    @Override
    public void onFailure(ApplicationModel app, Throwable cause) {
        onStopped(app);
    }
}
