package io.rpctimer.faults;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.RetryLifecycle;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A consumer whose journal is on a database with a password, given as the documented JVM system property: the
 * password opens the database, and appears neither in the registry (Dubbo publishes every consumer URL parameter
 * there) nor in what an operator sees of the journal.
 */
class CredentialsIT {

    private static final String SECRET = "s3cret-" + UUID.randomUUID();

    @Test
    @Timeout(180)
    void theJournalPasswordReachesNeitherTheRegistryNorTheOperatorsView() throws Exception {
        String db = "jdbc:h2:mem:creds-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        System.setProperty("rpctimer.failback.store.password", SECRET);
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 2, o -> o.parameter("failback.store", "jdbc")
                .parameter("failback.store.url", db).parameter("failback.store.user", "sa"))) {
            try (Connection c = DriverManager.getConnection(db, "sa", SECRET)) {
                assertTrue(c.isValid(5), "the consumer created the database with the password it was given");
            }
            List<String> nodes = registry(rig.zk().registryAddress());
            assertTrue(nodes.stream().anyMatch(n -> n.contains("failback.store.user=sa")),
                    "the consumer's URL, with its failback keys, is in the registry: " + nodes);
            assertFalse(nodes.stream().anyMatch(n -> n.contains(SECRET)), "the password is in the registry");
            for (RetryLifecycle lifecycle : WheelFailback.lifecycles()) {
                String journal = lifecycle.state().journal();
                assertFalse(journal.contains(SECRET), journal);
            }
        } finally {
            System.clearProperty("rpctimer.failback.store.password");
        }
    }

    /** @return every node of the registry: its path and its data, URL-decoded as Dubbo encodes them */
    private static List<String> registry(String registryAddress) throws Exception {
        String connect = registryAddress.substring("zookeeper://".length()).replaceAll("\\?.*", "");
        List<String> out = new ArrayList<>();
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient(connect, new RetryOneTime(100))) {
            zk.start();
            zk.blockUntilConnected();
            walk(zk, "/", out);
        }
        return out;
    }

    private static void walk(CuratorFramework zk, String path, List<String> out) throws Exception {
        byte[] data = zk.getData().forPath(path);
        out.add(URLDecoder.decode(path, StandardCharsets.UTF_8)
                + (data == null ? "" : " " + new String(data, StandardCharsets.UTF_8)));
        for (String child : zk.getChildren().forPath(path)) {
            walk(zk, path.equals("/") ? "/" + child : path + "/" + child, out);
        }
    }
}
