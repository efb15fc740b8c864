package io.rpctimer.wheel;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * An executor that queues tasks until the test runs them, and can be told to refuse the next hand-offs.
 * Single-threaded use only.
 */
final class ManualExecutor implements Executor {
    final Queue<Runnable> queued = new ArrayDeque<>();
    int refuseNext;

    @Override
    public void execute(Runnable command) {
        if (refuseNext > 0) {
            refuseNext--;
            throw new RejectedExecutionException("saturated (test)");
        }
        queued.add(command);
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
