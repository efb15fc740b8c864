package io.rpctimer.dubbo;

import io.rpctimer.retry.RetryJournalEntry;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.logger.ErrorTypeAwareLogger;
import org.apache.dubbo.common.logger.LoggerFactory;
import org.apache.dubbo.common.serialize.ObjectInput;
import org.apache.dubbo.common.serialize.ObjectOutput;
import org.apache.dubbo.common.serialize.Serialization;
import org.apache.dubbo.common.utils.ReflectUtils;
import org.apache.dubbo.remoting.transport.CodecSupport;
import org.apache.dubbo.rpc.Constants;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.model.ConsumerModel;
import org.apache.dubbo.rpc.model.ServiceModel;

/**
 * Turns a failed call of one reference into the journal's payload and back, with the reference's own Dubbo
 * serialization, picked as Dubbo's codec picks it ({@link CodecSupport#getSerialization(URL)}): the consumer URL's
 * {@code prefer.serialization} (Dubbo 3.2 and later), else its {@code serialization}, else Dubbo's default
 * ({@code hessian2}, or the {@code DUBBO_DEFAULT_SERIALIZATION} system property or environment variable). So what is
 * persisted is what already crosses the wire.
 *
 * <p>Payload: a format byte, the serialization's name, then, written by that serialization, the method as invoked,
 * the parameter types (JVM descriptors), the arguments and the attachments. A decoded call is rebuilt as Dubbo's
 * proxy builds an invocation: the reference's service model and protocol service key.
 *
 * <p>A call that cannot be serialized gets a null payload: the lifecycle keeps it in memory, counts it and warns
 * once per method; the cause of the first such call of each method is logged here at info level.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class CallCodec {

    private static final ErrorTypeAwareLogger LOG = LoggerFactory.getErrorTypeAwareLogger(CallCodec.class);
    private static final byte FORMAT = 1;

    private final URL url;
    private final String serializationName;
    private final Serialization serialization;
    private final Set<String> failedMethods = ConcurrentHashMap.newKeySet();

    /** @param url the reference's consumer URL */
    CallCodec(URL url) {
        this.url = url;
        this.serializationName = DubboCompat.serializationName(url);
        this.serialization = CodecSupport.getSerialization(url);
    }

    /** @return the call serialized, or null if it cannot be (logged once per method) */
    byte[] encode(PendingInvocation call) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
            DataOutputStream header = new DataOutputStream(bytes);
            header.writeByte(FORMAT);
            header.writeUTF(serializationName);
            header.flush();
            ObjectOutput out = serialization.serialize(url, bytes);
            out.writeUTF(call.invokedMethod());
            Class<?>[] types = call.parameterTypes();
            Object[] arguments = call.arguments() == null ? new Object[0] : call.arguments();
            out.writeInt(types.length);
            for (int i = 0; i < types.length; i++) {
                out.writeUTF(ReflectUtils.getDesc(types[i]));
                out.writeObject(i < arguments.length ? arguments[i] : null);
            }
            out.writeAttachments(new HashMap<>(call.attachments()));
            out.flushBuffer();
            return bytes.toByteArray();
        } catch (Exception | StackOverflowError e) {
            if (failedMethods.add(call.method())) {
                LOG.info("wheelfailback: a failed call of " + url.getServiceInterface() + "." + call.method()
                                + "() could not be serialized with " + serializationName + " for the journal; it is"
                                + " retried in memory only (logged once per method)", e);
            }
            return null;
        }
    }

    /**
     * @param model              the reference's service model (the consumer model), or null
     * @param protocolServiceKey the reference's protocol service key
     * @return the journal entry rebuilt as an invocation of this reference
     * @throws IOException if the payload is torn, corrupt, or of a serialization this reference does not use
     */
    RpcInvocation decode(RetryJournalEntry entry, ServiceModel model, String protocolServiceKey)
            throws IOException, ClassNotFoundException {
        ByteArrayInputStream bytes = new ByteArrayInputStream(entry.payload());
        DataInputStream header = new DataInputStream(bytes);
        byte format = header.readByte();
        String name = header.readUTF();
        if (format != FORMAT || !name.equals(serializationName)) {
            throw new IOException("retry.id=" + entry.retryId() + ": payload format " + format + " of " + name
                    + " (expected: format " + FORMAT + " of " + serializationName + ")");
        }
        ObjectInput in = serialization.deserialize(url, bytes);
        String method = in.readUTF();
        int n = in.readInt();
        Class<?>[] types = new Class<?>[n];
        Object[] arguments = new Object[n];
        for (int i = 0; i < n; i++) {
            types[i] = ReflectUtils.desc2class(in.readUTF());
            arguments[i] = in.readObject(types[i]);
        }
        Map<String, Object> attachments = in.readAttachments();
        RpcInvocation inv = new RpcInvocation(model, method, url.getServiceInterface(), protocolServiceKey, types,
                arguments);
        if (attachments != null) {
            inv.setObjectAttachments(attachments);
        }
        if (model instanceof ConsumerModel) {
            inv.put(Constants.CONSUMER_MODEL, model);
        }
        return inv;
    }
}
