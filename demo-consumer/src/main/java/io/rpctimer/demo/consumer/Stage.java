package io.rpctimer.demo.consumer;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What surrounds the consumer of a {@link ConsumerRun}: the registry and the providers. For the one-command demo,
 * an embedded ZooKeeper and two providers in this JVM with a fault script ({@link DemoStage}); for the standalone
 * consumer, an external registry and whatever providers are registered there ({@link RemoteStage}).
 *
 * <p><b>Threading:</b> {@link #start} runs on the run's thread; the other methods may be called from the run's thread
 * or a shutdown hook, one at a time.
 */
interface Stage {

    /** @return what the run is called in its result, e.g. the scenario's name */
    String name();

    /**
     * Starts what the consumer needs, printing a line per thing started, and keeps each in {@code resources} so that
     * it is stopped after the consumer.
     *
     * @throws Resources.Stopping if the run is being stopped
     * @throws RuntimeException   if something cannot start; the message says what
     */
    void start(Console console, Resources resources);

    /** @return the registry the consumer uses, {@code zookeeper://host:port} */
    String registryAddress();

    /** @return provider address ({@code host:port}) to the label printed for it, e.g. {@code p1@127.0.0.1:4001} */
    Map<String, String> providerLabels();

    /** @return {@code options} with what the stage gives the consumer, e.g. a journal; by default unchanged */
    default DemoConsumer.Options consumerOptions(DemoConsumer.Options options) {
        return options;
    }

    /** Called once the consumer has started, before the first call. */
    void consumerStarted(DemoConsumer consumer);

    /** @return the timed fault changes to play while the calls go out; empty for none */
    List<Scenario.Step> script();

    /** Called when every call has been answered: ends the faults still in force. */
    void endFaults(Console console);

    /**
     * Called once every call has its outcome, with the consumer still running: the stage's last act, e.g. a replay of
     * the dead letters. Returns early when the run begins to stop. By default nothing.
     */
    default void afterOutcomes(DemoConsumer consumer, EventLines events) {
    }

    /** @return the summary of the stage's dead-letter replay, if it played one to the end; by default none */
    default Optional<DeadLetterSummary> deadLetters() {
        return Optional.empty();
    }

    /** Called once when the run begins to stop: from now on, the stage prints nothing of its script. */
    void stopping();

    /** @return the duplicates providers saw, read after the consumer stopped and before the stage stops */
    FinalReport.Duplicates duplicates(Report report);
}
