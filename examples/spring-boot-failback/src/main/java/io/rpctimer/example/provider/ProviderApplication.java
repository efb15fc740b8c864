package io.rpctimer.example.provider;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The provider: {@code provider.properties} (Dubbo, the retrydedup filter on the application's DataSource). */
@SpringBootApplication
public class ProviderApplication {
}
