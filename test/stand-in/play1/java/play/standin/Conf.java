package play.standin;

import java.io.File;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * STAND-IN (not Play): reads conf/application.conf the way Play 1.x does —
 * java.util.Properties in UTF-8, `%id.key` entries replacing `key` for the
 * running framework id (other ids dropped), then `${name}` resolved from
 * application.path, play.path, JVM system properties and the environment,
 * with Play's warning for what cannot be resolved.
 */
final class Conf {
    private static final Pattern ID_KEY = Pattern.compile("^%([a-zA-Z0-9_\\-]+)\\.(.*)$", Pattern.DOTALL);
    private static final Pattern REFERENCE = Pattern.compile("\\$\\{([^}]+)}");

    static TreeMap<String, String> load(File appPath, String id) throws Exception {
        return resolve(applyId(read(appPath), id), appPath);
    }

    static Properties read(File appPath) throws Exception {
        Properties raw = new Properties();
        try (Reader reader = new InputStreamReader(Files.newInputStream(new File(appPath, "conf/application.conf").toPath()), StandardCharsets.UTF_8)) {
            raw.load(reader);
        }
        return raw;
    }

    static TreeMap<String, String> applyId(Properties raw, String id) {
        TreeMap<String, String> conf = new TreeMap<>();
        for (String key : raw.stringPropertyNames()) {
            if (!ID_KEY.matcher(key).matches()) conf.put(key, raw.getProperty(key));
        }
        for (String key : raw.stringPropertyNames()) {
            Matcher m = ID_KEY.matcher(key);
            if (m.matches() && m.group(1).equals(id)) conf.put(m.group(2), raw.getProperty(key).trim());
        }
        return conf;
    }

    static TreeMap<String, String> resolve(TreeMap<String, String> conf, File appPath) {
        for (String key : conf.keySet()) {
            String value = conf.get(key);
            Matcher m = REFERENCE.matcher(value);
            StringBuffer out = new StringBuffer();
            while (m.find()) {
                String name = m.group(1);
                String r;
                if (name.equals("application.path")) r = appPath.getAbsolutePath();
                else if (name.equals("play.path")) r = System.getProperty("framework.path");
                else {
                    r = System.getProperty(name);
                    if (r == null) r = System.getenv(name);
                }
                if (r == null) {
                    System.out.println("WARN  Cannot replace " + name + " in configuration (" + key + "=" + value + ")");
                    continue;
                }
                // As play.Play does: only backslashes are escaped, so a $ in the value is
                // read as a group reference (IllegalArgumentException, or other text for $0/$1).
                m.appendReplacement(out, r.replaceAll("\\\\", "\\\\\\\\"));
            }
            m.appendTail(out);
            conf.put(key, out.toString());
        }
        return conf;
    }
}
