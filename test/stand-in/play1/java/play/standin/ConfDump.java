package play.standin;

import java.io.File;
import java.util.Map;

/**
 * STAND-IN tool (not part of Play): prints, as JSON, the configuration
 * java.util.Properties and Play's framework-id rule give for an application,
 * before `${…}` resolution. runplan's tests compare their own reading of
 * application.conf with it.
 */
public final class ConfDump {
    public static void main(String[] args) throws Exception {
        Map<String, String> conf = Conf.applyId(Conf.read(new File(args[0])), args[1]);
        StringBuilder json = new StringBuilder("{");
        for (Map.Entry<String, String> e : conf.entrySet()) {
            if (json.length() > 1) json.append(',');
            json.append(Server.quote(e.getKey())).append(':').append(Server.quote(e.getValue()));
        }
        System.out.println(json.append('}'));
    }
}
