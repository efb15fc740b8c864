package io.rpctimer.bench.durable;

import io.rpctimer.bench.ExecutionLedger;
import io.rpctimer.journal.JdbcRetryJournal;
import io.rpctimer.retry.AttemptResult;
import io.rpctimer.retry.AttemptSender;
import io.rpctimer.retry.FailedCall;
import io.rpctimer.retry.OverflowPolicy;
import io.rpctimer.retry.RetryBudget;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalException;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.retry.RetryReference;
import io.rpctimer.retry.SlowLaneExecutor;
import io.rpctimer.wheel.WheelTimer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * One consumer instance of rpc-timer as the {@code wheelfailback} runtime wires it, without Dubbo: a
 * {@link RetryJournal} (a {@link JdbcRetryJournal} on the shared PostgreSQL with a lease, or the embedded one), a
 * {@link WheelTimer}, the retry lanes ({@link SlowLaneExecutor}), one {@link RetryLifecycle} and one
 * {@link RetryReference} of the benchmark's service, whose {@link AttemptSender} stands for the provider: it counts
 * the attempt in an {@link ExecutionLedger} and answers at once ({@link #delivering}), or fails every attempt at once
 * ({@link #failing}: the provider is down). As {@code FailbackRuntime} does, {@link #go} claims the service's calls
 * at once and then every claim period, on the lanes.
 *
 * <p><b>Threading:</b> build, {@link #go} and {@link #close} from one thread; the rest runs on the lifecycle's
 * threads.
 */
public final class RpcTimerInstance implements AutoCloseable {

    public static final String APPLICATION = "durable";
    public static final String SERVICE = "durable/io.rpctimer.bench.Notify:1.0";
    static final String METHOD = "send";
    /** The provider every attempt goes to, as the Dubbo glue reports it. */
    static final String PROVIDER = "127.0.0.1:20880";

    /**
     * What a user tunes for a backlog: the in-memory cap ({@code failbacktasks}) with spill past it, the lease
     * ({@code failback.store.lease}) and the claim period ({@code failback.store.claimperiod}).
     */
    public record Tuning(int failbacktasks, long leaseMillis, long claimPeriodMillis) {
    }

    private final RetryJournal journal;
    private final WheelTimer wheel;
    private final SlowLaneExecutor lanes;
    private final RetryLifecycle lifecycle;
    private final RetryReference<byte[]> reference;
    private final long claimPeriodMillis;
    private volatile boolean closed;

    /** An instance on a {@link JdbcRetryJournal} of {@code dataSource}, whose provider answers at once. */
    RpcTimerInstance(DataSource dataSource, String prefix, String owner, Tuning tuning, Duration firstDelay,
                     ExecutionLedger ledger) throws RetryJournalException {
        this(JdbcRetryJournal.builder(dataSource).owner(owner).tablePrefix(prefix)
                .lease(Duration.ofMillis(tuning.leaseMillis())).build(), delivering(ledger), tuning.failbacktasks(),
                RetryBudget.unlimited(), firstDelay, tuning.claimPeriodMillis());
    }

    /**
     * @param journal           the journal; closed by {@link #close}
     * @param sender            the provider
     * @param failbacktasks     the reference's cap on calls on the wheel; past it calls spill into the journal
     * @param budget            the reference's retry budget
     * @param firstDelay        the first retry's delay of the calls this instance admits
     * @param claimPeriodMillis how often {@link #go} claims again
     */
    public RpcTimerInstance(RetryJournal journal, AttemptSender<byte[]> sender, int failbacktasks, RetryBudget budget,
                            Duration firstDelay, long claimPeriodMillis) {
        this.claimPeriodMillis = claimPeriodMillis;
        this.journal = journal;
        this.wheel = WheelTimer.builder().threadName("durable-wheel").build();
        this.lanes = SlowLaneExecutor.builder().threadNamePrefix("rpc-timer-retry").queueCapacity(1_000_000).build();
        this.lifecycle = RetryLifecycle.builder(APPLICATION).timer(wheel)
                .executor(task -> lanes.execute(this, task)).journal(journal).build();
        RetryPolicy policy = RetryPolicy.builder().retries(100)
                .firstDelay(firstDelay.toMillis(), TimeUnit.MILLISECONDS)
                .maxDelay(Math.max(60_000, firstDelay.toMillis()), TimeUnit.MILLISECONDS).build();
        this.reference = lifecycle.reference(SERVICE, sender).policies(m -> policy)
                .limits(failbacktasks, OverflowPolicy.SPILL).budget(budget).decoder(e -> e.payload()).build();
    }

    /** @return a provider that counts each attempt in {@code ledger} and answers "delivered" at once */
    public static AttemptSender<byte[]> delivering(ExecutionLedger ledger) {
        return (FailedCall<byte[]> call, int attempt) -> {
            ledger.executed(call.retryId());
            return CompletableFuture.completedFuture(AttemptResult.delivered(PROVIDER));
        };
    }

    /** @return a provider that is down: every attempt fails at once with an RPC failure */
    public static AttemptSender<byte[]> failing() {
        RuntimeException down = new RuntimeException("provider down");
        return (call, attempt) -> CompletableFuture.completedFuture(AttemptResult.failed(PROVIDER, down, true));
    }

    /** @return the reference, to admit calls with */
    public RetryReference<byte[]> reference() {
        return reference;
    }

    /** @return the lifecycle, for its counters */
    public RetryLifecycle lifecycle() {
        return lifecycle;
    }

    /** Claims the service's calls now, and again every claim period. */
    public void go() {
        claimOnLanes();
    }

    private void claimOnLanes() {
        try {
            lanes.execute(this, () -> {
                if (!closed) {
                    reference.resume();
                    wheel.newTimeout(t -> claimOnLanes(), claimPeriodMillis, TimeUnit.MILLISECONDS);
                }
            });
        } catch (RejectedExecutionException | IllegalStateException e) {
            // closing
        }
    }

    /** A graceful stop: pending calls are handed over (they stay in the journal), the lease is given up. */
    @Override
    public void close() {
        closed = true;
        lifecycle.close();
        journal.close();
        lanes.shutdown();
        wheel.stop();
    }
}
