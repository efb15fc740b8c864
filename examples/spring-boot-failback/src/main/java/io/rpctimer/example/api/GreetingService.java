package io.rpctimer.example.api;

/** The example's Dubbo service: the provider implements it, the consumer calls it. */
public interface GreetingService {

    /** Records a greeting; returns what the provider made of it. */
    String greet(String name);
}
