package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.List;
import org.apache.dubbo.qos.api.Cmd;
import org.apache.dubbo.qos.api.CommandContext;
import org.apache.dubbo.qos.api.PermissionLevel;
import org.apache.dubbo.qos.api.QosConfiguration;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The command's permission split: Dubbo lets an anonymous foreign client at PUBLIC level run {@code failback}, but
 * a call's history (providers, failure messages) needs PROTECTED. The real-port behaviour is in
 * {@link FailbackOperationsIT}; a foreign address cannot be had on 127.0.0.1, hence a mocked channel here.
 */
class FailbackCommandTest {

    private final FrameworkModel framework = new FrameworkModel();
    private final FailbackCommand command = new FailbackCommand(framework);

    @AfterEach
    void destroy() {
        framework.destroy();
    }

    @Test
    void annotation_isPublic_soTheOverviewIsReadableAnonymously() {
        Cmd cmd = FailbackCommand.class.getAnnotation(Cmd.class);
        assertEquals("failback", cmd.name());
        assertEquals(PermissionLevel.PUBLIC, cmd.requiredPermissionLevel());
    }

    @Test
    void anonymousForeignPublicClient_getsTheOverviewButNotAHistory() {
        assertFalse(command.execute(foreign("PUBLIC", "failback"), new String[0]).startsWith("Permission denied"));
        String history = command.execute(foreign("PUBLIC", "failback", "r-1"), new String[] {"r-1"});
        assertTrue(history.startsWith("Permission denied"), history);
    }

    @Test
    void anonymousForeignProtectedClient_getsAHistory() {
        String history = command.execute(foreign("PROTECTED", "failback", "r-1"), new String[] {"r-1"});
        assertTrue(history.startsWith("retry.id=r-1: no recorded step"), history);
    }

    @Test
    void anonymousForeignPublicClient_cannotListReplayOrPurgeDeadLetters() {
        for (String[] args : List.of(new String[] {"dead"}, new String[] {"replay", "all"},
                new String[] {"purge", "older=1d"})) {
            CommandContext context = foreign("PUBLIC", "failback", args);
            String out = command.execute(context, args);
            assertTrue(out.startsWith("Permission denied: 'failback " + args[0] + "' requires PROTECTED"), out);
            assertEquals(403, context.getHttpCode());
        }
    }

    @Test
    void anonymousForeignProtectedClient_mayReplayAndPurge() {
        for (String[] args : List.of(new String[] {"replay", "all"}, new String[] {"purge", "all"})) {
            CommandContext context = foreign("PROTECTED", "failback", args);
            assertEquals("no application with a wheelfailback reference", command.execute(context, args));
            assertEquals(200, context.getHttpCode());
        }
    }

    @Test
    void twoArguments_usage() {
        String out = command.execute(foreign("PRIVATE", "failback", "a", "b"), new String[] {"a", "b"});
        assertTrue(out.startsWith("usage: failback [retry.id]"), out);
    }

    private static CommandContext foreign(String anonymousLevel, String name, String... args) {
        CommandContext context = new CommandContext(name, args, true);
        context.setQosConfiguration(QosConfiguration.builder().anonymousAccessPermissionLevel(anonymousLevel)
                .acceptForeignIp(false).build());
        Channel channel = mock(Channel.class);
        when(channel.remoteAddress()).thenReturn(new InetSocketAddress("198.51.100.7", 40000));
        context.setRemote(channel);
        return context;
    }
}
