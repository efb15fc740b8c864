package io.rpctimer.spring.boot.it;

/** The service the test applications call over Dubbo. */
public interface GreetingApi {

    /** @return a greeting naming the provider that served it */
    String greet(String name);
}
