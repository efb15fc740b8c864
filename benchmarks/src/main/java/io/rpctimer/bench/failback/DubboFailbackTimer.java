package io.rpctimer.bench.failback;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.dubbo.common.timer.HashedWheelTimer;
import org.apache.dubbo.common.timer.Timer;

/**
 * Reads what Dubbo 3.3.6 keeps private about its {@code failback} cluster: the {@code FailbackClusterInvoker} behind
 * a reference's proxy, its lazily created {@code failTimer} (a {@link HashedWheelTimer}: 1 s tick, 32 buckets,
 * {@code maxPendingTimeouts} = {@code failbacktasks}), and that timer's start time, tick and worker tick. All by
 * reflection into Dubbo's classes (no {@code --add-opens} needed: they are in the unnamed module).
 *
 * <p>Dubbo never stops this timer: {@code FailbackClusterInvoker.destroy()} is not reached when the reference is
 * destroyed (Dubbo wraps the invoker in {@code AbstractCluster.ClusterFilterInvoker}, which does not delegate it), so
 * its thread outlives the consumer. {@link #stopTimer()} stops it, so that one run's leftover retries do not run
 * during the next.
 *
 * <p><b>Threading:</b> thread-safe; the reflective reads see the fields as Dubbo's threads publish them (the tick is a
 * plain field of the worker, read racily: a sampler tolerates a slightly stale value).
 */
public final class DubboFailbackTimer {

    static final String INVOKER_CLASS = "org.apache.dubbo.rpc.cluster.support.FailbackClusterInvoker";
    private static final int MAX_OBJECTS = 200_000;

    private final Object invoker;
    private final Field failTimer;

    private DubboFailbackTimer(Object invoker) {
        this.invoker = invoker;
        this.failTimer = field(invoker.getClass(), "failTimer");
    }

    /**
     * Finds the {@code FailbackClusterInvoker} reachable from a reference's proxy, breadth first through the fields of
     * Dubbo's own objects (and the elements of collections and maps they hold).
     *
     * @param proxy the reference's proxy ({@code ReferenceConfig.get()})
     * @return the failback timer access, or empty if no {@code FailbackClusterInvoker} is reachable
     */
    public static Optional<DubboFailbackTimer> find(Object proxy) {
        Object root = java.lang.reflect.Proxy.isProxyClass(proxy.getClass())
                ? java.lang.reflect.Proxy.getInvocationHandler(proxy) : proxy; // a JDK proxy, or Dubbo's javassist one
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Object> queue = new ArrayDeque<>();
        queue.add(root);
        seen.add(root);
        while (!queue.isEmpty() && seen.size() < MAX_OBJECTS) {
            Object o = queue.poll();
            if (o.getClass().getName().equals(INVOKER_CLASS)) {
                return Optional.of(new DubboFailbackTimer(o));
            }
            for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
                if (!explorable(c) && c != root.getClass()) {
                    continue;
                }
                for (Field f : c.getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                        continue;
                    }
                    Object v;
                    try {
                        f.setAccessible(true);
                        v = f.get(o);
                    } catch (RuntimeException | IllegalAccessException e) {
                        continue;
                    }
                    enqueue(v, queue, seen);
                }
            }
        }
        return Optional.empty();
    }

    private static void enqueue(Object v, Deque<Object> queue, Set<Object> seen) {
        if (v == null) {
            return;
        }
        try {
            if (v instanceof Collection<?> c) {
                for (Object e : c.toArray()) {
                    offer(e, queue, seen);
                }
            } else if (v instanceof Map<?, ?> m) {
                for (Object e : m.values().toArray()) {
                    offer(e, queue, seen);
                }
            } else if (v.getClass().isArray() && !v.getClass().getComponentType().isPrimitive()) {
                for (int i = 0; i < Array.getLength(v); i++) {
                    offer(Array.get(v, i), queue, seen);
                }
            } else {
                offer(v, queue, seen);
            }
        } catch (RuntimeException e) {
            // a collection changing under us, or one that refuses toArray: skip it
        }
    }

    private static void offer(Object e, Deque<Object> queue, Set<Object> seen) {
        if (e != null && explorable(e.getClass()) && seen.add(e)) {
            queue.add(e);
        }
    }

    /** Dubbo's invokers, directories and wrappers; not its models, configs and URLs (they lead everywhere). */
    private static boolean explorable(Class<?> c) {
        String n = c.getName();
        return n.startsWith("org.apache.dubbo.")
                && !n.startsWith("org.apache.dubbo.rpc.model.")
                && !n.startsWith("org.apache.dubbo.config.")
                && !n.startsWith("org.apache.dubbo.common.")
                && !n.startsWith("org.apache.dubbo.remoting.")
                && !n.startsWith("org.apache.dubbo.metrics.");
    }

    /** @return the failback timer, or empty until Dubbo creates it at the first failed call */
    Optional<HashedWheelTimer> timer() {
        try {
            Timer t = (Timer) failTimer.get(invoker);
            return t instanceof HashedWheelTimer h ? Optional.of(h) : Optional.empty();
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read " + INVOKER_CLASS + ".failTimer: " + e, e);
        }
    }

    /** @return the timer's {@code System.nanoTime()} origin, 0 until its worker has started */
    static long startTime(HashedWheelTimer t) {
        return readLong(t, field(HashedWheelTimer.class, "startTime"));
    }

    /** @return the timer's tick, in nanoseconds */
    static long tickNanos(HashedWheelTimer t) {
        return readLong(t, field(HashedWheelTimer.class, "tickDuration"));
    }

    /**
     * @return the worker's tick counter: the tick it is waiting for or processing (ticks it has finished are below);
     *     tick {@code k} falls due at {@code startTime + (k + 1) * tick}
     */
    static long workerTick(HashedWheelTimer t) {
        try {
            Object worker = field(HashedWheelTimer.class, "worker").get(t);
            return readLong(worker, field(worker.getClass(), "tick"));
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read HashedWheelTimer.worker: " + e, e);
        }
    }

    /**
     * Stops the failback timer if Dubbo created one.
     *
     * @return the timeouts that never ran (retries Dubbo's failback discards at shutdown, plus a probe's), or -1 if
     *     there was no timer
     */
    public int stopTimer() {
        return timer().map(t -> t.stop().size()).orElse(-1);
    }

    private static long readLong(Object o, Field f) {
        try {
            return f.getLong(o);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read " + f + ": " + e, e);
        }
    }

    private static Field field(Class<?> c, String name) {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        throw new IllegalStateException("no field " + name + " in " + c.getName() + " (Dubbo version changed?)");
    }
}
