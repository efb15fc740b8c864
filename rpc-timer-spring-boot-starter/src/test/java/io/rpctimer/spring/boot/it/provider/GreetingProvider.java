package io.rpctimer.spring.boot.it.provider;

import io.rpctimer.spring.boot.it.GreetingApi;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.dubbo.config.annotation.DubboService;
import org.apache.dubbo.rpc.RpcContext;

/** The provider application's service: answers, and remembers the {@code retry.id} of every call it ran. */
@DubboService
public class GreetingProvider implements GreetingApi {

    /** The {@code retry.id}s of the calls this provider ran, in order; JVM-wide, for the test's assertions. */
    public static final List<String> RAN = new CopyOnWriteArrayList<>();

    @Override
    public String greet(String name) {
        RAN.add(RpcContext.getServerAttachment().getAttachment("retry.id"));
        return "hello " + name;
    }
}
