package io.rpctimer.dubbo;

import io.rpctimer.retry.PendingRetry;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.TimerTask;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.RpcInvocation;

/**
 * One failed call on its way to an outcome: it sits on the shared wheel until its backoff delay has passed, then
 * (from the runtime's lanes) sends the next retry asynchronously and waits for nothing. The reply
 * or the per-attempt timeout brings it back: {@code DELIVERED}, or rescheduled with the next delay, or
 * {@code ABANDONED} when the policy says stop. Shutdown hands it to the store ({@code HANDED_OVER}).
 *
 * <p>Concurrency: at any time the call is on the wheel, running, or waiting for one reply, so its progress fields
 * are handed from thread to thread through the wheel and the reply future (each a happens-before edge); they are
 * volatile only so that a concurrent {@link #handOver} reads them fresh. {@link #ended} makes the outcome happen
 * once, whoever gets there first.
 */
final class RetryTimerTask implements TimerTask {

    private final WheelFailbackClusterInvoker<?> owner;
    private final RetryPolicy policy;
    private final RpcInvocation snapshot;
    private final URL consumerUrl;
    private final String retryId;
    private final AtomicBoolean ended = new AtomicBoolean();

    /** Retries sent so far. */
    private volatile int attempt;
    private volatile String lastProvider;
    private volatile Throwable lastFailure;
    private volatile Timeout timeout;

    RetryTimerTask(WheelFailbackClusterInvoker<?> owner, RetryPolicy policy, RpcInvocation snapshot, URL consumerUrl,
                   String retryId, String firstProvider, Throwable firstFailure) {
        this.owner = owner;
        this.policy = policy;
        this.snapshot = snapshot;
        this.consumerUrl = consumerUrl;
        this.retryId = retryId;
        this.lastProvider = firstProvider;
        this.lastFailure = firstFailure;
    }

    String retryId() {
        return retryId;
    }

    String service() {
        return owner.getInterface().getName();
    }

    String method() {
        return snapshot.getMethodName();
    }

    RpcInvocation snapshot() {
        return snapshot;
    }

    URL consumerUrl() {
        return consumerUrl;
    }

    /** The provider the last attempt went to, which the next one avoids when there is another. */
    String lastProvider() {
        return lastProvider;
    }

    RetryPolicy policy() {
        return policy;
    }

    int attempt() {
        return attempt;
    }

    /** Puts the first retry on the wheel. The caller has already counted the call and admitted it. */
    void start() {
        schedule(policy.nextDelayNanos(1, lastFailure, true));
    }

    private void schedule(long delayNanos) {
        WheelFailback.emit(RetryEvent.Type.SCHEDULED, this, attempt + 1, lastProvider, delayNanos, lastFailure);
        try {
            timeout = owner.runtime().timer().newTimeout(this, delayNanos, TimeUnit.NANOSECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            handOver(e); // the wheel stopped under us: the application is shutting down
        }
    }

    /**
     * Runs on the wheel's executor, and sends the retry from the runtime's lanes, keyed by the reference: a reference
     * whose sends block (e.g. waiting in Dubbo's {@code ActiveLimitFilter}) is moved to the slow lane there, so it
     * never holds up other references' retries. A retry the lanes refuse counts as a failed attempt.
     */
    @Override
    public void run(Timeout t) {
        if (ended.get()) {
            return;
        }
        if (owner.isGone() || owner.runtime().isClosed()) {
            handOver(null);
            return;
        }
        attempt++;
        try {
            owner.runtime().lanes().execute(owner, () -> {
                if (!ended.get()) { // handed over while it waited in its lane
                    owner.sendRetry(this);
                }
            });
        } catch (RejectedExecutionException refused) {
            failed(null, refused, true);
        }
    }

    /** The retry was sent to {@code provider}; its reply will come back through one of the methods below. */
    void sent(String provider) {
        lastProvider = provider;
        WheelFailback.emit(RetryEvent.Type.SENT, this, attempt, provider, 0, null);
    }

    void delivered(String provider) {
        end(RetryEvent.Type.DELIVERED, attempt, provider, null);
    }

    /** The retry failed, before or after it was sent: schedule the next one, or stop. */
    void failed(String provider, Throwable failure, boolean rpcFailure) {
        if (ended.get()) {
            return;
        }
        lastFailure = failure;
        WheelFailback.emit(RetryEvent.Type.FAILED, this, attempt, provider, 0, failure);
        if (owner.isGone() || owner.runtime().isClosed()) {
            handOver(null);
            return;
        }
        long delayNanos = policy.nextDelayNanos(attempt + 1, failure, rpcFailure);
        if (delayNanos == RetryPolicy.STOP) {
            end(RetryEvent.Type.ABANDONED, attempt, provider, failure);
        } else {
            schedule(delayNanos);
        }
    }

    /**
     * Ends the call without a retry: to the {@link io.rpctimer.retry.RetryStore}. A store that throws does not lose
     * the call: it is still reported, with the store's failure attached.
     *
     * @param cause why it could not go on, or null for a normal shutdown
     */
    void handOver(Throwable cause) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        Timeout t = timeout;
        if (t != null) {
            t.cancel();
        }
        Throwable reported = cause;
        try {
            WheelFailback.retryStore().handOver(pendingRetry());
        } catch (Throwable storeFailure) {
            reported = storeFailure;
            if (cause != null) {
                storeFailure.addSuppressed(cause);
            }
        }
        finish(RetryEvent.Type.HANDED_OVER, attempt + 1, lastProvider, reported);
    }

    /** Ends the call with {@code type}, once. */
    boolean end(RetryEvent.Type type, int atAttempt, String provider, Throwable failure) {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        finish(type, atAttempt, provider, failure);
        return true;
    }

    private void finish(RetryEvent.Type type, int atAttempt, String provider, Throwable failure) {
        owner.released(this);
        WheelFailback.emit(type, this, atAttempt, provider, 0, failure);
    }

    private PendingRetry pendingRetry() {
        Map<String, String> attachments = new HashMap<>();
        snapshot.getObjectAttachments().forEach((k, v) -> attachments.put(k, String.valueOf(v)));
        Class<?>[] types = snapshot.getParameterTypes();
        String[] typeNames = new String[types.length];
        for (int i = 0; i < types.length; i++) {
            typeNames[i] = types[i].getName();
        }
        URL url = owner.getUrl();
        return new PendingRetry(retryId, service(), url.getGroup(), url.getVersion(), method(),
                typeNames, snapshot.getArguments(), Map.copyOf(attachments), attempt + 1, lastFailure,
                System.currentTimeMillis());
    }

    @Override
    public String toString() {
        return "RetryTimerTask(" + service() + "." + method() + "(), retry.id=" + retryId + ", attempt " + attempt
                + ')';
    }
}
