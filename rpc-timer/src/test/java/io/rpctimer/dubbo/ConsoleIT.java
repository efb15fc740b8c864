package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.testkit.Ports;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The console's page ({@code failback.console.port}) of a consumer over real Dubbo RPC on 127.0.0.1, in a real headless
 * browser: Debian's {@code chromium} driven by Selenium through {@code chromium-driver} (both installed by
 * {@code .ci/run}; nothing is downloaded). Calls are abandoned into the dead letters (the provider refuses them), the
 * page shows them and a chart whose points add up to the lifecycle's counters, and a click on a dead letter's replay
 * button sends it again and it is delivered. A change without the page's token, by GET, or with another site's Host
 * is refused and changes nothing. When the application is destroyed, the page stops.
 *
 * <p>Leaves a screenshot of the page in {@code target/console.png} (docs/images/console.png is one).
 */
@org.junit.jupiter.api.Timeout(240)
class ConsoleIT {

    private static final String APP = "console-app";
    private static final int CALLS = 3;
    private static final Duration AWAIT = Duration.ofSeconds(90);
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    private final ScriptedGreetingService s1 = new ScriptedGreetingService("p1");
    private final ScriptedGreetingService s2 = new ScriptedGreetingService("p2");
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private DubboNode p1;
    private DubboNode p2;
    private DubboNode consumer;
    private WebDriver browser;
    private int port;

    @BeforeEach
    void start() {
        p1 = DubboNode.provider("p1", GreetingService.class, s1);
        p2 = DubboNode.provider("p2", GreetingService.class, s2);
    }

