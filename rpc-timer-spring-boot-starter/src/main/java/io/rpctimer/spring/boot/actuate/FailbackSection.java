package io.rpctimer.spring.boot.actuate;

/**
 * A sub-resource of the {@code failback} Actuator endpoint, found by its {@link #name()}:
 * {@code GET /actuator/failback/<name>} reads {@link #list()}, {@code GET /actuator/failback/<name>/<id>} reads
 * {@link #read(String)}, {@code POST /actuator/failback/<name>/<action>} runs {@link #write(String, String, String)}.
 * Each section is a bean; {@link FailbackEndpoint} dispatches to it, so a new kind of resource is one more bean.
 *
 * <p><b>Threading:</b> implementations are thread-safe; the Actuator calls them from request threads.
 */
public interface FailbackSection {

    /** @return the path segment, e.g. {@code calls}; letters, digits and '-' */
    String name();

    /** @return the section's listing as JSON-ready objects, or null when it has none (404) */
    default Object list() {
        return null;
    }

    /** @return the item {@code id} as JSON-ready objects, or null when there is none (404) */
    Object read(String id);

    /**
     * A change, {@code POST /actuator/failback/<name>/<action>} with a JSON body of {@code target} and {@code rate}.
     *
     * @return the answer as JSON-ready objects (a {@code WebEndpointResponse} to answer another status than 200), or
     *         null when the section has no such action (404)
     */
    default Object write(String action, String target, String rate) {
        return null;
    }
}
