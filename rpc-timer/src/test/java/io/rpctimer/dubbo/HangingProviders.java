package io.rpctimer.dubbo;

import io.rpctimer.testkit.DubboNode;
import org.apache.dubbo.config.ReferenceConfig;

/**
 * Two providers of {@link GreetingService} on 127.0.0.1 whose methods hang (up to 30 s) until {@link #release()}d, so
 * that every attempt times out meanwhile. Written against what every Dubbo line from 3.1 on has.
 */
final class HangingProviders implements AutoCloseable {

    final ScriptedGreetingService s1 = hanging("p1");
    final ScriptedGreetingService s2 = hanging("p2");
    final DubboNode p1 = DubboNode.provider("p1", GreetingService.class, s1);
    final DubboNode p2 = DubboNode.provider("p2", GreetingService.class, s2);

    private static ScriptedGreetingService hanging(String name) {
        ScriptedGreetingService s = new ScriptedGreetingService(name);
        s.mode = ScriptedGreetingService.Mode.HANG;
        s.hangMillis = 30_000;
        return s;
    }

    /** Points {@code reference} straight at both providers. */
    void aim(ReferenceConfig<GreetingService> reference) {
        reference.setInterface(GreetingService.class);
        DubboNode.aim(reference, p1, p2);
    }

    /** Lets hung calls return, and every call from now on answer. */
    void release() {
        s1.releaseHung();
        s2.releaseHung();
    }

    @Override
    public void close() {
        release();
        p1.close();
        p2.close();
    }
}
