package io.rpctimer.dubbo;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.dubbo.rpc.RpcContext;

/** A {@link LedgerService} that counts its calls, records what the calls carried and relays to {@link #next}. */
final class ScriptedLedgerService implements LedgerService {

    /** A value with no way to be serialized: it is not {@link java.io.Serializable}. */
    static final class Unencodable {
        final Thread owner = Thread.currentThread();
    }

    /** A recorded call as the provider saw it. */
    record Seen(String entry, String retryId, String attempt) {
    }

    final AtomicInteger calls = new AtomicInteger();
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    volatile boolean failSaves;
    volatile LedgerService next;

    @Override
    public String save(String entry) throws IOException {
        calls.incrementAndGet();
        if (failSaves) {
            throw new IOException("disk full saving " + entry);
        }
        return "saved " + entry;
    }

    @Override
    public Object unencodable() {
        calls.incrementAndGet();
        return new Unencodable();
    }

    @Override
    public String relay(String request) {
        calls.incrementAndGet();
        return next.record(request + "-first") + " / " + next.record(request + "-second");
    }

    @Override
    public String record(String entry) {
        calls.incrementAndGet();
        seen.add(new Seen(entry, RpcContext.getServerAttachment().getAttachment(WheelFailback.RETRY_ID),
                RpcContext.getServerAttachment().getAttachment(WheelFailback.RETRY_ATTEMPT)));
        return "recorded " + entry;
    }
}
