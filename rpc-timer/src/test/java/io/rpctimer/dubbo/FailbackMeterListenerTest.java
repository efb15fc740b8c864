package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.dubbo.common.deploy.ApplicationDeployListener;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.Test;

/**
 * The meters are optional: without Micrometer on the classpath, the deploy listener that Dubbo loads for every
 * application must neither fail nor load the Micrometer-facing class.
 */
class FailbackMeterListenerTest {

    @Test
    void micrometerPresent_onTheTestClasspath_true() {
        assertTrue(FailbackMeterListener.micrometerPresent());
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
