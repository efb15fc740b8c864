package io.rpctimer.dubbo;

import org.apache.dubbo.common.Version;

/**
 * Whether the running Dubbo is a line rpc-timer supports (3.1 to 3.3), decided once, by whether it has the APIs the
 * library links to that older lines lack, not by its version string; the version only names the line in the message.
 * Each extension rpc-timer registers ({@code wheelfailback}, {@code timeoutcheck}, {@code retrydedup}) calls
 * {@link #require} before it touches any other Dubbo type, so that on Dubbo 2.7 or 3.0 creating a reference or
 * exporting a service fails with one clear message instead of a {@link LinkageError} on some later call.
 *
 * <p>Class loading: this class links only to {@link Version}, present in every Dubbo line since 2.7, and probes the
 * rest by name. The extension classes that Dubbo loads from rpc-timer's SPI files link, before their first
 * {@code require}, only to types Dubbo 2.7 has as well: on 2.7 a class whose supertypes are missing (such as
 * {@code Disposable}) cannot even be loaded, and Dubbo would then report "no such extension" instead.
 *
 * <p><b>Threading:</b> immutable after class initialization; thread-safe.
 */
final class DubboSupport {

    /** The lines rpc-timer is tested on, for messages. */
    static final String RANGE = "Dubbo 3.1 to 3.3";

    /**
     * Types and methods the library uses without an adapter, each absent before Dubbo 3.1: the first one missing
     * names the reason. Each entry is a class name, or {@code class#method(parameter classes)}.
     */
    private static final String[] REQUIRED = {
        "org.apache.dubbo.rpc.model.FrameworkModel", // 3.0
        "org.apache.dubbo.rpc.RpcServiceContext", // 3.0
        "org.apache.dubbo.common.resource.Disposable", // 3.0
        "org.apache.dubbo.common.logger.ErrorTypeAwareLogger", // 3.1
        "org.apache.dubbo.common.constants.LoggerCodeConstants", // 3.1
        "org.apache.dubbo.rpc.support.RpcUtils#getTimeout(org.apache.dubbo.common.URL,java.lang.String,"
                + "org.apache.dubbo.rpc.RpcContext,org.apache.dubbo.rpc.Invocation,long)", // 3.1
    };

    /**
     * The first required API the running Dubbo lacks, or null when it has them all; probed with the loader that links
     * rpc-timer's classes to Dubbo.
     */
    private static final String MISSING = firstMissing(DubboSupport.class.getClassLoader(), REQUIRED);

    private DubboSupport() {
    }

    /** @return the running Dubbo's version, as Dubbo reports it */
    static String version() {
        return Version.getVersion();
    }

    /**
     * @param feature what needs a supported line, for the message ({@code "cluster wheelfailback"})
     * @throws IllegalStateException "rpc-timer supports Dubbo 3.1 to 3.3; this is Dubbo 2.7.23 ...", if the running
     *                               Dubbo lacks an API rpc-timer needs
     */
    static void require(String feature) {
        String problem = problem(feature);
        if (problem != null) {
            throw new IllegalStateException(problem);
        }
    }

    /** @return {@link #require}'s message, or null on a supported line */
    static String problem(String feature) {
        return MISSING == null ? null : message(version(), MISSING, feature);
    }

    static String message(String version, String missing, String feature) {
        return "rpc-timer supports " + RANGE + "; this is Dubbo " + version + ", which has no " + missing
                + ", so " + feature + " cannot run on it";
    }

    /** @return the first of {@code required} that {@code loader} cannot find, or null */
    static String firstMissing(ClassLoader loader, String... required) {
        for (String api : required) {
            if (!present(loader, api)) {
                return api;
            }
        }
        return null;
    }

    private static boolean present(ClassLoader loader, String api) {
        int hash = api.indexOf('#');
        try {
            Class<?> type = Class.forName(hash < 0 ? api : api.substring(0, hash), false, loader);
            if (hash >= 0) {
                String method = api.substring(hash + 1, api.indexOf('('));
                String[] names = api.substring(api.indexOf('(') + 1, api.length() - 1).split(",");
                Class<?>[] parameters = new Class<?>[names.length];
                for (int i = 0; i < names.length; i++) {
                    parameters[i] = names[i].equals("long") ? long.class : Class.forName(names[i], false, loader);
                }
                type.getMethod(method, parameters);
            }
            return true;
        } catch (ClassNotFoundException | NoSuchMethodException | LinkageError e) {
            return false;
        }
    }
}
