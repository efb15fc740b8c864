package io.rpctimer.wheel;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * An executor that queues tasks until the test runs them, and can be told to refuse the next hand-offs, to throw
 * after queueing one (a pool that queued the task and then failed to start a thread), or to fail every call.
 * Single-threaded use only.
 */
final class ManualExecutor implements Executor {
    final Queue<Runnable> queued = new ArrayDeque<>();
    int refuseNext;
    /** Thrown once, after the next task is queued. */
    Error errorAfterQueueing;
    /** Thrown by every call, without queueing. */
    RuntimeException failEvery;

    @Override
    public void execute(Runnable command) {
        if (failEvery != null) {
            throw failEvery;
        }
        if (refuseNext > 0) {
            refuseNext--;
            throw new RejectedExecutionException("saturated (test)");
        }
        queued.add(command);
        Error error = errorAfterQueueing;
        if (error != null) {
            errorAfterQueueing = null;
            throw error;
        }
    }

    /** @return how many tasks ran */
    int runAll() {
        int n = 0;
        Runnable r;
        while ((r = queued.poll()) != null) {
            r.run();
            n++;
        }
        return n;
    }
}
