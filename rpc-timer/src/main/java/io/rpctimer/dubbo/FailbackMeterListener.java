package io.rpctimer.dubbo;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.dubbo.common.deploy.ApplicationDeployListener;
import org.apache.dubbo.common.logger.Logger;
import org.apache.dubbo.common.logger.LoggerFactory;
import org.apache.dubbo.common.utils.ClassUtils;
import org.apache.dubbo.rpc.model.ApplicationModel;

/**
 * Registers the failback meters of each Dubbo application in Dubbo's {@code MeterRegistry} when Micrometer and
 * Dubbo's metrics support are on the classpath, and does nothing when they are not. A Dubbo
 * {@link ApplicationDeployListener} ({@code META-INF/dubbo/org.apache.dubbo.common.deploy.ApplicationDeployListener}),
 * so Dubbo makes one per application.
 *
 * <p>The meters are bound when the application initializes, or, if it has no name yet then (its configuration comes
 * from properties), when it starts; either way before any of its references exists. They are removed when it stops.
 * Dubbo 3.1 has no such registry (nor the initialize event): there, with Micrometer on the classpath, the meters are
 * off and one INFO line says why. One {@link RetryListener} added
 * to {@link WheelFailback} routes every retry event to the meters of the event's application, so no event is missed
 * whenever a reference is created. Applications are told apart by name, as Dubbo's own meters tell them apart.
 *
 * <p>This class never names a Micrometer type: {@link FailbackMicrometer}, which does, is loaded only after the
 * class-presence check.
 *
 * <p><b>Threading:</b> Dubbo's deployer calls it; the binding is guarded by this instance's monitor, the routing
 * table is concurrent.
 */
public final class FailbackMeterListener implements ApplicationDeployListener {

    private static final Logger LOG = LoggerFactory.getLogger(FailbackMeterListener.class);
    private static final String MICROMETER = "io.micrometer.core.instrument.MeterRegistry";
    /** Dubbo's holder of each application's registry, since Dubbo 3.2. */
    private static final String DUBBO_REGISTRY = "org.apache.dubbo.metrics.MetricsGlobalRegistry";
    /** Classes that must be present for the meters: Micrometer's registry, and Dubbo's holder of it. */
    static final String[] REQUIRED_CLASSES = {MICROMETER, DUBBO_REGISTRY};
    /** Whether the INFO line "meters are off on this Dubbo" was logged (once per JVM). */
    private static final AtomicBoolean TOLD_OFF = new AtomicBoolean();

    /** The meters of one application; implemented by the Micrometer-facing class. */
    interface Binding {
        /** Registers the meters of the application's references that exist now. */
        void attach();

        /** Counts one event of the application. */
        void onEvent(RetryEvent event);

        /** Removes the application's meters from the registry. */
        void close();
    }

    /** The bound applications by name, for the events. */
    private static final Map<String, Binding> BY_APPLICATION = new ConcurrentHashMap<>();
    private static final AtomicBoolean ROUTING = new AtomicBoolean();

    private Binding binding; // guarded by this

    /** @return whether Micrometer and Dubbo's metrics support can be loaded from rpc-timer's class loader */
    public static boolean micrometerPresent() {
        for (String name : REQUIRED_CLASSES) {
            if (!present(name)) {
                return false;
            }
        }
        return true;
    }

    private static boolean present(String className) {
        return ClassUtils.isPresent(className, FailbackMeterListener.class.getClassLoader());
    }

    /** As {@link #micrometerPresent()}; says once why the meters are off when only Dubbo's registry is missing. */
    private static boolean metersAvailable() {
        if (micrometerPresent()) {
            return true;
        }
        if (present(MICROMETER) && TOLD_OFF.compareAndSet(false, true)) {
            LOG.info("rpc-timer: the wheelfailback meters are off: Dubbo " + DubboSupport.version() + " has no "
                    + DUBBO_REGISTRY + " (Dubbo 3.2 and later have one); the QoS command failback still reports");
        }
        return false;
    }

    @Override
    public synchronized void onInitialize(ApplicationModel app) {
        bind(app);
    }

    /**
     * Binds the meters once the application has a name. Dubbo calls {@link #onInitialize} before it loads the
     * application's configuration, so an application configured by properties (Spring Boot's {@code
     * dubbo.application.name}) is named only by {@link #onStarting}, which still comes before its references exist.
     * Guarded by this.
     */
    private void bind(ApplicationModel app) {
        String name = app.tryGetApplicationName();
        if (binding != null || name == null || !metersAvailable()) {
            return; // Dubbo's internal application has no name and no wheelfailback reference
        }
        binding = FailbackMicrometer.bind(app, name);
        BY_APPLICATION.put(name, binding);
        if (ROUTING.compareAndSet(false, true)) {
            WheelFailback.addListener(FailbackMeterListener::route);
        }
    }

    /** @return whether the meters of {@code application} are bound (tests) */
    static boolean bound(String application) {
        return BY_APPLICATION.containsKey(application);
    }

    private static void route(RetryEvent event) {
        Binding b = event.application() == null ? null : BY_APPLICATION.get(event.application());
        if (b != null) {
            b.onEvent(event);
        }
    }

    @Override
    public synchronized void onStarting(ApplicationModel app) {
        bind(app); // if its name was not known at onInitialize, or on Dubbo 3.1, which has no onInitialize
    }

    @Override
    public synchronized void onStarted(ApplicationModel app) {
        if (binding != null) {
            binding.attach(); // references that have not failed yet show their gauges at zero
        }
    }

    @Override
    public void onModuleStarted(ApplicationModel app) {
        onStarted(app);
    }

    @Override
    public void onStopping(ApplicationModel app) {
        // keep the meters while the references hand their pending calls over
    }

    @Override
    public synchronized void onStopped(ApplicationModel app) {
        if (binding != null) {
            BY_APPLICATION.values().remove(binding);
            binding.close();
            binding = null;
        }
    }

    @Override
    public void onFailure(ApplicationModel app, Throwable cause) {
        onStopped(app);
    }
}
