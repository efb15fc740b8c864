package io.rpctimer.dubbo;

import io.rpctimer.retry.RetryLifecycle;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.dubbo.qos.api.BaseCommand;
import org.apache.dubbo.qos.api.Cmd;
import org.apache.dubbo.qos.api.CommandContext;
import org.apache.dubbo.qos.api.PermissionLevel;
import org.apache.dubbo.qos.common.QosConstants;
import org.apache.dubbo.qos.permission.DefaultAnonymousAccessPermissionChecker;
import org.apache.dubbo.qos.permission.PermissionChecker;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * The QoS command {@code failback} ({@code META-INF/dubbo/org.apache.dubbo.qos.api.BaseCommand}).
 * {@code failback} lists, for each application of this Dubbo framework with a {@code wheelfailback} reference, its
 * counters and journal, then per reference its pending retries, oldest pending age, budget and counters, then the
 * shared wheel's stats. {@code failback <retry.id>} shows that call's recorded steps. {@code failback dead ...},
 * {@code failback replay ...} and {@code failback purge ...} list and act on dead letters ({@link DeadLetterCommand}).
 *
 * <p>Permission: Dubbo checks a command's level from its {@link Cmd} annotation alone, before it sees the
 * arguments, so the annotation says {@code PUBLIC} (the overview shows counts and service names only) and the
 * one-call form and the dead-letter forms check {@code PROTECTED} themselves, with the same {@link PermissionChecker}
 * Dubbo uses: a call's history and a dead letter name providers and carry failure messages, and replay and purge
 * change what the application keeps.
 *
 * <p><b>Threading:</b> stateless apart from the framework it reports on; thread-safe.
 */
@Cmd(name = "failback", summary = "wheelfailback: pending retries per application and reference, the wheel;"
        + " 'failback <retry.id>' shows one call's history; 'failback dead|replay|purge ...' acts on dead letters",
        example = {"failback", "failback 3f2a-0001", "failback dead service=com.example.Orders older=1h",
            "failback replay all rate=50", "failback purge older=7d"},
        requiredPermissionLevel = PermissionLevel.PUBLIC)
public final class FailbackCommand implements BaseCommand {

    private final FrameworkModel framework;

    public FailbackCommand(FrameworkModel framework) {
        this.framework = framework;
    }

    @Override
    public String execute(CommandContext context, String[] args) {
        List<RetryLifecycle> lifecycles = lifecycles();
        if (args == null || args.length == 0) {
            return FailbackReport.overview(lifecycles, WheelFailback.wheelStats());
        }
        if (DeadLetterCommand.handles(args)) {
            DeadLetterCommand.Answer answer = DeadLetterCommand.run(args, lifecycles, mayReadHistory(context));
            context.setHttpCode(answer.httpCode());
            return answer.text();
        }
        if (args.length > 1) {
            return "usage: failback [retry.id] (got " + args.length + " arguments)";
        }
        if (!mayReadHistory(context)) {
            return "Permission denied: 'failback <retry.id>' requires " + PermissionLevel.PROTECTED
                    + " (qos.anonymous.access.permission.level, or an address in qos.accept.foreign.ip.whitelist)";
        }
        return FailbackReport.history(args[0], lifecycles);
    }

    /** @return the lifecycles of this framework's applications, by name (one JVM may hold several frameworks) */
    private List<RetryLifecycle> lifecycles() {
        Set<String> names = framework.getApplicationModels().stream().map(ApplicationModel::tryGetApplicationName)
                .filter(Objects::nonNull).collect(Collectors.toSet());
        return WheelFailback.lifecycles().stream().filter(l -> names.contains(l.application())).toList();
    }

    /** As Dubbo's command executor decides: only anonymous access is checked, with the configured checker. */
    private boolean mayReadHistory(CommandContext context) {
        if (!context.isAllowAnonymousAccess()) {
            return true;
        }
        PermissionChecker checker = DefaultAnonymousAccessPermissionChecker.INSTANCE;
        if (framework.getExtensionLoader(PermissionChecker.class).hasExtension(QosConstants.QOS_PERMISSION_CHECKER)) {
            checker = framework.getExtensionLoader(PermissionChecker.class)
                    .getExtension(QosConstants.QOS_PERMISSION_CHECKER);
        }
        return checker.access(context, PermissionLevel.PROTECTED);
    }
}
