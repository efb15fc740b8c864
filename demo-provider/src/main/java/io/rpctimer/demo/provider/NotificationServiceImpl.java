package io.rpctimer.demo.provider;

import io.rpctimer.demo.provider.api.NotificationRejectedException;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.fault.FaultInjector;
import io.rpctimer.demo.provider.fault.ServiceFault;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The demo's {@link NotificationService}: delivers nothing, but answers with its provider's identity after the
 * injected latency/hang, or refuses with {@link NotificationRejectedException} when its {@link FaultInjector} says so.
 * The RPC-level "error" fault and the call ledger live in {@code FaultFilter}, in front of this class.
 *
 * <p>{@link #send} waits on the calling (Dubbo server) thread, as a slow synchronous provider would; {@link #sendAsync}
 * holds no thread while it waits.
 *
 * <p>Thread-safe.
 */
public final class NotificationServiceImpl implements NotificationService {
    private final String identity;
    private final FaultInjector faults;

    /**
     * @param identity what to answer, {@code "<name>@<host>:<port>"}
     * @param faults the provider's injector
     */
    public NotificationServiceImpl(String identity, FaultInjector faults) {
        this.identity = identity;
        this.faults = faults;
    }

    @Override
    public String send(String callId, String message) {
        ServiceFault fault = faults.nextServiceFault();
        try {
            fault.delayElapsed().get(); // completes by itself; interrupted only when the provider stops
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException("a delay never fails", e);
        }
        return answer(fault, callId);
    }

    @Override
    public CompletableFuture<String> sendAsync(String callId, String message) {
        ServiceFault fault = faults.nextServiceFault();
        return fault.delayElapsed().thenApply(v -> answer(fault, callId));
    }

    private String answer(ServiceFault fault, String callId) {
        if (fault.rejects()) {
            throw new NotificationRejectedException(identity + " rejected " + callId + " (" + fault.rejectReason() + ")");
        }
        return identity;
    }
}
