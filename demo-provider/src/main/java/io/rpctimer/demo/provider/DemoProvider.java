package io.rpctimer.demo.provider;

import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.api.ProviderControl;
import io.rpctimer.demo.provider.fault.FaultFilter;
import io.rpctimer.demo.provider.fault.FaultInjector;
import io.rpctimer.demo.provider.ledger.CallLedger;
import io.rpctimer.demo.provider.support.Durations;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.testkit.Loopback;
import io.rpctimer.testkit.Ports;

import org.apache.dubbo.config.ServiceConfig;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One running demo provider: a {@link DubboNode} exporting {@link NotificationService} (with injected faults and a
 * call ledger) and {@link ProviderControl} (group = the provider's name) on 127.0.0.1:port.
 *
 * <pre>{@code
 * DemoProvider p1 = DemoProvider.start("p1", zk.registryAddress(), 0);   // 0 = a free port
 * p1.faults().failRate(0.3);                       // 30% business exceptions
 * p1.faults().hang(Duration.ofSeconds(10));        // every call hangs 10 s (or until clear)
 * CompletableFuture<Void> back = p1.goDown(Duration.ofSeconds(5));   // registry sees it go, and come back
 * p1.ledger().snapshot().duplicates();
 * p1.stop();
 * }</pre>
 *
 * <p>Several providers (and consumers) can run in one JVM; each has its own Dubbo framework. Dubbo's JVM shutdown hooks
 * stay registered unless {@link DubboNode#disableDubboShutdownHooks()} was called first; either way, {@link #stop()}
 * it yourself.
 *
 * <p>Thread-safe: every method may be called from any thread. {@link #goDown}, {@link #up()} and {@link #stop()} are
 * serialized.
 */
public final class DemoProvider implements Downtime, AutoCloseable {
    /** The longest {@link #goDown} accepted: one hour. */
    public static final Duration MAX_DOWNTIME = Duration.ofHours(1);

    private final String name;
    private final int port;
    private final String registryAddress;
    private final FaultInjector faults = new FaultInjector();
    private final CallLedger ledger = new CallLedger();
    private final NotificationServiceImpl service;
    private final ProviderCommands commands;
    private final DubboNode node;
    private final ScheduledExecutorService scheduler;
    private final Map<String, String> serviceParameters;

    private final Object lock = new Object();
    private ServiceConfig<NotificationService> exported; // guarded by lock; null while down
    private CompletableFuture<Void> back; // guarded by lock; non-null while down
    private ScheduledFuture<?> upTask; // guarded by lock
    private boolean stopped; // guarded by lock

    private DemoProvider(String name, String registryAddress, int port, Map<String, String> serviceParameters) {
        this.name = name;
        this.serviceParameters = Map.copyOf(serviceParameters);
        this.port = port;
        this.registryAddress = registryAddress;
        this.service = new NotificationServiceImpl(identity(), faults);
        this.commands = new ProviderCommands(identity(), faults, ledger, this);
        this.node = DubboNode.create(name, registryAddress).protocolPort(port);
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name + "-downtime");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts a provider and waits until its services are exported and registered.
     *
     * @param name the provider's name, also its Dubbo application name and its {@link ProviderControl} group: 1..64
     *        letters, digits, '.', '_' or '-'
     * @param registryAddress e.g. {@code zookeeper://127.0.0.1:2181}, or null for none (consumers then use
     *        {@code dubbo://127.0.0.1:<port>})
     * @param port the port on 127.0.0.1, 1..65535, or 0 for a free one
     * @return the running provider
     * @throws IllegalArgumentException if an argument is malformed, naming it
     * @throws IllegalStateException if Dubbo cannot start (port taken, registry unreachable)
     */
    public static DemoProvider start(String name, String registryAddress, int port) {
        return start(name, registryAddress, port, Map.of());
    }

    /**
     * As {@link #start(String, String, int)}, with parameters on {@link NotificationService}'s export, e.g.
     * {@code retrydedup=true} for a provider filter found on the class path.
     *
     * @param serviceParameters Dubbo URL parameters of the service; not null
     */
    public static DemoProvider start(String name, String registryAddress, int port,
                                     Map<String, String> serviceParameters) {
        DubboNode.checkName("name", name);
        if (port != 0) {
            Ports.checkPort("port", port);
        }
        DemoProvider p = new DemoProvider(name, registryAddress, port == 0 ? Ports.free() : port,
                serviceParameters);
        try {
            p.startNode();
        } catch (RuntimeException e) {
            p.stop();
            throw new IllegalStateException("cannot start provider " + p.identity() + ": " + e.getMessage(), e);
        }
        return p;
    }

    private void startNode() {
        // FaultFilter finds these two through the application's bean factory
        node.application().getBeanFactory().registerBean(faults);
        node.application().getBeanFactory().registerBean(ledger);
        ServiceConfig<ProviderControl> control = new ServiceConfig<>();
        control.setInterface(ProviderControl.class);
        control.setRef(new ProviderControlImpl(this));
        control.setGroup(name);
        synchronized (lock) {
            exported = notificationService();
            node.service(exported).service(control).start();
        }
    }

    private ServiceConfig<NotificationService> notificationService() {
        ServiceConfig<NotificationService> sc = new ServiceConfig<>();
        sc.setInterface(NotificationService.class);
        sc.setRef(service);
        sc.setFilter(FaultFilter.NAME);
        sc.setParameters(new HashMap<>(serviceParameters));
        return sc;
    }

    /** @return the provider's name */
    public String name() {
        return name;
    }

    /** @return the protocol port on 127.0.0.1 */
    public int port() {
        return port;
    }

    /** @return {@code "127.0.0.1:<port>"} */
    public String address() {
        return Loopback.HOST + ":" + port;
    }

    /** @return {@code "<name>@127.0.0.1:<port>"}, what {@link NotificationService} answers */
    public String identity() {
        return name + "@" + address();
    }

    /** @return the registry address, or null */
    public String registryAddress() {
        return registryAddress;
    }

    /** @return the provider's fault injector; changes apply to the next calls */
    public FaultInjector faults() {
        return faults;
    }

    /** @return the provider's call ledger */
    public CallLedger ledger() {
        return ledger;
    }

    /** @return the Dubbo node, for what this class does not cover */
    public DubboNode node() {
        return node;
    }

    /**
     * Runs one command of the terminal language (see {@link ProviderCommands}).
     *
     * @param command e.g. {@code "fail 0.3"}
     * @return the reply
     * @throws IllegalArgumentException if malformed, naming the command or argument and the value
     */
    public String execute(String command) {
        return commands.execute(command);
    }

    /**
     * Takes {@link NotificationService} down: unregisters it (consumers watching the registry drop this provider) and
     * unexports it (calls that still arrive fail), then exports it again after {@code downFor}. {@link ProviderControl}
     * stays up. Returns once the service is down, about 0.1 to 0.3 s.
     *
     * @param downFor 1 ms .. 1 h
     * @return completes when the service is exported again (exceptionally if that fails or the provider stops first)
     * @throws IllegalArgumentException {@code downFor: 0 ms (expected: 1 ms..1 h)}
     * @throws IllegalStateException if already down or stopped
     */
    @Override
    public CompletableFuture<Void> goDown(Duration downFor) {
        if (downFor == null || downFor.toMillis() < 1 || downFor.compareTo(MAX_DOWNTIME) > 0) {
            throw new IllegalArgumentException("downFor: " + (downFor == null ? "null" : downFor.toMillis() + " ms")
                    + " (expected: 1 ms.." + Durations.format(MAX_DOWNTIME) + ")");
        }
        synchronized (lock) {
            checkNotStopped();
            if (back != null) {
                throw new IllegalStateException(identity() + " is already down");
            }
            node.unexport(exported);
            exported = null;
            back = new CompletableFuture<>();
            upTask = scheduler.schedule(this::scheduledUp, downFor.toMillis(), TimeUnit.MILLISECONDS);
            return back.copy(); // callers cannot complete ours
        }
    }

    private void scheduledUp() {
        try {
            up();
        } catch (RuntimeException e) {
            System.err.println(identity() + ": cannot export the service again: " + e.getMessage() + " (try 'up')");
        }
    }

    /**
     * Exports {@link NotificationService} again now, if it is down.
     *
     * @return true if it was down
     * @throws IllegalStateException if the export fails; the service stays down
     */
    @Override
    public boolean up() {
        synchronized (lock) {
            if (back == null || stopped) {
                return false;
            }
            upTask.cancel(false);
            ServiceConfig<NotificationService> sc = notificationService();
            node.export(sc);
            exported = sc;
            back.complete(null);
            back = null;
            return true;
        }
    }

    /** @return true while {@link NotificationService} is down */
    @Override
    public boolean isDown() {
        synchronized (lock) {
            return back != null;
        }
    }

    /**
     * Stops the provider: releases calls waiting out a latency or hang, unregisters and unexports both services,
     * closes the port. Idempotent. The port is free about 0.1 to 0.5 s after this returns.
     */
    public void stop() {
        CompletableFuture<Void> pendingBack;
        synchronized (lock) {
            if (stopped) {
                return;
            }
            stopped = true;
            pendingBack = back;
            if (upTask != null) {
                upTask.cancel(false);
            }
        }
        scheduler.shutdownNow();
        faults.releaseWaiting();
        try {
            node.close();
        } finally {
            if (pendingBack != null) {
                pendingBack.completeExceptionally(new IllegalStateException(identity() + " stopped while down"));
            }
        }
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    private void checkNotStopped() {
        if (stopped) {
            throw new IllegalStateException(identity() + " is stopped");
        }
    }

    @Override
    public String toString() {
        return "DemoProvider[" + identity() + (isDown() ? " DOWN" : "") + ", faults: " + faults.settings() + "]";
    }
}
