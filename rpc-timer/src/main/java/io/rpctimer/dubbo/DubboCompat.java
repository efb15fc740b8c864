package io.rpctimer.dubbo;

import java.util.concurrent.Executor;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.serialize.support.DefaultSerializationSelector;
import org.apache.dubbo.common.threadpool.manager.FrameworkExecutorRepository;
import org.apache.dubbo.remoting.Constants;
import org.apache.dubbo.remoting.utils.UrlUtils;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;

/**
 * What differs between the Dubbo lines rpc-timer runs on (3.1, 3.2, 3.3), each chosen once, when this class is
 * initialized, by whether the running Dubbo has the method or class, never by its version string. The library is
 * compiled against Dubbo 3.3; a call that 3.1 lacks sits behind a flag that is false there, so it is never linked.
 * <table>
 *   <caption>The differences</caption>
 *   <tr><th>what</th><th>Dubbo 3.2, 3.3</th><th>Dubbo 3.1</th></tr>
 *   <tr><td>the providers a call was sent to</td><td>{@code Invocation.addInvokedInvoker}</td>
 *       <td>absent: nothing to record (3.1's own cluster invokers record none)</td></tr>
 *   <tr><td>a reference's serialization</td><td>{@code UrlUtils.serializationOrDefault}: {@code prefer.serialization},
 *       {@code serialization}, the default</td><td>{@code serialization}, else the default, as 3.1's
 *       {@code CodecSupport.getSerialization} picks it</td></tr>
 *   <tr><td>"cannot be serialized"</td><td>{@code SerializationException}</td><td>absent: no failure is one</td></tr>
 *   <tr><td>an async call's callback executor</td><td>always set on the result by dubbo, tri and injvm</td>
 *       <td>null when the application has no consumer executor (3.1 logs "No available executors"); Dubbo then
 *       handles replies on the framework's shared executor, and so does {@link #sharedExecutor}</td></tr>
 *   <tr><td>meters</td><td>{@code MetricsGlobalRegistry}</td><td>absent: meters off, one INFO line
 *       ({@link FailbackMeterListener})</td></tr>
 *   <tr><td>QoS commands</td><td>{@code org.apache.dubbo.qos.api.BaseCommand} ({@link FailbackCommand})</td>
 *       <td>{@code org.apache.dubbo.qos.command.BaseCommand} ({@link LegacyFailbackCommand}); each line reads only
 *       the SPI file of its own interface</td></tr>
 * </table>
 *
 * <p><b>Threading:</b> immutable after class initialization; thread-safe.
 */
final class DubboCompat {

    /** Whether {@code Invocation.addInvokedInvoker(Invoker)} exists (3.2+). */
    static final boolean INVOKED_INVOKERS = hasMethod(Invocation.class, "addInvokedInvoker", Invoker.class);
    /** Whether {@code UrlUtils.serializationOrDefault(URL)} exists (3.2+). */
    static final boolean SERIALIZATION_OR_DEFAULT = hasMethod(UrlUtils.class, "serializationOrDefault", URL.class);
    /** Dubbo's "cannot be serialized" exception (3.2+), or null. */
    private static final Class<?> SERIALIZATION_EXCEPTION =
            classOrNull("org.apache.dubbo.common.serialize.SerializationException");

    private DubboCompat() {
    }

    /** Records {@code invoker} in the invocation's invoked list (tracing), where the running Dubbo keeps one. */
    static void addInvokedInvoker(Invocation invocation, Invoker<?> invoker) {
        if (INVOKED_INVOKERS) {
            invocation.addInvokedInvoker(invoker);
        }
    }

    /** @return the name of the serialization Dubbo's codec uses for {@code url} */
    static String serializationName(URL url) {
        if (SERIALIZATION_OR_DEFAULT) {
            return UrlUtils.serializationOrDefault(url);
        }
        return url.getParameter(Constants.SERIALIZATION_KEY,
                DefaultSerializationSelector.getDefaultRemotingSerialization());
    }

    /** @return whether {@code t} is Dubbo's "cannot be serialized" exception */
    static boolean isSerializationException(Throwable t) {
        return SERIALIZATION_EXCEPTION != null && SERIALIZATION_EXCEPTION.isInstance(t);
    }

    /**
     * @return the framework's shared executor, where Dubbo handles a reply whose call has no callback executor of its
     *         own (3.1 without a consumer executor); the same class and method on every supported line
     */
    static Executor sharedExecutor(URL url) {
        return url.getOrDefaultFrameworkModel().getBeanFactory().getBean(FrameworkExecutorRepository.class)
                .getSharedExecutor();
    }

    private static boolean hasMethod(Class<?> type, String name, Class<?>... parameters) {
        try {
            type.getMethod(name, parameters);
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    private static Class<?> classOrNull(String name) {
        try {
            return Class.forName(name, false, Invocation.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }
}
