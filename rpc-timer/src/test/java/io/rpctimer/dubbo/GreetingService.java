package io.rpctimer.dubbo;

import java.util.concurrent.CompletableFuture;

/** The service the plugin's tests call. */
public interface GreetingService {

    String sayHello(String name);

    CompletableFuture<String> sayHelloAsync(String name);

    String notify(String event);
}
