package io.rpctimer.spring.boot;

import io.rpctimer.dedup.DedupWindows;
import io.rpctimer.dedup.JdbcDedupStore;
import io.rpctimer.dubbo.RetryDedupFilter;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.spring.boot.RpcTimerProperties.Dedup;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanNotOfRequiredTypeException;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.core.env.Environment;

/**
 * Gives the application's {@link DataSource} to rpc-timer where the properties ask for it, so that no JDBC URL,
 * user or password ever travels as a Dubbo URL parameter (Dubbo registers those in the registry):
 * <ul>
 *   <li>{@code rpc-timer.failback.store=datasource}: the retry journal of this Dubbo application, through
 *       {@link WheelFailback#useJournalDataSource}, before Dubbo creates the first reference;</li>
 *   <li>{@code rpc-timer.dedup.store=datasource}: a {@link JdbcDedupStore} (table {@value JdbcDedupStore#DEFAULT_TABLE},
 *       created if absent, windows from {@code rpc-timer.dedup.started} and {@code done}) registered with
 *       {@link RetryDedupFilter#registerStore} as {@value DubboDefaults#DATASOURCE_DEDUP_STORE}, before Dubbo exports
 *       the services; unregistered when the context closes.</li>
 * </ul>
 * Both happen when this bean initializes, before the context's refresh ends, which is when Dubbo creates references
 * and exports services. The DataSource is the bean named by {@code rpc-timer.data-source}, else the application's
 * only or primary one.
 *
 * <p><b>Threading:</b> Spring calls it on the thread that refreshes or closes the context.
 */
final class DataSourceStores implements InitializingBean, DisposableBean {

    static final String APPLICATION_NAME = "dubbo.application.name";

    private final RpcTimerProperties properties;
    private final Environment environment;
    private final BeanFactory beans;
    private boolean dedupRegistered; // written by the thread that initializes or destroys the bean

    DataSourceStores(RpcTimerProperties properties, Environment environment, BeanFactory beans) {
        this.properties = properties;
        this.environment = environment;
        this.beans = beans;
    }

    @Override
    public void afterPropertiesSet() {
        String failbackStore = RpcTimerProperties.PREFIX + ".failback.store";
        if (properties.getFailback().getStore() == RpcTimerProperties.Store.DATASOURCE) {
            String application = environment.getProperty(APPLICATION_NAME);
            DubboDefaults.require(application != null && !application.isBlank(), APPLICATION_NAME, application,
                    "the Dubbo application's name (or spring.application.name) when " + failbackStore
                            + "=datasource: the journal keeps each application's calls apart");
            WheelFailback.useJournalDataSource(application, dataSource(failbackStore));
        }
        Dedup dedup = properties.getDedup();
        if (dedup.getStore() == RpcTimerProperties.DedupStore.DATASOURCE) {
            DataSource dataSource = dataSource(RpcTimerProperties.PREFIX + ".dedup.store");
            RetryDedupFilter.registerStore(DubboDefaults.DATASOURCE_DEDUP_STORE,
                    new JdbcDedupStore(dataSource, windows(dedup)));
            dedupRegistered = true;
        }
    }

    private static DedupWindows windows(Dedup dedup) {
        return new DedupWindows(millis(dedup.getStarted(), DedupWindows.DEFAULT_STARTED_MILLIS),
                millis(dedup.getDone(), DedupWindows.DEFAULT_DONE_MILLIS));
    }

    private static long millis(Duration d, long absent) {
        return d == null ? absent : d.toMillis(); // checked by DubboDefaults at startup
    }

    private DataSource dataSource(String requiredBy) {
        String name = properties.getDataSource();
        if (name != null) {
            try {
                return beans.getBean(name, DataSource.class);
            } catch (NoSuchBeanDefinitionException | BeanNotOfRequiredTypeException e) {
                throw DubboDefaults.invalid(RpcTimerProperties.PREFIX + ".data-source", name,
                        "the name of a DataSource bean (" + requiredBy + "=datasource): " + e.getMessage());
            }
        }
        DataSource dataSource = beans.getBeanProvider(DataSource.class).getIfUnique();
        if (dataSource == null) {
            throw DubboDefaults.invalid(requiredBy, "datasource", "a DataSource bean in the application: there is"
                    + " none, or several and none primary (name one with " + RpcTimerProperties.PREFIX
                    + ".data-source)");
        }
        return dataSource;
    }

    @Override
    public void destroy() {
        if (dedupRegistered) {
            RetryDedupFilter.unregisterStore(DubboDefaults.DATASOURCE_DEDUP_STORE);
            dedupRegistered = false;
        }
    }
}
