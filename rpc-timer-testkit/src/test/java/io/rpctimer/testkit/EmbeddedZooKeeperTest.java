package io.rpctimer.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

@Timeout(30)
class EmbeddedZooKeeperTest {

    @Test
    void servesClientsOnLoopback_andCloseFreesThePortAndDeletesTheData() throws Exception {
        EmbeddedZooKeeper zk = EmbeddedZooKeeper.start();
        Path dir = zk.baseDir();
        int port = zk.port();
        try {
            assertEquals("zookeeper://127.0.0.1:" + port, zk.registryAddress());
            assertTrue(Ports.isListening(port));
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper client = new ZooKeeper(zk.connectString(), 10_000, e -> {
                if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            });
            try {
                assertTrue(connected.await(10, TimeUnit.SECONDS));
                assertTrue(client.exists("/zookeeper", false) != null);
            } finally {
                client.close();
            }
            assertTrue(Files.isDirectory(dir));
        } finally {
            zk.close();
        }
        assertFalse(Ports.isListening(port), "closed when close() returns");
        assertFalse(Files.exists(dir), "data deleted");
        zk.close(); // idempotent
    }
}
