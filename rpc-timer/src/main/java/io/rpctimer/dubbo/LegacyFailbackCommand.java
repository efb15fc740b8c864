package io.rpctimer.dubbo;

import org.apache.dubbo.qos.command.BaseCommand;
import org.apache.dubbo.qos.command.CommandContext;
import org.apache.dubbo.qos.command.annotation.Cmd;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * The QoS command {@code failback} on Dubbo 3.1, whose QoS interface is {@code org.apache.dubbo.qos.command.BaseCommand}
 * ({@code META-INF/dubbo/org.apache.dubbo.qos.command.BaseCommand}); Dubbo 3.2 and later run {@link FailbackCommand}.
 * Each line reads only the SPI file of its own interface, so exactly one of the two is loaded. Same output
 * ({@link FailbackQos}).
 *
 * <p>Permission: Dubbo 3.1 has no permission levels. A client that may connect at all (from loopback, with
 * {@code qos.accept.foreign.ip}, or from an address in {@code qos.accept.foreign.ip.whitelist}) may run every
 * command, and so may read a call's history, and list, replay and purge dead letters, too.
 *
 * <p>Compiled against the QoS interface of Dubbo 3.1 ({@code dubbo-qos}, compile-only); on a Dubbo line rpc-timer does
 * not support it answers with {@link DubboSupport}'s message.
 *
 * <p><b>Threading:</b> stateless apart from the framework it reports on; thread-safe.
 */
@Cmd(name = FailbackQos.NAME, summary = FailbackQos.SUMMARY, example = {FailbackQos.OVERVIEW, FailbackQos.HISTORY,
    FailbackQos.DEAD, FailbackQos.REPLAY, FailbackQos.PURGE})
public final class LegacyFailbackCommand implements BaseCommand {

    private final FrameworkModel framework;

    public LegacyFailbackCommand(FrameworkModel framework) {
        this.framework = framework;
    }

    @Override
    public String execute(CommandContext context, String[] args) {
        String unsupported = DubboSupport.problem("the QoS command failback");
        return unsupported != null ? unsupported : FailbackQos.answer(framework, args, () -> true);
    }
}
