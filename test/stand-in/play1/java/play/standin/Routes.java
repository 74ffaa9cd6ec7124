package play.standin;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * STAND-IN (not Play): a routes file of `METHOD /path Action` lines. The stand-in
 * knows two actions — StandIn.report (a JSON report of what the framework
 * resolved) and 404 — so "compiling" checks every line against them, as Play's
 * precompilation fails on a route to a missing action.
 */
final class Routes {
    static final class Route {
        final String method;
        final String path;
        final String action;

        Route(String method, String path, String action) {
            this.method = method;
            this.path = path;
            this.action = action;
        }
    }

    private static final Set<String> METHODS = Set.of("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "*");
    private static final Set<String> ACTIONS = Set.of("StandIn.report", "404");

    static List<Route> parse(File file) throws Exception {
        List<Route> routes = new ArrayList<>();
        List<String> lines = Files.readAllLines(file.toPath(), StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String[] parts = line.split("\\s+");
            if (parts.length != 3 || !METHODS.contains(parts[0]) || !parts[1].startsWith("/")) {
                throw new IllegalArgumentException(file.getName() + " line " + (i + 1) + ": expected METHOD /path Action, got \"" + line + "\"");
            }
            if (!ACTIONS.contains(parts[2])) {
                throw new IllegalArgumentException(file.getName() + " line " + (i + 1) + ": action " + parts[2] + " does not exist (the stand-in knows StandIn.report and 404)");
            }
            routes.add(new Route(parts[0], parts[1], parts[2]));
        }
        return routes;
    }

    static String write(List<Route> routes) {
        StringBuilder out = new StringBuilder();
        for (Route r : routes) out.append(r.method).append(' ').append(r.path).append(' ').append(r.action).append('\n');
        return out.toString();
    }
}
