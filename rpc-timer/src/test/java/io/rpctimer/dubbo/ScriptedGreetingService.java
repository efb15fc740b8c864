package io.rpctimer.dubbo;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.dubbo.rpc.RpcContext;

/** A provider whose behaviour the test sets: answer, hang (bounded), or throw a business exception. */
final class ScriptedGreetingService implements GreetingService {

    enum Mode { OK, HANG, FAIL }

    /** A served call as the provider saw it. */
    record Served(String retryId, String attempt, boolean answered) {
    }

    private final String name;
    private final CountDownLatch releaseHung = new CountDownLatch(1);
    final List<Served> served = new CopyOnWriteArrayList<>();
    final AtomicInteger calls = new AtomicInteger();
    volatile Mode mode = Mode.OK;
    volatile long hangMillis = 3_000;

    ScriptedGreetingService(String name) {
        this.name = name;
    }

    @Override
    public String sayHello(String who) {
        return answer("hello " + who);
    }

    @Override
    public CompletableFuture<String> sayHelloAsync(String who) {
        return CompletableFuture.completedFuture(answer("hello " + who));
    }

    @Override
    public String notify(String event) {
        return answer("notified " + event);
    }

    private String answer(String text) {
        calls.incrementAndGet();
        String retryId = RpcContext.getServerAttachment().getAttachment(WheelFailback.RETRY_ID);
        String attempt = RpcContext.getServerAttachment().getAttachment(WheelFailback.RETRY_ATTEMPT);
        Mode m = mode;
        if (m == Mode.HANG) {
            try {
                releaseHung.await(hangMillis, TimeUnit.MILLISECONDS); // the fault: a provider that hangs
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        served.add(new Served(retryId, attempt, m == Mode.OK));
        if (m == Mode.FAIL) {
            throw new IllegalStateException(name + " refuses " + text);
        }
        return name + ": " + text;
    }

    /** Lets hung calls return, so that servers stop quickly. */
    void releaseHung() {
        mode = Mode.OK;
        releaseHung.countDown();
    }
}
