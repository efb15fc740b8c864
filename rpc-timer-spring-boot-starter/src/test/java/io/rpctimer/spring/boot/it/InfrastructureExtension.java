package io.rpctimer.spring.boot.it;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Starts the {@link Infrastructure} before the test class's Spring context, and stops it after: declared before
 * {@code @SpringBootTest}, its {@code afterAll} runs after Spring's, which closes the context
 * ({@code @DirtiesContext}), so applications stop while ZooKeeper and the database are still there. Applications a
 * test starts itself ({@link #track}) are closed first.
 */
public final class InfrastructureExtension implements BeforeAllCallback, AfterAllCallback {

    private static Infrastructure current;
    private static final List<ConfigurableApplicationContext> STARTED = new ArrayList<>();

    /** @return the infrastructure of the running test class */
    public static synchronized Infrastructure infrastructure() throws Exception {
        if (current == null) {
            current = Infrastructure.start(); // the context may ask first (@DynamicPropertySource)
        }
        return current;
    }

    /** @return {@code context}, closed before the infrastructure stops */
    public static synchronized ConfigurableApplicationContext track(ConfigurableApplicationContext context) {
        STARTED.add(context);
        return context;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        infrastructure();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        synchronized (InfrastructureExtension.class) {
            try {
                for (int i = STARTED.size() - 1; i >= 0; i--) {
                    STARTED.get(i).close();
                }
            } finally {
                STARTED.clear();
                if (current != null) {
                    current.close();
                    current = null;
                }
            }
        }
    }
}
