package io.rpctimer.dubbo;

import org.apache.dubbo.common.extension.Activate;
import org.apache.dubbo.rpc.Exporter;
import org.apache.dubbo.rpc.ExporterListener;

/**
 * Checks a service's {@code retrydedup} settings when it is exported, so that a bad value fails the export, naming key
 * and value, rather than the first deduplicated call. Active on services that set a {@code retrydedup} key. On a
 * Dubbo line rpc-timer does not support, it fails the export with {@link DubboSupport}'s message (this class links
 * only to types Dubbo 2.7 has too, so that Dubbo can load it there to say so).
 *
 * <p><b>Threading:</b> stateless.
 */
@Activate(value = RetryDedupConfig.KEY)
public class RetryDedupExportCheck implements ExporterListener {

    /**
     * @throws IllegalArgumentException naming the key and the value, if a value is invalid
     * @throws IllegalStateException    on a Dubbo line rpc-timer does not support
     */
    @Override
    public void exported(Exporter<?> exporter) {
        DubboSupport.require("filter " + RetryDedupConfig.KEY);
        RetryDedupConfig.from(exporter.getInvoker().getUrl(), RetryDedupFilter.storeNames());
    }

    @Override
    public void unexported(Exporter<?> exporter) {
        // nothing to check
    }
}
