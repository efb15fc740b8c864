package io.rpctimer.example;

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.dubbo.common.utils.NetUtils;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * What lets the example run anywhere with Java alone, and nothing a real deployment needs: a ZooKeeper server in the
 * JVM on 127.0.0.1 and a free port, and Dubbo kept on 127.0.0.1 (Dubbo 3.3 replaces a 127.x host with the first
 * network card's address; seeding its cached local address keeps everything on loopback).
 *
 * <p><b>Threading:</b> start and close from one thread.
 */
final class LocalZooKeeper implements AutoCloseable {

    private final ZooKeeperServerEmbedded server;
    private final Path dir;
    final String address;

    private LocalZooKeeper(ZooKeeperServerEmbedded server, Path dir, String address) {
        this.server = server;
        this.dir = dir;
        this.address = address;
    }

    static LocalZooKeeper start() throws Exception {
        loopback();
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Properties config = new Properties();
        config.setProperty("clientPort", String.valueOf(port));
        config.setProperty("clientPortAddress", "127.0.0.1");
        config.setProperty("admin.enableServer", "false");
        Path dir = Files.createTempDirectory("rpc-timer-example-zk-");
        ZooKeeperServerEmbedded server = ZooKeeperServerEmbedded.builder().baseDir(dir).configuration(config)
                .exitHandler(ExitHandler.LOG_ONLY).build();
        server.start(30_000);
        return new LocalZooKeeper(server, dir, "127.0.0.1:" + port);
    }

    private static void loopback() throws ReflectiveOperationException {
        Field local = NetUtils.class.getDeclaredField("LOCAL_ADDRESS");
        local.setAccessible(true);
        local.set(null, InetAddress.getLoopbackAddress());
        Field host = NetUtils.class.getDeclaredField("HOST_ADDRESS");
        host.setAccessible(true);
        host.set(null, "127.0.0.1");
    }

    @Override
    public void close() throws IOException {
        server.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
