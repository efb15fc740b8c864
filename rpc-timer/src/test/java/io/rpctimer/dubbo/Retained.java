package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.fail;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Walks what an object of the plugin keeps reachable, through its own fields, the plugin's objects, Dubbo's
 * invocation, arrays, maps and collections, to check that it keeps nothing of a forbidden type. Fields that
 * refer to what every call shares (the cluster invoker or the reference's retries, its policy and URL, the wheel's
 * handle) or to other calls (the links of the pending set) are not followed.
 */
final class Retained {

    private static final Set<String> SHARED = Set.of("owner", "reference", "policy", "consumerUrl", "timeout",
            "serviceModel", "prevPending", "nextPending");

    private Retained() {
    }

    /** Fails naming the path to the first object of a {@code forbidden} type reachable from {@code root}. */
    static void assertNone(Object root, Class<?>... forbidden) throws IllegalAccessException {
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Object[]> todo = new ArrayDeque<>();
        todo.push(new Object[] {root, root.getClass().getSimpleName()});
        while (!todo.isEmpty()) {
            Object[] next = todo.pop();
            Object o = next[0];
            String path = (String) next[1];
            if (o == null || !seen.add(o)) {
                continue;
            }
            for (Class<?> type : forbidden) {
                if (type.isInstance(o)) {
                    fail(path + " keeps a " + type.getSimpleName() + ": " + o.getClass().getName());
                }
            }
            children(o, path, todo::push);
        }
    }

    private static void children(Object o, String path, Consumer<Object[]> out) throws IllegalAccessException {
        if (o instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.accept(new Object[] {e.getKey(), path + ".key"});
                out.accept(new Object[] {e.getValue(), path + "[" + e.getKey() + "]"});
            }
        } else if (o instanceof Collection<?> c) {
            c.forEach(e -> out.accept(new Object[] {e, path + "[]"}));
        } else if (o.getClass().isArray() && !o.getClass().getComponentType().isPrimitive()) {
            for (int i = 0; i < Array.getLength(o); i++) {
                out.accept(new Object[] {Array.get(o, i), path + "[" + i + "]"});
            }
        } else if (o instanceof Enum<?>) {
            return; // a constant, shared by every call
        } else if (o.getClass().getName().startsWith("io.rpctimer.") || o instanceof org.apache.dubbo.rpc.Invocation) {
            for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (!Modifier.isStatic(f.getModifiers()) && !f.getType().isPrimitive()
                            && !SHARED.contains(f.getName())) {
                        f.setAccessible(true);
                        out.accept(new Object[] {f.get(o), path + "." + f.getName()});
                    }
                }
            }
        }
    }
}
