package io.rpctimer.demo.consumer;

/**
 * Logging set-up of the demo's {@code main} methods: Dubbo logs through slf4j (slf4j-simple, configured by
 * {@code simplelogger.properties} on the class path: warnings only, and the loggers of failures the demo injects on
 * purpose, or prints in its own words, quieted).
 *
 * <p><b>Threading:</b> call once, from {@code main}, before anything logs.
 */
final class Logging {

    private Logging() {
    }

    /** Makes Dubbo log through slf4j unless {@code -Ddubbo.application.logger} says otherwise. */
    static void quiet() {
        if (System.getProperty("dubbo.application.logger") == null) {
            System.setProperty("dubbo.application.logger", "slf4j"); // else Dubbo probes log4j first
        }
    }
}
