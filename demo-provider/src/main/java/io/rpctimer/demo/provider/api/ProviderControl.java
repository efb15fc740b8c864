package io.rpctimer.demo.provider.api;

import java.util.Map;

/**
 * Remote control of one demo provider: change its injected faults and read its call ledger while it runs.
 *
 * <p>Every demo provider exports this service besides {@link NotificationService}, on the same port, in the Dubbo
 * <em>group named after the provider</em>, so each provider is addressed on its own:
 * <pre>{@code
 * ReferenceConfig<ProviderControl> ref = new ReferenceConfig<>();
 * ref.setInterface(ProviderControl.class);
 * ref.setGroup("p1");                                   // the provider's name
 * // through the registry, or directly: ref.setUrl("dubbo://127.0.0.1:20881");
 * }</pre>
 * The control service stays exported while the provider is "down" ({@link #downMillis(long)}), so a provider can be
 * brought back early with {@link #up()}.
 *
 * <p>Arguments are validated on the provider; a bad one fails the call with {@link IllegalArgumentException} naming the
 * parameter and the value. Units are in the method names. Implementations are thread-safe.
 */
public interface ProviderControl {

    /** @return the provider's identity, {@code "<name>@<host>:<port>"}, as {@link NotificationService} returns it */
    String provider();

    /**
     * Runs one command of the provider's terminal language, e.g. {@code "fail 0.3"}, {@code "hang 10s"},
     * {@code "down 5s"}, {@code "clear"}, {@code "stats"}, {@code "help"} ({@code quit} is terminal-only).
     *
     * @param command the command line
     * @return the reply, one or more lines of text
     * @throws IllegalArgumentException if the command or its argument is malformed; the message names it
     */
    String execute(String command) throws IllegalArgumentException;

    /**
     * Makes this fraction of calls fail with {@link NotificationRejectedException} (a business failure).
     *
     * @param rate 0..1 (0 = never, 1 = always)
     * @throws IllegalArgumentException if out of range
     */
    void failRate(double rate) throws IllegalArgumentException;

    /**
     * Makes the next {@code calls} calls fail with {@link NotificationRejectedException}, before {@link #failRate}
     * applies. Replaces any remaining count.
     *
     * @param calls at least 0
     * @throws IllegalArgumentException if negative
     */
    void failNext(int calls) throws IllegalArgumentException;

    /**
     * Makes this fraction of calls fail at the RPC level (the consumer sees a network-level {@code RpcException}).
     *
     * @param rate 0..1
     * @throws IllegalArgumentException if out of range
     */
    void errorRate(double rate) throws IllegalArgumentException;

    /**
     * Makes the next {@code calls} calls fail at the RPC level, before {@link #errorRate} applies.
     *
     * @param calls at least 0
     * @throws IllegalArgumentException if negative
     */
    void errorNext(int calls) throws IllegalArgumentException;

    /**
     * Adds this delay to every call.
     *
     * @param millis 0 (none) .. 600000
     * @throws IllegalArgumentException if out of range
     */
    void latencyMillis(long millis) throws IllegalArgumentException;

    /**
     * Makes every call hang this long (set it above the consumer's timeout), or until {@link #clear()}.
     *
     * @param millis 0 (none) .. 600000
     * @throws IllegalArgumentException if out of range
     */
    void hangMillis(long millis) throws IllegalArgumentException;

    /**
     * Takes {@link NotificationService} down: unregisters and unexports it, then exports it again after
     * {@code millis}. Returns once it is down.
     *
     * @param millis 1 .. 3600000
     * @throws IllegalArgumentException if out of range
     * @throws IllegalStateException if it is already down
     */
    void downMillis(long millis) throws IllegalArgumentException, IllegalStateException;

    /** Exports {@link NotificationService} again now if it is down; no effect otherwise. */
    void up();

    /** Removes every fault, releases hanging calls, and brings the service up if it is down. */
    void clear();

    /** @return the current faults in words, e.g. {@code "fail 30%, latency 200 ms"} or {@code "none"} */
    String faults();

    /**
     * @return the ledger's counters: {@code served}, {@code completed}, {@code rejected}, {@code errors},
     *         {@code failed}, {@code duplicates} (retry ids completed more than once), {@code duplicateCallIds},
     *         and {@code attempt.<n>} (calls served per {@code retry.attempt}; 0 = no attachment, -1 = unparsable)
     */
    Map<String, Long> stats();

    /** Forgets every recorded call. */
    void resetStats();
}