    @AfterEach
    void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (consumer != null) {
            consumer.close();
        }
        p1.close();
        p2.close();
    }

    private GreetingService connect() {
        port = Ports.free();
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(10_000);
        ref.setRetries(1);
        // a mutable map, as Dubbo adds to it
        ref.setParameters(new HashMap<>(Map.of("failback.delay", "200", "failback.jitter", "0",
                "failback.retryon", "all", "failback.store", "memory", ConsoleConfig.PORT, String.valueOf(port))));
        consumer = DubboNode.consumer(APP, ref, p1, p2);
        return ref.get();
    }

    private static RetryLifecycle lifecycle() {
        return WheelFailback.lifecycles().stream().filter(l -> l.application().equals(APP)).findFirst()
                .orElseThrow();
    }

    private static String retryId(int i) {
        return "console-" + i;
    }

    @Test
    void thePageShowsTheCountersAndAClickReplaysADeadLetterThatIsDelivered(@TempDir Path profile) throws Exception {
        GreetingService svc = connect();
        assertTrue(svc.sayHello("warm-up").endsWith("hello warm-up"));
        s1.mode = ScriptedGreetingService.Mode.FAIL;
        s2.mode = ScriptedGreetingService.Mode.FAIL;
        for (int i = 0; i < CALLS; i++) {
            RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, retryId(i));
            assertNull(svc.notify("n" + i), "failback: the caller gets the empty result");
        }
        await().atMost(AWAIT).until(() -> lifecycle().deadLetters().stats().buried() == CALLS);

        browser = chromium(profile);
        browser.get("http://127.0.0.1:" + port + "/");
        assertTrue(browser.getTitle().endsWith(APP), browser.getTitle());
        await().atMost(AWAIT).until(() -> deadRows() == CALLS);
        assertChartAgreesWithTheCounters();

        s1.mode = ScriptedGreetingService.Mode.OK;
        s2.mode = ScriptedGreetingService.Mode.OK;
        click(By.cssSelector("button.replay[data-target='" + retryId(1) + "']"));
        await().atMost(AWAIT).until(() -> lifecycle().stats().delivered() == 1);
        assertEquals(List.of(retryId(1)), Stream.concat(s1.served.stream(), s2.served.stream())
                .filter(ScriptedGreetingService.Served::answered).map(ScriptedGreetingService.Served::retryId)
                .filter(id -> id != null && id.startsWith("console-")).toList(),
                () -> "the replayed call was delivered, and only it (the warm-up has a generated retry.id); the page"
                        + " answered '" + browser.findElement(By.id("answer")).getText() + "'; steps of "
                        + retryId(1) + ": " + lifecycle().history(retryId(1)) + "; steps of " + retryId(2) + ": "
                        + lifecycle().history(retryId(2)));
        await().atMost(AWAIT).until(() -> deadRows() == CALLS - 1
                && chartSum("delivered") == 1);
        assertTrue(browser.findElement(By.id("answer")).getText().startsWith("replayed 1 of 1"),
                browser.findElement(By.id("answer")).getText());
        assertChartAgreesWithTheCounters();

        click(By.linkText(retryId(0)));
        await().atMost(AWAIT).until(() -> browser.findElement(By.id("history")).getText().contains("ABANDONED"));
        Path shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(shot, Path.of("target", "console.png"), StandardCopyOption.REPLACE_EXISTING);

        changesWithoutThePagesTokenAreRefused();

        browser.quit();
        browser = null;
        consumer.close(); // the application is destroyed: its page stops
        consumer = null;
        assertThrows(IOException.class, () -> new Socket("127.0.0.1", port).close(), "the console's port is closed");
    }

    private void changesWithoutThePagesTokenAreRefused() throws Exception {
        String token = browser.findElement(By.cssSelector("meta[name='rpc-timer-token']")).getAttribute("content");
        assertEquals(403, post("/replay", "target=all").statusCode(), "no token");
        assertEquals(403, post("/purge", "target=all&token=" + token.substring(1) + "x").statusCode(), "wrong token");
        assertEquals(403, get("/purge?target=all&token=" + token).statusCode(), "a GET changes nothing");
        assertTrue(rawStatusLine("evil.example:" + port, token).contains(" 403 "), "another site's Host");
        assertEquals(CALLS - 1, lifecycle().deadLetters().stats().dead(), "nothing was replayed or purged");
        HttpResponse<String> bad = post("/replay", "target=all&rate=fast&token=" + token);
        assertEquals(400, bad.statusCode(), bad.body());
        assertTrue(bad.body().contains("rate: 'fast' (expected: replays per second"), bad.body());
        HttpResponse<String> purged = post("/purge", "target=all&token=" + token);
        assertEquals(200, purged.statusCode(), purged.body());
        assertTrue(purged.body().contains("\"purged\":" + (CALLS - 1)), purged.body());
    }

    private void assertChartAgreesWithTheCounters() {
        io.rpctimer.retry.RetryStats stats = lifecycle().stats();
        await().atMost(AWAIT).until(() -> chartSum("abandoned") == stats.abandoned()
                && chartSum("delivered") == stats.delivered());
        assertEquals(60, count("#chart circle.pt.abandoned"), "a point a minute");
        assertEquals(0, chartSum("rejected"));
    }

    /** The page redraws every 2 s: read it in one script, never through elements a redraw replaces. */
    private long chartSum(String series) {
        return ((Number) ((JavascriptExecutor) browser).executeScript("return [...document.querySelectorAll("
                + "'#chart circle.pt.' + arguments[0])].reduce((sum, c) => sum + Number(c.dataset.count), 0)",
                series)).longValue();
    }

    private long count(String selector) {
        return ((Number) ((JavascriptExecutor) browser).executeScript(
                "return document.querySelectorAll(arguments[0]).length", selector)).longValue();
    }

    private long deadRows() {
        return count("#dead tbody tr");
    }

    /** Clicks what {@code by} finds, again if a redraw replaced it meanwhile. */
    private void click(By by) {
        await().atMost(AWAIT).ignoreException(StaleElementReferenceException.class).until(() -> {
            browser.findElement(by).click();
            return true;
        });
    }

    private HttpResponse<String> post(String path, String form) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A POST with the right token whose Host names another site, as a DNS-rebinding page's would. */
    private String rawStatusLine(String host, String token) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            String body = "target=all&token=" + token;
            OutputStream out = s.getOutputStream();
            out.write(("POST /purge HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/x-www-form-urlencoded"
                    + "\r\nContent-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().findFirst().orElse("");
        }
    }

    /** Debian's chromium through its chromedriver, headless, with a fresh profile; Selenium downloads nothing. */
    private static WebDriver chromium(Path profile) {
        assertTrue(Files.isExecutable(CHROMEDRIVER) && Files.isExecutable(CHROMIUM), "the browser test needs "
                + CHROMIUM + " and " + CHROMEDRIVER + ": apt-get install -y chromium chromium-driver");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1100,1250", "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(CHROMEDRIVER.toString())).usingAnyFreePort().build();
        return new ChromeDriver(service, options);
    }
}
