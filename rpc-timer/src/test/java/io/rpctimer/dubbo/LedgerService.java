package io.rpctimer.dubbo;

import java.io.IOException;

/** A second service for the plugin's tests: checked business exceptions, an unencodable reply, a relay. */
public interface LedgerService {

    /** Throws an {@link IOException} when the provider is told to: a business failure the caller must see. */
    String save(String entry) throws IOException;

    /** Returns a value its provider cannot serialize. */
    Object unencodable();

    /** Makes two different calls to the next hop, as a provider that calls on does. */
    String relay(String request);

    /** Records the call's {@code retry.id} and {@code retry.attempt}. */
    String record(String entry);
}
