package io.rpctimer.example.provider;

import io.rpctimer.example.api.GreetingService;
import org.apache.dubbo.config.annotation.DubboService;
import org.apache.dubbo.rpc.RpcContext;

/** The provider's service. The consumer's {@code retry.id} arrives as an attachment; retrydedup runs each id once. */
@DubboService
public class GreetingServiceImpl implements GreetingService {

    @Override
    public String greet(String name) {
        String retryId = RpcContext.getServerAttachment().getAttachment("retry.id");
        String attempt = RpcContext.getServerAttachment().getAttachment("retry.attempt"); // absent on the original
        System.out.printf("  provider   greet(%s) retry.id=%s retry.attempt=%s%n", name, retryId,
                attempt == null ? "0" : attempt);
        return "hello " + name;
    }
}
