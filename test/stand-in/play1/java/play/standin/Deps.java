package play.standin;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

/**
 * STAND-IN (not Play) for `play deps`: reads the `require:` list of
 * conf/dependencies.yml. It cannot fetch anything, so it accepts only the
 * framework itself (`- play`) and fails, naming them, on other dependencies;
 * it records that resolution ran so the running application can report it.
 */
public final class Deps {
    public static void main(String[] args) throws Exception {
        File app = new File(System.getProperty("application.path"));
        File yml = new File(app, "conf/dependencies.yml");
        List<String> required = new ArrayList<>();
        if (yml.exists()) {
            boolean inRequire = false;
            for (String line : Files.readAllLines(yml.toPath(), StandardCharsets.UTF_8)) {
                if (line.trim().isEmpty() || line.trim().startsWith("#")) continue;
                if (!line.startsWith(" ") && !line.startsWith("-")) inRequire = line.trim().startsWith("require:");
                else if (inRequire && line.trim().startsWith("- ")) required.add(line.trim().substring(2).trim());
            }
        }
        System.out.println("~ Resolving dependencies using " + yml.getAbsolutePath());
        List<String> unavailable = new ArrayList<>();
        for (String dep : required) if (!dep.equals("play") && !dep.startsWith("play ")) unavailable.add(dep);
        if (!unavailable.isEmpty()) {
            System.out.println("~ The stand-in framework cannot fetch: " + String.join(", ", unavailable));
            System.exit(1);
        }
        new File(app, "lib").mkdirs();
        new File(app, "modules").mkdirs();
        Files.write(new File(app, "lib/.standin-deps").toPath(), ((System.getProperty("sync") != null ? "synced" : "resolved") + "\n").getBytes(StandardCharsets.UTF_8));
        System.out.println("~ Done!" + (System.getProperty("sync") != null ? " (synced)" : ""));
    }
}
