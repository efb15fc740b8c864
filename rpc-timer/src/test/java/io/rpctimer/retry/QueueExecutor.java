package io.rpctimer.retry;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * An executor that queues tasks until the test runs them, and can be told to refuse. Single-threaded use.
 */
final class QueueExecutor implements Executor {
    final Queue<Runnable> queued = new ArrayDeque<>();
    boolean refuse;

    @Override
    public void execute(Runnable command) {
        if (refuse) {
            throw new RejectedExecutionException("refused (test)");
        }
        queued.add(command);
    }

    /** Runs queued tasks, and those they queue, until none is left. @return how many ran */
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
