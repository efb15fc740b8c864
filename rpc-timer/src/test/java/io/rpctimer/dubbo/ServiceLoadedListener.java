package io.rpctimer.dubbo;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import java.util.concurrent.atomic.AtomicInteger;

/** A listener registered only through META-INF/services, to show the service file is read. */
public final class ServiceLoadedListener implements RetryListener {

    static final AtomicInteger CREATED = new AtomicInteger();
    static final AtomicInteger EVENTS = new AtomicInteger();

    public ServiceLoadedListener() {
        CREATED.incrementAndGet();
    }

    @Override
    public void onEvent(RetryEvent event) {
        EVENTS.incrementAndGet();
    }
}
