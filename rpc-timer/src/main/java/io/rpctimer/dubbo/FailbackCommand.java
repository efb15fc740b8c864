package io.rpctimer.dubbo;

import org.apache.dubbo.qos.api.BaseCommand;
import org.apache.dubbo.qos.api.Cmd;
import org.apache.dubbo.qos.api.CommandContext;
import org.apache.dubbo.qos.api.PermissionLevel;
import org.apache.dubbo.qos.common.QosConstants;
import org.apache.dubbo.qos.permission.DefaultAnonymousAccessPermissionChecker;
import org.apache.dubbo.qos.permission.PermissionChecker;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * The QoS command {@code failback} ({@code META-INF/dubbo/org.apache.dubbo.qos.api.BaseCommand}).
 * {@code failback} lists, for each application of this Dubbo framework with a {@code wheelfailback} reference, its
 * counters and journal, then per reference its pending retries, oldest pending age, budget and counters, then the
 * shared wheel's stats. {@code failback <retry.id>} shows that call's recorded steps ({@link FailbackQos});
 * {@code failback dead|replay|purge ...} list and act on dead letters ({@link DeadLetterCommand}). Dubbo
 * 3.2 and later read this class's SPI file; Dubbo 3.1, whose QoS interface lives elsewhere, runs
 * {@link LegacyFailbackCommand}.
 *
 * <p>Permission: Dubbo checks a command's level from its {@link Cmd} annotation alone, before it sees the
 * arguments, so the annotation says {@code PUBLIC} (the overview shows counts and service names only) and the
 * one-call form and the dead-letter forms check {@code PROTECTED} themselves, with the same {@link PermissionChecker}
 * Dubbo uses: a call's history and a dead letter name providers and carry failure messages, and replay and purge
 * change what the application keeps. The dead-letter forms also set the answer's HTTP status.
 *
 * <p><b>Threading:</b> stateless apart from the framework it reports on; thread-safe.
 */
@Cmd(name = FailbackQos.NAME, summary = FailbackQos.SUMMARY, example = {FailbackQos.OVERVIEW, FailbackQos.HISTORY,
    FailbackQos.DEAD, FailbackQos.REPLAY, FailbackQos.PURGE}, requiredPermissionLevel = PermissionLevel.PUBLIC)
public final class FailbackCommand implements BaseCommand {

    private final FrameworkModel framework;

    public FailbackCommand(FrameworkModel framework) {
        this.framework = framework;
    }

    @Override
    public String execute(CommandContext context, String[] args) {
        if (DeadLetterCommand.handles(args)) {
            DeadLetterCommand.Answer answer = DeadLetterCommand.run(args, FailbackQos.lifecycles(framework),
                    mayReadHistory(context));
            context.setHttpCode(answer.httpCode());
            return answer.text();
        }
        return FailbackQos.answer(framework, args, () -> mayReadHistory(context));
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
