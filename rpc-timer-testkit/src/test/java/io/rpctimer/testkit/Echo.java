package io.rpctimer.testkit;

/** The service the kit's own tests export. */
public interface Echo {
    String echo(String text);
}
