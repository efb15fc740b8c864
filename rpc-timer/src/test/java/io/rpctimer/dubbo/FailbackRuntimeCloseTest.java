package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.SlowLaneExecutor;
import java.nio.file.Path;
import org.apache.dubbo.common.URL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An application's close leaves none of its timeouts on the shared wheel, which outlives it. */
class FailbackRuntimeCloseTest {

    @TempDir
    Path dir;

    @Test
    void closeCancelsThePeriodicClaimOfAnApplicationWithAJournal() {
        ManualTimer wheel = new ManualTimer();
        FailbackRuntime runtime = new FailbackRuntime(wheel,
                SlowLaneExecutor.builder().lanes(Runnable::run, Runnable::run).build(), true);
        runtime.lifecycle(URL.valueOf("consumer://127.0.0.1/com.example.Greeter?application=close-app"
                + "&failback.store=embedded&failback.store.dir=" + dir));
        assertEquals(2, wheel.attemptTimeouts().size(), "the periodic claim and the dead letters' trim");

        runtime.close();
        assertTrue(wheel.attemptTimeouts().isEmpty(), "left on the wheel: " + wheel.attemptTimeouts());
    }
}
