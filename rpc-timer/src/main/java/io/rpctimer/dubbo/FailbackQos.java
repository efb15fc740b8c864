package io.rpctimer.dubbo;

import io.rpctimer.retry.RetryLifecycle;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * What the QoS command {@code failback} answers, whichever of Dubbo's QoS interfaces the command implements:
 * {@link FailbackCommand} on Dubbo 3.2 and later, {@link LegacyFailbackCommand} on Dubbo 3.1. {@code failback} gives
 * the overview of the framework's applications; {@code failback <retry.id>} one call's history, if the client may
 * read it; {@code failback dead|replay|purge ...} the dead letters ({@link DeadLetterCommand}; {@link FailbackCommand}
 * runs those itself, to set the HTTP status).
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class FailbackQos {

    /** The command's name, summary and examples, for both QoS interfaces' {@code @Cmd}. */
    static final String NAME = "failback";
    static final String SUMMARY = "wheelfailback: pending retries per application and reference, the wheel;"
            + " 'failback <retry.id>' shows one call's history; 'failback dead|replay|purge ...' acts on dead letters";
    static final String OVERVIEW = "failback";
    static final String HISTORY = "failback 3f2a-0001";
    static final String DEAD = "failback dead service=com.example.Orders older=1h";
    static final String REPLAY = "failback replay all rate=50";
    static final String PURGE = "failback purge older=7d";

    private FailbackQos() {
    }

    /**
     * @param framework      the Dubbo framework the command belongs to (one JVM may hold several)
     * @param args           the command's arguments
     * @param mayReadHistory whether the client may read a call's history (providers, failure messages)
     * @return the command's output
     */
    static String answer(FrameworkModel framework, String[] args, BooleanSupplier mayReadHistory) {
        List<RetryLifecycle> lifecycles = lifecycles(framework);
        if (args == null || args.length == 0) {
            return FailbackReport.overview(lifecycles, WheelFailback.wheelStats());
        }
        if (DeadLetterCommand.handles(args)) {
            return DeadLetterCommand.run(args, lifecycles, mayReadHistory.getAsBoolean()).text();
        }
        if (args.length > 1) {
            return "usage: failback [retry.id] (got " + args.length + " arguments)";
        }
        if (!mayReadHistory.getAsBoolean()) {
            return "Permission denied: 'failback <retry.id>' requires PROTECTED"
                    + " (qos.anonymous.access.permission.level, or an address in qos.accept.foreign.ip.whitelist)";
        }
        return FailbackReport.history(args[0], lifecycles);
    }

    /** @return the lifecycles of this framework's applications, by name (one JVM may hold several frameworks) */
    static List<RetryLifecycle> lifecycles(FrameworkModel framework) {
        Set<String> names = framework.getApplicationModels().stream().map(ApplicationModel::tryGetApplicationName)
                .filter(Objects::nonNull).collect(Collectors.toSet());
        return WheelFailback.lifecycles().stream().filter(l -> names.contains(l.application())).toList();
    }
}
