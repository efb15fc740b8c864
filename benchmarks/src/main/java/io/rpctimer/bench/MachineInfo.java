package io.rpctimer.bench;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * What the numbers were measured on: CPU, memory, OS, JVM, the versions compared and the commit of rpc-timer.
 * The commit and whether {@code rpc-timer/} had uncommitted changes come from {@code run.sh} as the system
 * properties {@code bench.gitCommit} and {@code bench.rpcTimerDirty}.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
public final class MachineInfo {

    private MachineInfo() {
    }

    /** @return date, CPU, cores, memory, OS, JVM and its arguments, versions, rpc-timer's commit */
    public static Map<String, Object> collect() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        m.put("cpu", firstValue(Path.of("/proc/cpuinfo"), "model name"));
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("memory", firstValue(Path.of("/proc/meminfo"), "MemTotal"));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        m.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version") + " ("
                + System.getProperty("java.vm.vendor") + ")");
        m.put("runnerJvmArgs", ManagementFactory.getRuntimeMXBean().getInputArguments());
        m.put("versions", versions());
        m.put("gitCommit", System.getProperty("bench.gitCommit", "unknown"));
        m.put("rpcTimerUncommittedChanges", System.getProperty("bench.rpcTimerDirty", "unknown"));
        return m;
    }

    private static Map<String, Object> versions() {
        Map<String, Object> v = new LinkedHashMap<>();
        Properties p = new Properties();
        try (InputStream in = MachineInfo.class.getResourceAsStream("/bench-versions.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            return v;
        }
        for (String k : List.of("rpc-timer", "netty", "dubbo", "kafka", "agrona", "jmh")) {
            v.put(k, p.getProperty(k, "unknown"));
        }
        return v;
    }

    private static String firstValue(Path file, String key) {
        try {
            return Files.readAllLines(file).stream()
                    .filter(l -> l.startsWith(key))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst().orElse("unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
