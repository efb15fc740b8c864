package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.dubbo.common.deploy.ApplicationDeployListener;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.Test;

/**
 * The deploy listener that binds the failback meters: it binds them whenever the application's name becomes known,
 * and without Micrometer on the classpath it must neither fail nor load the Micrometer-facing class.
 */
class FailbackMeterListenerTest {

    @Test
    void micrometerPresent_onTheTestClasspath_true() {
        assertTrue(FailbackMeterListener.micrometerPresent());
    }

    @Test
    void anApplicationNamedOnlyAfterItsInitialization_getsItsMetersWhenItStarts() {
        FrameworkModel framework = new FrameworkModel();
        try {
            ApplicationModel app = framework.newApplication();
            FailbackMeterListener listener = new FailbackMeterListener();
            listener.onInitialize(app); // as Dubbo does, before it loads the application's configuration
            app.getApplicationConfigManager().setApplication(new ApplicationConfig("named-by-properties"));
            listener.onStarting(app);
            assertTrue(FailbackMeterListener.bound("named-by-properties"));
            listener.onStopped(app);
            assertFalse(FailbackMeterListener.bound("named-by-properties"));
        } finally {
            framework.destroy();
        }
    }

    @Test
    void withoutMicrometer_listenerBindsNothingAndDoesNotFail() throws Exception {
        FrameworkModel framework = new FrameworkModel();
        try (HidingLoader loader = new HidingLoader("io.micrometer.")) {
            Class<?> type = loader.loadClass(FailbackMeterListener.class.getName());
            assertSame(loader, type.getClassLoader(), "rpc-timer's classes come from the loader without Micrometer");
            assertFalse((Boolean) type.getMethod("micrometerPresent").invoke(null));

            ApplicationModel app = framework.newApplication();
            ApplicationDeployListener listener = (ApplicationDeployListener) type.getConstructor().newInstance();
            listener.onInitialize(app);
            listener.onStarted(app);
            listener.onModuleStarted(app);
            listener.onStopped(app);

            // the control: the Micrometer-facing class cannot be loaded there, so the calls above never touched it
            assertThrows(NoClassDefFoundError.class,
                    () -> Class.forName(FailbackMicrometer.class.getName(), true, loader));
        } finally {
            framework.destroy();
        }
    }
}
