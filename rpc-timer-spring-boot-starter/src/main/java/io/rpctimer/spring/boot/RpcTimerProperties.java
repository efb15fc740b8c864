package io.rpctimer.spring.boot;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.convert.DurationUnit;

/**
 * The {@code rpc-timer.*} properties of a Spring Boot application. Each policy property maps onto one of rpc-timer's
 * Dubbo URL keys and becomes a consumer-level (or, for {@code dedup}, provider-level) Dubbo parameter, so a reference
 * or method that sets the key itself keeps its own value. A property left unset writes nothing: the library's default
 * applies, which is the default shown here. See {@code docs/spring-boot.md} for the mapping.
 *
 * <p>Durations without a unit are milliseconds ({@code rpc-timer.failback.delay=2000}); {@code 2s} works too.
 * Values are checked when the application starts ({@link DubboDefaults}); a bad one fails startup naming the property
 * and the value.
 *
 * <p><b>Threading:</b> a plain bean bound once at startup; read-only after that.
 */
@ConfigurationProperties(prefix = RpcTimerProperties.PREFIX)
public class RpcTimerProperties {

    /** The prefix of every property. */
    public static final String PREFIX = "rpc-timer";

    /** Whether the starter configures anything: Dubbo defaults, DataSource stores, endpoint, health and meters. */
    private boolean enabled = true;

    /**
     * Whether wheelfailback is the cluster of every reference that names none (Dubbo's consumer-level cluster,
     * dubbo.consumer.cluster). Off: name cluster=wheelfailback on the references that should fail back.
     */
    private boolean defaultCluster = false;

    /**
     * Retries after the original attempt, 0 for none (URL key retries). Dubbo's consumer-level retries, which
     * failover references read too, so it is accepted only when the consumer-level cluster is wheelfailback.
     */
    private Integer retries;

    /** Cap of retries pending at once per reference (URL key failbacktasks, at least 1). */
    private Integer failbacktasks;

    /** Whether async calls get a per-call timeout on the shared wheel (URL key timeoutcheck). */
    private Boolean timeoutcheck;

    /**
     * Bean name of the DataSource used when failback.store or dedup.store is datasource. Default: the application's
     * DataSource (the primary one, if there are several).
     */
    private String dataSource;

    private final Failback failback = new Failback();

    private final Dedup dedup = new Dedup();

    private final Health health = new Health();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isDefaultCluster() {
        return defaultCluster;
    }

    public void setDefaultCluster(boolean defaultCluster) {
        this.defaultCluster = defaultCluster;
    }

    public Integer getRetries() {
        return retries;
    }

    public void setRetries(Integer retries) {
        this.retries = retries;
    }

    public Integer getFailbacktasks() {
        return failbacktasks;
    }

    public void setFailbacktasks(Integer failbacktasks) {
        this.failbacktasks = failbacktasks;
    }

    public Boolean getTimeoutcheck() {
        return timeoutcheck;
    }

    public void setTimeoutcheck(Boolean timeoutcheck) {
        this.timeoutcheck = timeoutcheck;
    }

    public String getDataSource() {
        return dataSource;
    }

    public void setDataSource(String dataSource) {
        this.dataSource = dataSource;
    }

    public Failback getFailback() {
        return failback;
    }

    public Dedup getDedup() {
        return dedup;
    }

    public Health getHealth() {
        return health;
    }

    /** At the pending cap (URL key failback.overflow). */
    public enum Overflow {
        /** The caller gets an RpcException. */
        REJECT,
        /** The caller gets the empty result; the call is logged and dropped. */
        LOG,
        /** The call is parked in the journal and retried when room frees (needs a journal). */
        SPILL
    }

    /** When the journal refuses a failed call (URL key failback.store.down). */
    public enum StoreDown {
        /** The caller gets an RpcException: a call its caller was told is taken survives a crash. */
        REJECT,
        /** The call goes on in memory and is journaled once the store works; a crash before then loses it. */
        MEMORY
    }

    /** Where failed calls wait (URL key failback.store). */
    public enum Store {
        /** An H2 journal on local disk, under store-dir. */
        EMBEDDED,
        /** Memory only: lost when the process stops. */
        MEMORY,
        /** The application's DataSource (the library's jdbc store, shared by a fleet). */
        DATASOURCE
    }

    /** Where the retrydedup filter keeps the calls it has run (URL key retrydedup.store). */
    public enum DedupStore {
        /** A bounded in-memory cache per service in each provider. */
        MEMORY,
        /** A table in the application's DataSource, shared by every provider of the fleet. */
        DATASOURCE
    }

    /** The failback.* URL keys. */
    public static class Failback {

        /** Delay before the first retry (URL key failback.delay; at least 1 ms). */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration delay;

        /** Factor between consecutive delays (URL key failback.multiplier; 1 to 1000000). */
        private Double multiplier;

        /** Cap of any delay (URL key failback.maxdelay; at least failback.delay). */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration maxDelay;

        /** Spread of each delay, a fraction either way (URL key failback.jitter; 0 to 1). */
        private Double jitter;

