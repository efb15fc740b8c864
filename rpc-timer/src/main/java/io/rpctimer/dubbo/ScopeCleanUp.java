package io.rpctimer.dubbo;

import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.resource.Disposable;
import org.apache.dubbo.rpc.model.ScopeModel;

/**
 * Runs a clean-up when a Dubbo scope (an application, a module) is destroyed. It is registered as a bean of the
 * scope, whose beans Dubbo destroys right before the scope's extensions, so the clean-up runs when Dubbo would call
 * {@link Disposable#destroy()} on an extension of that scope. rpc-timer's extensions are not {@link Disposable}
 * themselves: Dubbo 2.7 has no such interface, and there they must still load to report that the line is unsupported
 * ({@link DubboSupport}).
 *
 * <p><b>Threading:</b> {@link #destroy()} runs the clean-up once, on the thread destroying the scope.
 */
final class ScopeCleanUp implements Disposable {

    private final Runnable cleanUp;

    private ScopeCleanUp(Runnable cleanUp) {
        this.cleanUp = cleanUp;
    }

    /**
     * Callers pass a URL rather than a scope model so that their own classes never name a 3.x model type: the JVM's
     * verifier would load it to check an argument's type, and on Dubbo 2.7 fail before {@link DubboSupport} speaks.
     *
     * @param url     a URL of the application whose destruction runs {@code cleanUp}
     * @param cleanUp idempotent; it may also run earlier, by other means
     * @throws IllegalStateException if the application is already destroyed
     */
    static void withApplication(URL url, Runnable cleanUp) {
        register(url.getOrDefaultApplicationModel(), cleanUp);
    }

    /** As {@link #withApplication}, for the module of {@code url}. */
    static void withModule(URL url, Runnable cleanUp) {
        register(url.getOrDefaultModuleModel(), cleanUp);
    }

    private static void register(ScopeModel scope, Runnable cleanUp) {
        scope.getBeanFactory().registerBean(new ScopeCleanUp(cleanUp));
    }

    @Override
    public void destroy() {
        cleanUp.run();
    }
}
