package io.rpctimer.faults;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;

/**
 * A real ZooKeeper for the fault suite, from Curator's {@code curator-test}: one {@link TestingServer} that can be
 * stopped and restarted on the same port with its data kept, or a {@link TestingCluster} ensemble that can lose a
 * node. Everything listens on 127.0.0.1, on free ports; data lives in temporary directories deleted on close.
 *
 * <p>{@code tickTime} is 1000 ms, so ZooKeeper negotiates Dubbo's 60 s session timeout down to 20 s: a restart of a
 * few seconds keeps every session (and the providers' ephemeral registrations).
 *
 * <p><b>Threading:</b> use from the test thread.
 */
final class ZooKeeperRig implements Closeable {

    private static final String HOST = "127.0.0.1";
    private static final int TICK_MILLIS = 1000;

    static {
        // ZooKeeper would otherwise start a Jetty admin server on :8080 per node
        System.setProperty("zookeeper.admin.enableServer", "false");
    }

    private final TestingServer server;   // null for an ensemble
    private final TestingCluster cluster; // null for a single server

    private ZooKeeperRig(TestingServer server, TestingCluster cluster) {
        this.server = server;
        this.cluster = cluster;
    }

    /** Starts one server and waits until it serves. */
    static ZooKeeperRig single() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MILLIS, -1,
                Map.of("clientPortAddress", HOST), HOST);
        return new ZooKeeperRig(new TestingServer(spec, true), null);
    }

    /** Starts an ensemble of {@code size} servers and waits until it has a quorum. */
    static ZooKeeperRig ensemble(int size) throws Exception {
        List<InstanceSpec> specs = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            specs.add(new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MILLIS, -1, Map.of(), HOST));
        }
        TestingCluster c = new TestingCluster(specs);
        try {
            c.start();
        } catch (Exception e) {
            c.close();
            throw e;
        }
        return new ZooKeeperRig(null, c);
    }

    /** @return e.g. {@code zookeeper://127.0.0.1:p1?backup=127.0.0.1:p2,127.0.0.1:p3}, for Dubbo */
    String registryAddress() {
        if (server != null) {
            return "zookeeper://" + HOST + ":" + server.getPort();
        }
        List<String> addresses = cluster.getInstances().stream().map(i -> HOST + ":" + i.getPort()).toList();
        return "zookeeper://" + addresses.get(0) + "?backup=" + String.join(",", addresses.subList(1,
                addresses.size()));
    }

    /** Stops the single server; its port closes, its data stays. */
    void stop() throws IOException {
        single("stop").stop();
    }

    /** Starts the single server again, on the same port with the same data. */
    void restart() throws Exception {
        single("restart").restart();
    }

    /**
     * Kills one node of the ensemble (the quorum survives with the others).
     *
     * @return the client address of the killed node
     */
    String killOne(int index) throws Exception {
        if (cluster == null) {
            throw new IllegalStateException("killOne: not an ensemble");
        }
        InstanceSpec victim = new ArrayList<>(cluster.getInstances()).get(index);
        if (!cluster.killServer(victim)) {
            throw new IllegalStateException("could not kill " + victim);
        }
        return HOST + ":" + victim.getPort();
    }

    private TestingServer single(String what) {
        if (server == null) {
            throw new IllegalStateException(what + ": not a single server");
        }
        return server;
    }

    @Override
    public void close() throws IOException {
        if (server != null) {
            server.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    public String toString() {
        return (server != null ? "ZooKeeper " : "ZooKeeper ensemble ") + registryAddress();
    }
}
