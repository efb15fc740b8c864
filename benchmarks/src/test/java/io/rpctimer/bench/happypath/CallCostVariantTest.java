package io.rpctimer.bench.happypath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.apache.dubbo.rpc.RpcContext;
import org.junit.jupiter.api.Test;

class CallCostVariantTest {

    @Test
    void aConfigurationAlone() {
        CallCost.Variant v = CallCost.Variant.parse("WHEEL");
        assertEquals(Config.WHEEL, v.config());
        assertEquals(Map.of(), v.parameters());
        assertEquals("wheelfailback", v.label());
    }

    @Test
    void addedParametersGoToTheReferenceAndTheLabel() {
        CallCost.Variant v = CallCost.Variant.parse("WHEEL_TIMEOUTCHECK+sendAsync.timeoutcheck=false+a=b=c");
        assertEquals(Config.WHEEL_TIMEOUTCHECK, v.config());
        assertEquals(Map.of("sendAsync.timeoutcheck", "false", "a", "b=c"), v.parameters());
        assertEquals("wheelfailback+timeoutcheck+sendAsync.timeoutcheck=false+a=b=c", v.label());
    }

    @Test
    void anAttachmentOfItsOwnEndsTheSpec() {
        CallCost.Variant v = CallCost.Variant.parse("FAILBACK+a=b@retry.id");
        assertEquals(Config.FAILBACK, v.config());
        assertEquals(Map.of("a", "b"), v.parameters());
        assertEquals("retry.id", v.attachment());
        assertEquals("failback+a=b@retry.id", v.label());
        assertNull(CallCost.Variant.parse("FAILBACK").attachment());
    }

    @Test
    void aSpinKeyBusyWaitsOnTheCallersThread_andAttachesNothing() {
        RpcContext.removeClientAttachment();
        long start = System.nanoTime();

        CallCost.attach("spin20000000");

        assertTrue(System.nanoTime() - start >= 20_000_000L, "spun at least 20 ms");
        assertTrue(RpcContext.getClientAttachment().getObjectAttachments().isEmpty());
        assertEquals(400, CallCost.spinNanos("spin400"));
        assertEquals(-1, CallCost.spinNanos("spin"));
        assertEquals(-1, CallCost.spinNanos("spin4a"));
        assertEquals(-1, CallCost.spinNanos(null));
        CallCost.attach("spinach");
        assertTrue(RpcContext.getClientAttachment().getObjectAttachments().containsKey("spinach"),
                "a key that is not spin and digits is an attachment");
        RpcContext.removeClientAttachment();
    }

    @Test
    void badSpecsAreNamed() {
        IllegalArgumentException noConfig = assertThrows(IllegalArgumentException.class,
                () -> CallCost.Variant.parse("WHEELS"));
        assertTrue(noConfig.getMessage().startsWith("configs: WHEELS (expected: one of"), noConfig.getMessage());
        IllegalArgumentException noValue = assertThrows(IllegalArgumentException.class,
                () -> CallCost.Variant.parse("WHEEL+timeoutcheck"));
        assertEquals("configs: WHEEL+timeoutcheck (expected: key=value after a +, got timeoutcheck)",
                noValue.getMessage());
        IllegalArgumentException noKey = assertThrows(IllegalArgumentException.class,
                () -> CallCost.Variant.parse("FAILBACK@"));
        assertEquals("configs: FAILBACK@ (expected: an attachment key after @)", noKey.getMessage());
    }
}
