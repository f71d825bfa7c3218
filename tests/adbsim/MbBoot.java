// The simulated device's process entry for instrumentation with a private status channel (see
// MbInstrumentationRunner): reads "port token" from stdin, then makes three class loaders over the platform
// loader: JUnit's, the runner's (over JUnit's) and the one for the classes under test (over JUnit's, so they can
// never name the runner), and hands the runner the handshake. It keeps nothing: no field, no property, no env.
// Usage: java -cp <this folder> MbBoot <runner folder> <junit jars> <app and test jars> pkg.Class#method[,...]
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;

public final class MbBoot {
    private static URL[] urls(String path) throws Exception {
        String[] parts = path.split(File.pathSeparator);
        URL[] out = new URL[parts.length];
        for (int i = 0; i < parts.length; i++) out[i] = new File(parts[i]).toURI().toURL();
        return out;
    }

    public static void main(String[] args) throws Exception {
        String handshake = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        System.in.close();
        ClassLoader junit = new URLClassLoader(urls(args[1]), ClassLoader.getPlatformClassLoader());
        ClassLoader runner = new URLClassLoader(urls(args[0]), junit);
        ClassLoader tested = new URLClassLoader(urls(args[2]), junit);
        runner.loadClass("MbInstrumentationRunner")
              .getMethod("run", String.class, ClassLoader.class, String.class)
              .invoke(null, handshake, tested, args[3]);
    }
}
