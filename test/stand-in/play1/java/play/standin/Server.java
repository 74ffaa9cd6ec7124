package play.standin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.File;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * STAND-IN (not Play) for Play 1.x's server. With -Dprecompile=yes it
 * "precompiles" (checks conf/routes and writes precompiled/); otherwise it
 * serves the routes on --http.port (else http.port, else 9000) on all
 * interfaces. With -Dprecompiled=true it refuses to start without precompiled/
 * and, like Play, forces PROD mode. StandIn.report answers what the framework
 * resolved: framework id, configuration, port, request.secure and JVM options.
 */
public final class Server {
    public static void main(String[] args) throws Exception {
        File app = new File(System.getProperty("application.path"));
        String id = System.getProperty("play.id", "");
        File frameworkPath = new File(System.getProperty("framework.path"));
        String version = new String(Files.readAllBytes(new File(frameworkPath, "framework/src/play/version").toPath()), StandardCharsets.UTF_8).trim();
        Map<String, String> conf = Conf.load(app, id);
        boolean precompile = System.getProperty("precompile") != null;
        boolean precompiled = "true".equals(System.getProperty("precompiled"));
        String mode = (precompile || precompiled) ? "prod" : conf.getOrDefault("application.mode", "dev").toLowerCase();

        if (precompile) {
            List<Routes.Route> routes;
            try {
                routes = Routes.parse(new File(app, "conf/routes"));
            } catch (IllegalArgumentException e) {
                System.out.println("~ Compilation error: " + e.getMessage());
                System.exit(1);
                return;
            }
            File out = new File(app, "precompiled");
            new File(out, "java").mkdirs();
            new File(out, "templates").mkdirs();
            Files.write(new File(out, "routes").toPath(), Routes.write(routes).getBytes(StandardCharsets.UTF_8));
            System.out.println("~ Precompiled " + routes.size() + " route(s) to " + out.getAbsolutePath());
            return;
        }

        File routesFile = precompiled ? new File(app, "precompiled/routes") : new File(app, "conf/routes");
        if (precompiled && !routesFile.exists()) {
            System.out.println("~ Precompiled classes are missing!! Run play precompile first.");
            System.exit(1);
        }
        List<Routes.Route> routes = Routes.parse(routesFile);
        int port = Integer.parseInt(conf.getOrDefault("http.port", "9000"));
        for (String arg : args) if (arg.startsWith("--http.port=")) port = Integer.parseInt(arg.substring("--http.port=".length()));
        final int listening = port;
        String deps = readOr(new File(app, "lib/.standin-deps"), "not resolved");

        HttpServer server = HttpServer.create(new InetSocketAddress(port), 64);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/", exchange -> {
            try {
                handle(exchange, routes, conf, version, id, mode, precompiled, listening, deps);
            } catch (RuntimeException e) {
                send(exchange, 500, "text/plain", "Execution exception: " + e.getMessage());
            } finally {
                exchange.close();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("~ Stopping the stand-in application");
            server.stop(0);
        }));
        server.start();
        System.out.println("~ Application '" + conf.getOrDefault("application.name", "") + "' is now started ! (stand-in for Play " + version + ", " + mode + " mode)");
        System.out.println("~ Listening for HTTP on /0.0.0.0:" + port);
    }

    private static void handle(HttpExchange ex, List<Routes.Route> routes, Map<String, String> conf, String version, String id, String mode, boolean precompiled, int port, String deps) {
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        Routes.Route route = null;
        for (Routes.Route r : routes) {
            if ((r.method.equals("*") || r.method.equals(method)) && r.path.equals(path)) {
                route = r;
                break;
            }
        }
        if (route == null || route.action.equals("404")) {
            send(ex, 404, "text/plain", "Not found: " + method + " " + path);
            return;
        }
        boolean secure = secure(ex, conf);
        StringBuilder json = new StringBuilder("{");
        field(json, "standIn", "runplan stand-in for Play 1.x (not Play)").append(',');
        field(json, "playVersion", version).append(',');
        field(json, "frameworkId", id).append(',');
        field(json, "mode", mode).append(',');
        json.append("\"port\":").append(port).append(',');
        json.append("\"precompiled\":").append(precompiled).append(',');
        field(json, "dependencies", deps).append(',');
        json.append("\"secure\":").append(secure).append(',');
        json.append("\"config\":{");
        boolean first = true;
        for (Map.Entry<String, String> e : conf.entrySet()) {
            if (!first) json.append(',');
            first = false;
            field(json, e.getKey(), e.getValue());
        }
        json.append("},\"jvm\":{\"inputArguments\":[");
        List<String> jvmArgs = ManagementFactory.getRuntimeMXBean().getInputArguments();
        for (int i = 0; i < jvmArgs.size(); i++) json.append(i > 0 ? "," : "").append(quote(jvmArgs.get(i)));
        json.append("],\"maxHeapMb\":").append(Runtime.getRuntime().maxMemory() / 1048576).append("}}");
        send(ex, 200, "application/json", json.toString());
    }

    /** Play 1.x's rule: forwarded headers count only with XForwardedSupport (all, or the proxy's address). */
    private static boolean secure(HttpExchange ex, Map<String, String> conf) {
        String support = conf.get("XForwardedSupport");
        if (support == null || ex.getRequestHeaders().getFirst("X-Forwarded-For") == null) return false;
        String remote = ex.getRemoteAddress().getAddress().getHostAddress();
        if (!"ALL".equalsIgnoreCase(support.trim()) && !Arrays.asList(support.split("[\\s,]+")).contains(remote)) {
            throw new RuntimeException("This proxy request is not authorized: " + remote);
        }
        String proto = ex.getRequestHeaders().getFirst("X-Forwarded-Proto");
        String ssl = ex.getRequestHeaders().getFirst("X-Forwarded-Ssl");
        return "https".equals(conf.get("XForwardedProto")) || "https".equals(proto) || "on".equals(ssl);
    }

    private static String readOr(File file, String fallback) {
        try {
            return new String(Files.readAllBytes(file.toPath()), StandardCharsets.UTF_8).trim();
        } catch (Exception e) {
            return fallback;
        }
    }

    private static void send(HttpExchange ex, int status, String type, String body) {
        try {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", type + "; charset=utf-8");
            ex.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        } catch (Exception ignored) {
            // The client went away.
        }
    }

    private static StringBuilder field(StringBuilder json, String name, String value) {
        return json.append(quote(name)).append(':').append(quote(value));
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            // Everything outside printable ASCII is escaped: the JSON then reads the same whatever
            // charset the JVM's locale gives System.out (US-ASCII when LANG is unset).
            else if (c < 0x20 || c > 0x7e) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }
}
