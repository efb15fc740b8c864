package io.rpctimer.testkit;

import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One Dubbo "process" inside this JVM: its own {@link FrameworkModel}, that model's default {@link ApplicationModel},
 * and its {@link DubboBootstrap}, with settings that start and stop fast on 127.0.0.1. Several nodes (providers and
 * consumers) can live in one JVM. Runs on Dubbo 3.1, 3.2 and 3.3 ({@link DubboLine}).
 *
 * <h3>Two ways to wire nodes</h3>
 * <b>Direct URLs</b>, no registry: the shortcuts start a node at once.
 * <pre>{@code
 * DubboNode p1 = DubboNode.provider("p1", GreetingService.class, impl1);   // free port, started
 * DubboNode p2 = DubboNode.provider("p2", GreetingService.class, impl2);
 * ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
 * ref.setInterface(GreetingService.class);
 * ref.setCluster("wheelfailback");
 * DubboNode consumer = DubboNode.consumer("consumer", ref, p1, p2);      // url = both providers, started
 * GreetingService svc = ref.get();
 * }</pre>
 * <b>A registry</b> (e.g. an {@link EmbeddedZooKeeper}): create, configure, start.
 * <pre>{@code
 * DubboNode provider = DubboNode.create("p1", zk.registryAddress()).protocolPort(Ports.free()).service(sc).start();
 * DubboNode consumer = DubboNode.create("consumer", zk.registryAddress()).reference(ref).start();
 * }</pre>
 * Close every node ({@link #close()}), consumers first.
 *
 * <h3>Settings</h3>
 * QoS off (no port 22222 clash between nodes), {@code register-mode=interface}, {@code metadata-type=local}, no
 * {@code ~/.dubbo} file cache, {@code migration.step=FORCE_INTERFACE} (interface-level discovery only),
 * {@code dubbo.service.shutdown.wait=300} (an unexport waits about 0.1 s for idle instead of 3.3 s), registry
 * {@code delay-notification=0} (ZooKeeper address changes reach consumers at once, not once per 5 s), registry not
 * used as config or metadata center, protocol {@code dubbo} on host 127.0.0.1 (registered and connected to as
 * 127.0.0.1; Dubbo still binds the port on all interfaces, see {@link Loopback}). {@link Loopback#force()} runs before
 * the first node is created. {@link #property(String, String)} overrides any application-scoped Dubbo property.
 *
 * <h3>Lifecycle</h3>
 * {@link #create} builds the models; configure, then {@link #start()}; {@link #close()} stops the application and
 * destroys the framework (its protocol servers and client connections). A start that fails closes the node, so a
 * refused export leaves no server behind. A provider's port is released about 0.1 to 0.5 s after {@code close()}
 * returns.
 *
 * <h3>JVM shutdown hooks</h3>
 * Dubbo registers one JVM shutdown hook per application. A program that stops nodes and a ZooKeeper in its own hook
 * should call {@link #disableDubboShutdownHooks()} first, so the two hooks do not race (Dubbo unregistering from a
 * ZooKeeper that the other hook already stopped).
 *
 * <p>Thread safety: configure and start from one thread; {@link #start()}, {@link #close()}, {@link #export} and
 * {@link #unexport} are synchronized and may be called from any thread; the accessors are thread-safe.
 */
public final class DubboNode implements AutoCloseable {
    static {
        Loopback.force(); // before any Dubbo URL or bootstrap exists in this JVM
    }

    /** Dubbo's protocol name used for every service. */
    public static final String PROTOCOL = "dubbo";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final String name;
    private final String registryAddress; // null: no registry
    private final FrameworkModel framework;
    private final ApplicationModel application;
    private final DubboBootstrap bootstrap;
    private final Map<String, String> properties = new LinkedHashMap<>(); // guarded by this
    private final List<ServiceConfig<?>> services = new ArrayList<>(); // guarded by this; until start()
    private final List<ReferenceConfig<?>> references = new ArrayList<>(); // guarded by this; until start()
    private int protocolPort = -1; // guarded by this; -1: no protocol (consumer only)
    private boolean started; // guarded by this
    private volatile boolean closed;

    private DubboNode(String name, String registryAddress) {
        this.name = name;
        this.registryAddress = registryAddress;
        this.framework = new FrameworkModel();
        // NOT newApplication(): new FrameworkModel() already made a default application, and with a second one,
        // stopping ours would leave the framework (and its protocol servers) alive.
        this.application = framework.defaultApplication();
        this.bootstrap = DubboBootstrap.getInstance(application);
        properties.put("dubbo.application.migration.step", "FORCE_INTERFACE");
        properties.put("dubbo.service.shutdown.wait", "300");
    }

    /**
     * Creates the models of a new node; nothing is started or bound yet.
     *
     * @param name the Dubbo application name: 1..64 letters, digits, '.', '_' or '-'
     * @param registryAddress e.g. {@code zookeeper://127.0.0.1:2181}, or null for no registry (direct URLs only)
     * @return the node, not started
     * @throws IllegalArgumentException if the name or the address is malformed
     */
    public static DubboNode create(String name, String registryAddress) {
        checkName("name", name);
        if (registryAddress != null && !registryAddress.matches("[a-z][a-z0-9+.-]*://.+")) {
            throw new IllegalArgumentException(
                    "registryAddress: \"" + registryAddress + "\" (expected: e.g. zookeeper://127.0.0.1:2181)");
        }
        return new DubboNode(name, registryAddress);
    }

    /**
     * Starts a provider without registry that exports {@code impl} on a free port; reach it with
     * {@link #aim} or {@link #consumer(String, ReferenceConfig, DubboNode...)}.
     *
     * @param name the application name, as for {@link #create}
     * @param type the service interface
     * @param impl the implementation
     * @param <S> the service type
     * @return the running node
     * @throws IllegalArgumentException if the name is malformed
     * @throws IllegalStateException if Dubbo cannot export (the node is closed then)
     */
    public static <S> DubboNode provider(String name, Class<S> type, S impl) {
        ServiceConfig<S> service = new ServiceConfig<>();
        service.setInterface(type);
        service.setRef(impl);
        return provider(name, service);
    }

    /**
     * Starts a provider without registry that exports {@code service} (with its version, parameters, ...) on a free
     * port.
     *
     * @param name the application name, as for {@link #create}
     * @param service a new, unexported config with its interface and implementation set
     * @return the running node
     * @throws IllegalArgumentException if the name is malformed
     * @throws RuntimeException whatever Dubbo throws when it refuses the export (the node is closed then)
     */
    public static DubboNode provider(String name, ServiceConfig<?> service) {
        return create(name, null).protocolPort(Ports.free()).service(service).start();
    }

    /**
     * Starts a consumer without registry whose {@code reference} goes straight to {@code providers} ({@link #aim}).
     * Call {@code reference.get()} afterwards.
     *
     * @param name the application name, as for {@link #create}
     * @param reference a new config with its interface set
     * @param providers running providers of that interface; two or more for the cluster to choose between them
     * @return the running node
     * @throws IllegalArgumentException if the name is malformed, the reference has no interface or no provider is
     *         given
     */
    public static DubboNode consumer(String name, ReferenceConfig<?> reference, DubboNode... providers) {
        aim(reference, providers);
        return consumer(name, List.of(reference));
    }

    /**
     * Starts a consumer without registry of several references, each already {@link #aim aimed} at its providers.
     *
     * @param name the application name, as for {@link #create}
     * @param references new configs
     * @return the running node
     * @throws IllegalArgumentException if the name is malformed
     */
    public static DubboNode consumer(String name, List<? extends ReferenceConfig<?>> references) {
        DubboNode node = create(name, null);
        references.forEach(node::reference);
        return node.start();
    }

    /**
     * Points {@code reference} straight at {@code providers}: its URL becomes their {@link #url()}s, separated by
     * {@code ;}, and {@code check} false.
     *
     * @param reference a config with its interface set, not referred yet
     * @param providers nodes with a protocol port
     * @throws IllegalArgumentException if the reference has no interface, no provider is given, or one has no port
     */
    public static void aim(ReferenceConfig<?> reference, DubboNode... providers) {
        if (reference.getInterface() == null) {
            throw new IllegalArgumentException("reference: no interface (expected: setInterface(...) first)");
        }
        if (providers.length == 0) {
            throw new IllegalArgumentException("providers: 0 (expected: >= 1)");
        }
        StringBuilder urls = new StringBuilder();
        for (DubboNode p : providers) {
            urls.append(urls.length() == 0 ? "" : ";").append(p.url());
        }
        reference.setUrl(urls.toString());
        reference.setCheck(false);
    }

    /**
     * Checks a node or provider name.
     *
     * @param parameter the parameter name used in the message
     * @param name the value
     * @return {@code name}
     * @throws IllegalArgumentException {@code <parameter>: "<name>" (expected: 1..64 letters, digits, '.', '_' or '-')}
     */
    public static String checkName(String parameter, String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(parameter + ": " + (name == null ? "null" : "\"" + name + "\"")
                    + " (expected: 1..64 letters, digits, '.', '_' or '-')");
        }
        return name;
    }

    /**
     * Stops Dubbo from registering JVM shutdown hooks in applications created from now on, JVM-wide (sets the system
     * property {@code dubbo.shutdownHook.listenIgnore=true}). Whoever starts nodes must then close them.
     */
    public static void disableDubboShutdownHooks() {
        System.setProperty(CommonConstants.IGNORE_LISTEN_SHUTDOWN_HOOK, "true");
    }

    /**
     * Exports services over the {@code dubbo} protocol on 127.0.0.1:{@code port}. Without it the node is a consumer.
     *
     * @param port 1..65535, e.g. from {@link Ports#free()}
     * @return this
     * @throws IllegalArgumentException if the port is out of range
     * @throws IllegalStateException if the node has started
     */
    public synchronized DubboNode protocolPort(int port) {
        checkNotStarted();
        this.protocolPort = Ports.checkPort("port", port);
        return this;
    }

    /**
     * Sets an application-scoped Dubbo property (as in {@code dubbo.properties}), overriding the fast defaults.
     *
     * @param key e.g. {@code dubbo.service.shutdown.wait}
     * @param value its value
     * @return this
     * @throws IllegalStateException if the node has started
     */
    public synchronized DubboNode property(String key, String value) {
        checkNotStarted();
        properties.put(key, value);
        return this;
    }

    /**
     * Adds a service to export at {@link #start()}. Needs {@link #protocolPort(int)}.
     *
     * @param service a new, unexported config; the node sets its scope model
     * @return this
     * @throws IllegalStateException if the node has started (use {@link #export} then)
     */
    public synchronized DubboNode service(ServiceConfig<?> service) {
        checkNotStarted();
        services.add(service);
        return this;
    }

    /**
     * Adds a reference to refer at {@link #start()}; call {@code reference.get()} after that.
     *
     * @param reference a new config; the node sets its scope model
     * @return this
     * @throws IllegalStateException if the node has started
     */
    public synchronized DubboNode reference(ReferenceConfig<?> reference) {
        checkNotStarted();
        references.add(reference);
        return this;
    }

    /**
     * Starts the node: binds the protocol port (if any), exports and registers services, refers references. Blocks
     * until done. If Dubbo fails, the node is closed and the failure rethrown.
     *
     * @return this
     * @throws IllegalStateException if already started or closed, or if services were added without a protocol port
     * @throws RuntimeException whatever Dubbo throws when it cannot start (e.g. registry down, export refused)
     */
    public synchronized DubboNode start() {
        checkNotStarted();
        if (!services.isEmpty() && protocolPort < 0) {
            throw new IllegalStateException("node " + name + ": services need a protocolPort(port)");
        }
        started = true;
        try {
            DubboLine.environment(application).updateAppConfigMap(new HashMap<>(properties));
            bootstrap.application(applicationConfig()).registry(registryConfig());
            if (protocolPort > 0) {
                ProtocolConfig protocol = new ProtocolConfig(PROTOCOL, protocolPort);
                protocol.setHost(Loopback.HOST);
                bootstrap.protocol(protocol);
            }
            services.forEach(bootstrap::service);
            references.forEach(bootstrap::reference);
            bootstrap.start();
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
        return this;
    }

    private ApplicationConfig applicationConfig() {
        ApplicationConfig config = new ApplicationConfig(name);
        config.setQosEnable(false);
        config.setRegisterMode("interface");
        config.setMetadataType("local");
        config.setEnableFileCache(false);
        return config;
    }

    private RegistryConfig registryConfig() {
        if (registryAddress == null) {
            return new RegistryConfig(RegistryConfig.NO_AVAILABLE);
        }
        RegistryConfig config = new RegistryConfig(registryAddress);
        config.setUseAsConfigCenter(false);
        config.setUseAsMetadataCenter(false);
        // ZookeeperRegistry otherwise SLEEPS 5 s between address notifications
        config.setParameters(new HashMap<>(Map.of("delay-notification", "0")));
        return config;
    }

    /**
     * Exports (and registers) a service on the running node.
     *
     * @param service a new, unexported config
     * @throws IllegalStateException if the node is not running
     */
    public synchronized void export(ServiceConfig<?> service) {
        checkRunning();
        bootstrap.service(service);
        service.export();
    }

    /**
     * Unregisters and unexports a service on the running node, and forgets its config; blocks until done (about 0.1 to
     * 0.3 s with the default {@code dubbo.service.shutdown.wait}). A {@link ServiceConfig} cannot be exported again
     * after this: export a new one.
     *
     * @param service a config exported by this node
     * @throws IllegalStateException if the node is not running
     */
    public synchronized void unexport(ServiceConfig<?> service) {
        checkRunning();
        service.unexport();
        application.getDefaultModule().getConfigManager().removeConfig(service);
    }

    /** @return the application name */
    public String name() {
        return name;
    }

    /** @return the registry address, or null if the node has none */
    public String registryAddress() {
        return registryAddress;
    }

    /** @return the protocol port, or -1 if the node exports nothing */
    public synchronized int protocolPort() {
        return protocolPort;
    }

    /**
     * @return {@code dubbo://127.0.0.1:<port>}, the URL a reference uses to reach this provider directly
     * @throws IllegalStateException if the node has no protocol port
     */
    public synchronized String url() {
        if (protocolPort < 0) {
            throw new IllegalStateException("node " + name + ": no protocolPort (a consumer has no URL)");
        }
        return PROTOCOL + "://" + Loopback.HOST + ":" + protocolPort;
    }

    /** @return the node's framework model */
    public FrameworkModel framework() {
        return framework;
    }

    /** @return the node's application model (the framework's default application) */
    public ApplicationModel application() {
        return application;
    }

    /** @return the node's bootstrap, for what this class does not cover */
    public DubboBootstrap bootstrap() {
        return bootstrap;
    }

    /** @return true between a successful {@link #start()} and {@link #close()} */
    public boolean isRunning() {
        synchronized (this) {
            return started && !closed;
        }
    }

    /**
     * Stops the application (unregisters, unexports, closes connections) and destroys the framework. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            bootstrap.stop(); // == application.destroy(); destroys the framework too: it was its only application
        } finally {
            framework.destroy(); // no-op if already destroyed
        }
    }

    private void checkNotStarted() {
        if (started || closed) {
            throw new IllegalStateException("node " + name + ": already " + (closed ? "closed" : "started"));
        }
    }

    private void checkRunning() {
        if (!started || closed) {
            throw new IllegalStateException("node " + name + ": not running");
        }
    }

    @Override
    public String toString() {
        return "DubboNode[" + name + (protocolPort > 0 ? " " + Loopback.HOST + ":" + protocolPort : "")
                + (registryAddress != null ? " " + registryAddress : "") + "]";
    }
}
