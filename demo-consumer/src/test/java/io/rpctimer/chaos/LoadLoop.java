package io.rpctimer.chaos;

import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.FailbackCall;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.CallOutcome;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;

/**
 * The steady load of one chaos consumer: {@code callsPerSecond} operations a second, each drawn from a seeded random:
 * a plain call (either service, sync or async, its {@code retry.id} the call id), or a business pair: order
 * {@code order-<instance>-<n>} reserved on {@link ChaosService#ORDERS} ({@code send}, sync) and charged on
 * {@link ChaosService#BILLING} ({@code sendAsync}), both with the order's key as their {@code retry.id}, set as the
 * README says ({@code RpcContext.getClientAttachment().setAttachment("retry.id", key)}).
 *
 * <p>Every call is recorded before it is made and when its caller is told (the {@link RecordFile} write returns
 * before the load goes on), and again when its {@link FailbackCall} handle completes:
 * <pre>
 * S &lt;callId&gt; &lt;service&gt; &lt;method&gt; &lt;retryId&gt;      about to call
 * T &lt;callId&gt; REPLY|FAILED_BACK|REJECTED|ERROR [exception]   what the caller was told
 * O &lt;callId&gt; DELIVERED|ABANDONED|REJECTED|HANDED_OVER &lt;attempt&gt;, or O &lt;callId&gt; FAILED &lt;exception&gt;
 * </pre>
 *
 * <p>At most {@value #CALLERS} operations are under way at once; a tick that finds every caller busy makes none
 * ({@link #skipped()}), so a stalled fleet does not pile up a backlog that outlives the run.
 *
 * <p><b>Threading:</b> one scheduler thread draws the operations (so the draw is the seed's alone), a pool of caller
 * threads makes them; {@link #quiesce} may be called from any thread.
 */
final class LoadLoop {

    private static final int CALLERS = 16;
    private static final double BUSINESS_SHARE = 0.3;

    private final String instance;
    private final Map<ChaosService, NotificationService> services;
    private final RecordFile records;
    private final Random random;
    private final long periodMicros;
    private final ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "load"));
    private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS, r -> daemon(r, "caller"));
    private final AtomicLong issued = new AtomicLong();
    private final AtomicLong told = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private final Semaphore callersFree = new Semaphore(CALLERS);
    private long next; // scheduler thread only

    LoadLoop(String instance, Map<ChaosService, NotificationService> services, RecordFile records, long seed,
             int callsPerSecond) {
        this.instance = instance;
        this.services = services;
        this.records = records;
        this.random = new Random(seed);
        this.periodMicros = 1_000_000L / callsPerSecond;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, "chaos-" + name);
        t.setDaemon(true);
        return t;
    }

    void start() {
        // with a fixed delay, a consumer frozen by SIGSTOP does not fire a burst of the ticks it missed when it wakes
        ticks.scheduleWithFixedDelay(this::draw, 0, periodMicros, TimeUnit.MICROSECONDS);
    }

    private void draw() {
        long n = next++;
        if (!callersFree.tryAcquire()) {
            skipped.incrementAndGet(); // every caller still waits: the offered load yields instead of queueing up
            return;
        }
        if (random.nextDouble() < BUSINESS_SHARE) {
            String key = "order-" + instance + "-" + n;
            callers.execute(released(() -> {
                call(instance + "-" + n + "r", ChaosService.ORDERS, true, key);
                call(instance + "-" + n + "c", ChaosService.BILLING, false, key);
            }));
        } else {
            ChaosService service = random.nextBoolean() ? ChaosService.ORDERS : ChaosService.BILLING;
            boolean sync = random.nextBoolean();
            String callId = instance + "-" + n;
            callers.execute(released(() -> call(callId, service, sync, callId)));
        }
    }

    private Runnable released(Runnable op) {
        return () -> {
            try {
                op.run();
            } finally {
                callersFree.release();
            }
        };
    }

    private void call(String callId, ChaosService service, boolean sync, String retryId) {
        issued.incrementAndGet();
        NotificationService s = services.get(service);
        records.append("S", callId, service, sync ? "send" : "sendAsync", retryId);
        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, retryId);
        FailbackCall<?> c = FailbackCall.of(() -> sync ? s.send(callId, "m") : s.sendAsync(callId, "m"));
        c.outcome().whenComplete((o, t) -> outcome(callId, o, t));
        Object result;
        try {
            result = c.result();
        } catch (RuntimeException e) {
            told(callId, null, e);
            return;
        }
        if (result instanceof CompletableFuture<?> f) {
            try {
                told(callId, f.get(), null);
            } catch (java.util.concurrent.ExecutionException e) {
                told(callId, null, e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            told(callId, result, null);
        }
    }

    private void told(String callId, Object reply, Throwable failure) {
        if (failure == null) {
            records.append("T", callId, reply == null ? "FAILED_BACK" : "REPLY");
        } else {
            records.append("T", callId, rejected(failure) ? "REJECTED" : "ERROR", failure.getClass().getSimpleName());
        }
        told.incrementAndGet();
    }

    private void outcome(String callId, CallOutcome o, Throwable t) {
        if (o != null) {
            records.append("O", callId, o.outcome(), o.attempt());
        } else {
            records.append("O", callId, "FAILED", t.getClass().getSimpleName());
        }
    }

    private static boolean rejected(Throwable t) {
        for (Throwable e = t; e != null; e = e.getCause()) {
            if (e instanceof RpcException rpc && rpc.getCode() == RpcException.LIMIT_EXCEEDED_EXCEPTION) {
                return true;
            }
        }
        return false;
    }

    /**
     * Stops drawing new operations and waits (at most {@code maxSeconds}) until every caller was told.
     *
     * @return whether every caller was told in time
     */
    boolean quiesce(long maxSeconds) throws InterruptedException {
        ticks.shutdown();
        ticks.awaitTermination(maxSeconds, TimeUnit.SECONDS);
        callers.shutdown();
        return callers.awaitTermination(maxSeconds, TimeUnit.SECONDS);
    }

    long issued() {
        return issued.get();
    }

    long told() {
        return told.get();
    }

    /** @return operations not made because every caller thread was still waiting for an answer */
    long skipped() {
        return skipped.get();
    }
}
