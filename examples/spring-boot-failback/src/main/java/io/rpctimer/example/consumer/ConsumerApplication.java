package io.rpctimer.example.consumer;

import io.rpctimer.example.api.GreetingService;
import org.apache.dubbo.config.annotation.DubboReference;
import org.apache.dubbo.config.spring.ReferenceBean;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * The consumer: {@code consumer.properties} (Dubbo, {@code rpc-timer.*}, the Actuator). Its reference names no
 * cluster: {@code rpc-timer.default-cluster=true} makes it {@code wheelfailback}.
 */
@SpringBootApplication
public class ConsumerApplication {

    @Bean
    @DubboReference(check = false, timeout = 1000)
    ReferenceBean<GreetingService> greetingService() {
        return new ReferenceBean<>();
    }
}
