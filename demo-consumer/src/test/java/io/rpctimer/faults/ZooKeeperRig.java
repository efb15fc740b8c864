package io.rpctimer.faults;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.util.ServiceUtils;

/**
 * A real ZooKeeper for the fault suite, from Curator's {@code curator-test}: one {@link TestingServer} that can be
 * stopped and restarted on the same port with its data kept, or a {@link TestingCluster} ensemble that can lose a
 * node. Everything listens on 127.0.0.1, on free ports; data lives in temporary directories deleted on close.
 *
 * <p>The ports are taken below the kernel's ephemeral range, not from {@code new ServerSocket(0)}. A port found
 * free is bound by ZooKeeper only later (an ensemble node binds its election port in a thread of its own, a stopped
 * server binds its client port again on restart), and meanwhile any outgoing connection of this JVM — the ensemble's
 * own peers, Dubbo's and Curator's clients — may take that port as its local port, for as long as it lives.
 *
 * <p>{@code tickTime} is 1000 ms, so ZooKeeper negotiates Dubbo's 60 s session timeout down to 20 s: a restart of a
 * few seconds keeps every session (and the providers' ephemeral registrations).
 *
 * <p><b>Threading:</b> use from the test thread.
 */
public final class ZooKeeperRig implements Closeable {

    private static final String HOST = "127.0.0.1";
    private static final int TICK_MILLIS = 1000;

    /** The lowest port handed out; below it are the well-known and registered ports services commonly use. */
    private static final int LOWEST_PORT = 15000;
    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    static {
        // ZooKeeper would otherwise start a Jetty admin server on :8080 per node
        System.setProperty("zookeeper.admin.enableServer", "false");
        // A server that cannot bind its port calls System.exit (2), so does an ensemble node that cannot keep its
        // election port open (14): either would end the whole test JVM (surefire: "The forked VM terminated without
        // properly saying goodbye"). Logged instead, the test fails on what it checks, with the log saying why.
        ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
    }

    private final TestingServer server;   // null for an ensemble
    private final TestingCluster cluster; // null for a single server

    private ZooKeeperRig(TestingServer server, TestingCluster cluster) {
        this.server = server;
        this.cluster = cluster;
    }

    /** Starts one server and waits until it serves. */
    public static ZooKeeperRig single() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, port(), port(), port(), true, -1, TICK_MILLIS, -1,
                Map.of("clientPortAddress", HOST), HOST);
        return new ZooKeeperRig(new TestingServer(spec, true), null);
    }

    /** Starts an ensemble of {@code size} servers and waits until it has a quorum. */
    static ZooKeeperRig ensemble(int size) throws Exception {
        List<InstanceSpec> specs = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            specs.add(new InstanceSpec(null, port(), port(), port(), true, -1, TICK_MILLIS, -1, Map.of(), HOST));
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
    public String registryAddress() {
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

    /**
     * @return a port of 127.0.0.1 that is free now, lies below the ephemeral range (so no outgoing connection takes
     *     it), and was not handed out before in this JVM
     */
    private static synchronized int port() throws IOException {
        int highest = ephemeralLow() - 1;
        for (int attempt = 0; attempt < 1000; attempt++) {
            int candidate = ThreadLocalRandom.current().nextInt(LOWEST_PORT, highest + 1);
            if (HANDED_OUT.contains(candidate)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getByName(HOST), candidate));
            } catch (IOException inUse) {
                continue;
            }
            HANDED_OUT.add(candidate);
            return candidate;
        }
        throw new IOException("no free port of " + HOST + " in " + LOWEST_PORT + ".." + highest + " after 1000 tries");
    }

    /** @return the first port of Linux's ephemeral range, or IANA's (49152) where the kernel does not say */
    private static int ephemeralLow() {
        try {
            // readAllLines: a procfs file reports size 0, and readString read only its first byte
            String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim();
            return Math.max(LOWEST_PORT + 1000, Integer.parseInt(range.split("\\s+")[0]));
        } catch (IOException | RuntimeException notLinux) {
            return 49152;
        }
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
