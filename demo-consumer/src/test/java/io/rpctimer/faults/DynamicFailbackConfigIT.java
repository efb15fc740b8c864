package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.dubbo.common.URL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A consumer-side configurator override written to ZooKeeper changes {@code failback.delay} for new
 * failures of a running consumer, without a restart.
 */
class DynamicFailbackConfigIT {

    @Test
    @Timeout(90)
    void zooKeeperConfiguratorOverride_changesTheDelayOfNewFailures() throws Exception {
        List<RetryEvent> scheduled = new CopyOnWriteArrayList<>();
        RetryListener listener = e -> {
            if (e.type() == RetryEvent.Type.SCHEDULED) {
                scheduled.add(e);
            }
        };
        WheelFailback.addListener(listener);
        try (ZooKeeperRig zk = ZooKeeperRig.single();
             FaultRig rig = FaultRig.start(zk, 2, o -> o.timeout(Duration.ofMillis(300))
                     .parameter("failback.delay", "60000").parameter("failback.jitter", "0"));
             CuratorFramework client = CuratorFrameworkFactory.newClient(
                     zk.registryAddress().substring("zookeeper://".length()), new RetryOneTime(100))) {
            rig.provider(1).execute("error 1.0");
            rig.provider(2).execute("error 1.0");
            rig.consumer().send("before", "m");
            await().atMost(Duration.ofSeconds(10)).until(() -> !scheduled.isEmpty());
            assertEquals(60_000, scheduled.get(0).delayMillis(), "first failure: " + scheduled.get(0));

            client.start();
            String iface = NotificationService.class.getName();
            String override = "override://0.0.0.0/" + iface + "?category=configurators&dynamic=false&enabled=true"
                    + "&side=consumer&failback.delay=100";
            client.create().creatingParentsIfNeeded()
                    .forPath("/dubbo/" + iface + "/configurators/" + URL.encode(override));

            AtomicInteger n = new AtomicInteger();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
                rig.consumer().send("after-" + n.incrementAndGet(), "m");
                return scheduled.stream().anyMatch(e -> e.delayMillis() == 100);
            });
        } finally {
            WheelFailback.removeListener(listener);
        }
    }
}