        /**
         * Which failures are retried (URL key failback.retryon): rpc, all, or exception class names the application
         * can load.
         */
        private List<String> retryOn;

        /** What happens at the pending cap (URL key failback.overflow); spill needs a journal. */
        private Overflow overflow;

        /** Where failed calls wait (URL key failback.store); datasource uses the application's DataSource. */
        private Store store;

        /**
         * What happens to a failed call whose journal append the store refused, its database down (URL key
         * failback.store.down): reject, the default, or memory.
         */
        private StoreDown storeDown;

        /**
         * For store=embedded: the directory under which each application gets its own journal directory (URL key
         * failback.store.dir). Default: ${user.home}/.rpc-timer/journal.
         */
        private String storeDir;

        private final Budget budget = new Budget();

        public Duration getDelay() {
            return delay;
        }

        public void setDelay(Duration delay) {
            this.delay = delay;
        }

        public Double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(Double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMaxDelay() {
            return maxDelay;
        }

        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        public Double getJitter() {
            return jitter;
        }

        public void setJitter(Double jitter) {
            this.jitter = jitter;
        }

        public List<String> getRetryOn() {
            return retryOn;
        }

        public void setRetryOn(List<String> retryOn) {
            this.retryOn = retryOn;
        }

        public Overflow getOverflow() {
            return overflow;
        }

        public void setOverflow(Overflow overflow) {
            this.overflow = overflow;
        }

        public Store getStore() {
            return store;
        }

        public StoreDown getStoreDown() {
            return storeDown;
        }

        public void setStoreDown(StoreDown storeDown) {
            this.storeDown = storeDown;
        }

        public void setStore(Store store) {
            this.store = store;
        }

        public String getStoreDir() {
            return storeDir;
        }

        public void setStoreDir(String storeDir) {
            this.storeDir = storeDir;
        }

        public Budget getBudget() {
            return budget;
        }
    }

    /** The failback.budget.* URL keys: each reference's retry budget. */
    public static class Budget {

        /**
         * Tokens each successful first attempt deposits: retries run at most at this share of the reference's
         * successful calls of the last 10 s (URL key failback.budget.ratio; 0 to 1000000).
         */
        private Double ratio;

        /**
         * Retries per second the budget allows whatever the successes (URL key failback.budget.minrate; 0 to
         * 1000000000, above 0 when the ratio is 0).
         */
        private Double minRate;

        public Double getRatio() {
            return ratio;
        }

        public void setRatio(Double ratio) {
            this.ratio = ratio;
        }

        public Double getMinRate() {
            return minRate;
        }

        public void setMinRate(Double minRate) {
            this.minRate = minRate;
        }
    }

    /** The provider filter retrydedup: its provider-level URL keys. */
    public static class Dedup {

        /** Whether every service of the application runs each retry.id once (URL key retrydedup). */
        private Boolean enabled;

        /** Where the filter keeps the calls it has run (URL key retrydedup.store). */
        private DedupStore store;

        /** For store=memory: the bound of each service's cache, in entries (URL key retrydedup.size; 1 to 100000000). */
        private Long size;

        /**
         * How long a started call whose provider died blocks its retries (URL key retrydedup.started; 1 ms to 1 day).
         */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration started;

        /** How long a completed call suppresses its retries (URL key retrydedup.done; 1 ms to 30 days). */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration done;

        public Boolean getEnabled() {
            return enabled;
        }

        public void setEnabled(Boolean enabled) {
            this.enabled = enabled;
        }

        public DedupStore getStore() {
            return store;
        }

        public void setStore(DedupStore store) {
            this.store = store;
        }

        public Long getSize() {
            return size;
        }

        public void setSize(Long size) {
            this.size = size;
        }

        public Duration getStarted() {
            return started;
        }

        public void setStarted(Duration started) {
            this.started = started;
        }

        public Duration getDone() {
            return done;
        }

        public void setDone(Duration done) {
            this.done = done;
        }
    }

    /** The failback health indicator. */
    public static class Health {

        /** Pending retries older than this make the failback health report late-status. */
        private Duration maxPendingAge = Duration.ofMinutes(5);

        /**
         * The health status reported while a pending retry is older than max-pending-age (and the journal works).
         * DEGRADED leaves the application's overall health UP; OUT_OF_SERVICE takes it down.
         */
        private String lateStatus = "DEGRADED";

        /**
         * The failback health is DOWN for this long after the retry journal last failed (an append, update or
         * removal that did not commit), even if the journal's own state no longer says so.
         */
        private Duration journalFailureWindow = Duration.ofMinutes(1);

        public Duration getJournalFailureWindow() {
            return journalFailureWindow;
        }

        public void setJournalFailureWindow(Duration journalFailureWindow) {
            this.journalFailureWindow = journalFailureWindow;
        }

        public Duration getMaxPendingAge() {
            return maxPendingAge;
        }

        public void setMaxPendingAge(Duration maxPendingAge) {
            this.maxPendingAge = maxPendingAge;
        }

        public String getLateStatus() {
            return lateStatus;
        }

        public void setLateStatus(String lateStatus) {
            this.lateStatus = lateStatus;
        }
    }
}
