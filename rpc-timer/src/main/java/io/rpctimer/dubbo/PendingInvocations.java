package io.rpctimer.dubbo;

import java.util.Map;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.Invocation;

/**
 * Makes the {@link PendingInvocation}s of one reference's failed calls, so that calls that fail together share what
 * they have in common: the method's {@link PendingInvocation.Template} (the last one is kept and reused while it
 * matches), and the attachments and attributes of the last call when equal.
 *
 * <p><b>Threading:</b> thread-safe: any thread writes what is kept; a stale read only costs a copy.
 */
final class PendingInvocations {

    /** The template the last failed call kept. */
    private volatile PendingInvocation.Template lastTemplate;
    private final SharedMap<String> sharedAttachments = new SharedMap<>();
    private final SharedMap<Object> sharedAttributes = new SharedMap<>();

    /**
     * @param consumerUrl the consumer URL the call was made with, or null
     * @return what the failed call {@code invocation} keeps for its retries
     */
    PendingInvocation of(Invocation invocation, URL consumerUrl) {
        return PendingInvocation.of(invocation, template(invocation, consumerUrl), sharedAttachments,
                sharedAttributes);
    }

    /** @return the call's template, or an equal one kept earlier: calls of one method share one */
    private PendingInvocation.Template template(Invocation invocation, URL consumerUrl) {
        PendingInvocation.Template t = PendingInvocation.Template.of(invocation, consumerUrl);
        PendingInvocation.Template last = lastTemplate;
        if (last != null && last.matches(t)) {
            return last;
        }
        lastTemplate = t;
        return t;
    }

    /**
     * The attachments (or the attributes) of the last failed call of a reference, kept to be shared: the calls that
     * fail together carry the same ones (Dubbo's path, interface, version, timeout, remote.application; the consumer
     * and method models), and two immutable maps of its own would about double what a pending call holds over real
     * RPC (some 270 bytes). A call whose map differs gets its own copy, which the next calls then share.
     *
     * <p><b>Threading:</b> thread-safe: a racing call may keep its own equal copy.
     *
     * @param <K> the key type
     */
    static final class SharedMap<K> {
        private volatile Map<K, Object> last = Map.of();

        Map<K, Object> share(Map<K, Object> fresh) {
            Map<K, Object> l = last;
            return l.equals(fresh) ? l : (last = Map.copyOf(fresh));
        }
    }
}
