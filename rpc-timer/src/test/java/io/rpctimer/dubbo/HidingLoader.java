package io.rpctimer.dubbo;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.List;

/**
 * rpc-timer's main classes loaded afresh, with some classes hidden from them (an application without Micrometer, a
 * Dubbo without some API); everything else (Dubbo, JUnit, the tests) comes from the test's own loader.
 */
final class HidingLoader extends URLClassLoader {

    private final List<String> hidden;

    /** @param hidden class names, or prefixes ending in '.', that rpc-timer's classes cannot see */
    HidingLoader(String... hidden) {
        super(new URL[] {classes()}, HidingLoader.class.getClassLoader());
        this.hidden = List.of(hidden);
    }

    /** @return where rpc-timer's main classes are */
    static URL classes() {
        return FailbackMeterListener.class.getProtectionDomain().getCodeSource().getLocation();
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        for (String h : hidden) {
            if (h.endsWith(".") ? name.startsWith(h) : name.equals(h)) {
                throw new ClassNotFoundException(name + " (hidden)");
            }
        }
        if (!name.startsWith("io.rpctimer.")) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c != null) {
                return c;
            }
            try {
                return findClass(name);
            } catch (ClassNotFoundException notMain) {
                return super.loadClass(name, resolve); // a test class
            }
        }
    }
}
