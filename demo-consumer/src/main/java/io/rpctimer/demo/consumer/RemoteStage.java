package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.api.ProviderControl;
import io.rpctimer.testkit.DubboNode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import org.apache.dubbo.config.ReferenceConfig;

/**
 * The standalone consumer's stage: an external ZooKeeper registry, and the demo providers registered there, each
 * driven through its {@link ProviderControl} service (group = the provider's name) to learn its name and to read its
 * ledger's duplicate count before and after the run. Providers are named with {@code --providers p1,p2}, or found in
 * the registry. Nothing here stops a provider: they are someone else's processes.
 *
 * <p><b>Threading:</b> as {@link Stage}.
 */
final class RemoteStage implements Stage {

    private static final String SERVICE = NotificationService.class.getName();
    private static final String CONTROL = ProviderControl.class.getName();
    private static final String DUPLICATES = "duplicateCallIds";

    /** One provider's control service and its duplicate count when the run began. */
    private record Control(String group, ProviderControl service, String identity, long duplicatesBefore) {
    }

    private final String registry;
    private final List<String> providerNames; // empty: discover
    private volatile Console console;
    private volatile Map<String, String> labels = Map.of();
    private volatile List<Control> controls = List.of();
    private volatile String controlProblem;

    /**
     * @param registry      {@code zookeeper://host:port}
     * @param providerNames the providers' names (their ProviderControl groups), or empty to find them in the registry
     */
    RemoteStage(String registry, List<String> providerNames) {
        this.registry = registry;
        this.providerNames = List.copyOf(providerNames);
    }

    @Override
    public String name() {
        return "consumer";
    }

    @Override
    public void start(Console out, Resources resources) {
        console = out;
        checkReachable(registry);
        RegistryWatch watch = resources.start(null, () -> RegistryWatch.connect(registry, Duration.ofSeconds(10)),
                w -> "registry watch", w -> w);
        console.line(String.format(Locale.ROOT, "  %-10s %-36s %s", "registry", registry, "connected"));
        List<String> groups = providerNames.isEmpty() ? discover(watch) : providerNames;
        if (groups.isEmpty()) {
            controlProblem = "no provider's ProviderControl found in the registry; name them with --providers";
        } else {
            connectControls(groups, resources);
        }
        watch.printProviders(SERVICE, console, () -> labels);
    }

    /** Fails fast, in one line, when nothing listens at the registry address; Dubbo would retry for 30 s. */
    private static void checkReachable(String registry) {
        String hostPort = registry.substring("zookeeper://".length());
        int colon = hostPort.lastIndexOf(':');
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(hostPort.substring(0, colon),
                    Integer.parseInt(hostPort.substring(colon + 1))), 2_000);
        } catch (IOException e) {
            throw new IllegalStateException("--registry " + registry + ": cannot connect (" + e.getMessage() + ")");
        }
    }

    private static List<String> discover(RegistryWatch watch) {
        TreeSet<String> groups = new TreeSet<>();
        for (RegistryWatch.Provider p : watch.providers(CONTROL)) {
            p.group().ifPresent(groups::add);
        }
        return new ArrayList<>(groups);
    }

    private void connectControls(List<String> groups, Resources resources) {
        Map<String, ReferenceConfig<ProviderControl>> refs = new LinkedHashMap<>();
        DubboNode node = DubboNode.create("consumer-control", registry);
        for (String group : groups) {
            ReferenceConfig<ProviderControl> ref = new ReferenceConfig<>();
            ref.setInterface(ProviderControl.class);
            ref.setGroup(group);
            ref.setCheck(false);
            ref.setTimeout(3_000);
            ref.setRetries(0);
            node.reference(ref);
            refs.put(group, ref);
        }
        resources.start(null, node::start, n -> "control", n -> n);
        List<Control> found = new ArrayList<>();
        Map<String, String> names = new LinkedHashMap<>();
        List<String> missing = new ArrayList<>();
        refs.forEach((group, ref) -> {
            try {
                ProviderControl control = ref.get();
                String identity = control.provider();
                long before = control.stats().getOrDefault(DUPLICATES, 0L);
                found.add(new Control(group, control, identity, before));
                names.put(identity.substring(identity.indexOf('@') + 1), identity);
                console.line(String.format(Locale.ROOT, "  %-10s %-36s %s", "provider", identity,
                        "ProviderControl group " + group + ", duplicates so far " + before));
            } catch (RuntimeException e) {
                missing.add(group);
                console.line(String.format(Locale.ROOT, "  %-10s %-36s %s", "provider", group,
                        "ProviderControl unreachable: " + FailureText.of(e)));
            }
        });
        controls = List.copyOf(found);
        labels = Map.copyOf(names);
        if (!missing.isEmpty()) {
            controlProblem = "no ProviderControl for " + String.join(", ", missing);
        }
    }

    @Override
    public String registryAddress() {
        return registry;
    }

    @Override
    public Map<String, String> providerLabels() {
        return labels;
    }

    @Override
    public void consumerStarted(DemoConsumer consumer) {
        // the providers are in other processes: duplicates come from their ledgers at the end
    }

    @Override
    public List<Scenario.Step> script() {
        return List.of(); // faults are changed at the providers' terminals
    }

    @Override
    public void endFaults(Console out) {
        // not ours to change
    }

    @Override
    public void stopping() {
        // no script to silence
    }

    @Override
    public FinalReport.Duplicates duplicates(Report report) {
        if (controlProblem != null) {
            return FinalReport.Duplicates.unknown(controlProblem);
        }
        long sum = 0;
        List<String> names = new ArrayList<>();
        for (Control c : controls) {
            try {
                sum += c.service().stats().getOrDefault(DUPLICATES, 0L) - c.duplicatesBefore();
                names.add(c.group());
            } catch (RuntimeException e) {
                return FinalReport.Duplicates.unknown("cannot read " + c.group() + "'s ledger: " + FailureText.of(e));
            }
        }
        return FinalReport.Duplicates.of(Math.max(0, sum), "calls " + String.join(" or ", names)
                + " completed more than once, each on its own (from their ledgers)");
    }
}
