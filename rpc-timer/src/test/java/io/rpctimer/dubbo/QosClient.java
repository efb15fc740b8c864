package io.rpctimer.dubbo;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.dubbo.config.ApplicationConfig;

/**
 * A client of a Dubbo QoS port on 127.0.0.1, as an operator uses it: an HTTP GET, or one command line over telnet.
 * Written against what every Dubbo line from 3.1 on has, so that the matrix runs it on each.
 */
final class QosClient {

    private final int port;
    private final HttpClient http = HttpClient.newHttpClient();

    QosClient(int port) {
        this.port = port;
    }

    /** @return an application named {@code name} whose QoS server listens on 127.0.0.1:{@code qosPort} only */
    static ApplicationConfig application(String name, int qosPort) {
        ApplicationConfig ac = new ApplicationConfig(name);
        ac.setQosEnable(true);
        ac.setQosHost("127.0.0.1");
        ac.setQosPort(qosPort);
        ac.setQosAcceptForeignIp(false);
        ac.setRegisterMode("interface");
        ac.setMetadataType("local");
        ac.setEnableFileCache(false);
        return ac;
    }

    /** @return the body of GET http://127.0.0.1:port{@code path} */
    String get(String path) throws IOException, InterruptedException {
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).GET().build();
        return http.send(get, HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Sends one command line on the QoS port as a telnet client does, and reads up to the next prompt. */
    String telnet(String line) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            readUntilPrompt(in); // Dubbo greets a client that sends nothing first
            socket.getOutputStream().write((line + "\r\n").getBytes(StandardCharsets.UTF_8));
            return readUntilPrompt(in);
        }
    }

    private static String readUntilPrompt(InputStream in) throws IOException {
        StringBuilder out = new StringBuilder();
        while (!out.toString().endsWith("dubbo>")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("QoS closed the connection after: " + out);
            }
            out.append((char) b);
        }
        return out.toString();
    }
}
