package io.rpctimer.testkit;

import org.apache.dubbo.common.config.Environment;
import org.apache.dubbo.rpc.model.ApplicationModel;

/**
 * What differs between the Dubbo lines the test kit runs on (3.1, 3.2, 3.3), each chosen once, when this class is
 * initialized, by whether the running Dubbo has the method, never by its version string. The kit is compiled
 * against the baseline Dubbo (3.3); a call that an older line lacks sits behind a flag that is false there, so it is
 * never linked.
 * <table>
 *   <caption>The differences</caption>
 *   <tr><th>what</th><th>Dubbo 3.2, 3.3</th><th>Dubbo 3.1</th></tr>
 *   <tr><td>an application's environment</td><td>{@code ApplicationModel.modelEnvironment()}</td>
 *       <td>{@code getModelEnvironment()} only (deprecated from 3.2 on)</td></tr>
 * </table>
 *
 * <p>Tests use {@link #hasMethod} to skip what a line lacks ({@code Assumptions.assumeTrue(...)}).
 *
 * <p>Thread safety: immutable after class initialization; thread-safe (stateless).
 */
public final class DubboLine {

    /** Whether {@code ApplicationModel.modelEnvironment()} exists (Dubbo 3.2+). */
    private static final boolean MODEL_ENVIRONMENT = hasMethod(ApplicationModel.class, "modelEnvironment");

    private DubboLine() {
    }

    /**
     * Returns an application's environment on every supported line.
     *
     * @param application the application model
     * @return its environment: {@code modelEnvironment()} from Dubbo 3.2 on, {@code getModelEnvironment()} on 3.1
     */
    @SuppressWarnings("deprecation")
    public static Environment environment(ApplicationModel application) {
        return MODEL_ENVIRONMENT ? application.modelEnvironment() : application.getModelEnvironment();
    }

    /**
     * Tells whether the running Dubbo's {@code type} has a public method {@code name} taking {@code parameters}.
     * Reflection: call it once and keep the answer, as this class does.
     *
     * @param type a Dubbo class
     * @param name the method's name
     * @param parameters the method's parameter types, none for a method without parameters
     * @return whether the method exists (declared or inherited)
     */
    public static boolean hasMethod(Class<?> type, String name, Class<?>... parameters) {
        try {
            type.getMethod(name, parameters);
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }
}
