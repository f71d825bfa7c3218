// The simulated device's instrumentation runner: runs the selected JUnit 4 test methods on the host JVM and
// prints the raw instrumentation status protocol that `am instrument -r` prints on a device with
// androidx.test's AndroidJUnitRunner (status codes of its InstrumentationResultPrinter: 1 start, 0 ok,
// -2 failure, -3 ignored, -4 assumption failure; `current` counts started tests, `numtests` is the
// selection's size, a class's first test start carries "\n<class>:" in `stream`).
// Usage: java MbInstrumentationRunner pkg.Class#method[,pkg.Class#other,...]   (the protocol on stdout: a device
// whose instrumentation stream the process under test can write to, as sendStatus can on a real one), or through
// MbBoot (the default of the simulated device): the protocol goes ONLY to a socket the device opened, whose port
// and one-time token MbBoot reads from stdin before any class under test loads; the classes under test are loaded
// by their own class loader that cannot name this class, and nothing of the channel is held in a static field.
// Whatever the process prints goes to logcat, as on a device; `am` writes the final lines itself and reports
// "Process crashed." when the channel ends without the runner's final record (System.exit, halt, a kill).
// Like Android, an uncaught exception in any thread kills the process: the running test is reported
// failed ("Process crashed while executing ...") and the process halts without a final result (the
// simulated `am` then prints "INSTRUMENTATION_RESULT: shortMsg=Process crashed.").
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.Socket;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.manipulation.Filter;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunListener;

public final class MbInstrumentationRunner extends RunListener {
    private final PrintStream out;
    private int current = 0;
    private int numTests = 0;
    private String lastClass = null;
    private Description running;
    private Failure failure;
    private boolean assumption;

    private static String trace(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    private synchronized void block(Description d, String stack, String stream, int code) {
        StringBuilder b = new StringBuilder();
        b.append("INSTRUMENTATION_STATUS: class=").append(d.getClassName()).append('\n');
        b.append("INSTRUMENTATION_STATUS: current=").append(current).append('\n');
        b.append("INSTRUMENTATION_STATUS: id=AndroidJUnitRunner\n");
        b.append("INSTRUMENTATION_STATUS: numtests=").append(numTests).append('\n');
        if (stack != null) {
            b.append("INSTRUMENTATION_STATUS: stack=").append(stack);
            if (!stack.endsWith("\n")) b.append('\n');
        }
        b.append("INSTRUMENTATION_STATUS: stream=").append(stream).append('\n');
        b.append("INSTRUMENTATION_STATUS: test=").append(d.getMethodName()).append('\n');
        b.append("INSTRUMENTATION_STATUS_CODE: ").append(code).append('\n');
        out.print(b);
        out.flush();
    }

    private String startStream(Description d) {
        boolean first = !d.getClassName().equals(lastClass);
        lastClass = d.getClassName();
        return first ? "\n" + d.getClassName() + ":" : "";
    }

    @Override public void testRunStarted(Description d) { numTests = d.testCount(); }

    @Override public synchronized void testStarted(Description d) {
        current++;
        failure = null;
        assumption = false;
        running = d;
        block(d, null, startStream(d), 1);
    }

    @Override public void testFailure(Failure f) { failure = f; }

    @Override public void testAssumptionFailure(Failure f) { failure = f; assumption = true; }

    @Override public synchronized void testIgnored(Description d) {
        current++;
        block(d, null, startStream(d), 1);
        block(d, null, "", -3);
    }

    @Override public synchronized void testFinished(Description d) {
        running = null;
        if (failure == null) {
            block(d, null, ".", 0);
        } else {
            String t = trace(failure.getException());
            String head = "\nError in " + d.getMethodName() + "(" + d.getClassName() + "):\n";
            block(d, t, head + t, assumption ? -4 : -2);
        }
    }

    synchronized void processCrash(Throwable e) {
        if (running != null) {
            String t = trace(e);
            String head = "\nProcess crashed while executing " + running.getMethodName() + "(" + running.getClassName() + "):\n";
            block(running, t, head + t, -2);
        }
        System.err.println("FATAL EXCEPTION: " + e);
        out.flush();
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }

    /** class -> selected methods (empty: the whole class), in selection order. */
    private static Map<String, Set<String>> selection(String arg) {
        Map<String, Set<String>> wanted = new LinkedHashMap<>();
        for (String item : arg.split(",")) {
            if (item.isEmpty()) continue;
            String[] parts = item.split("#", 2);
            Set<String> methods = wanted.computeIfAbsent(parts[0], k -> new LinkedHashSet<>());
            if (parts.length == 2) methods.add(parts[1]);
        }
        return wanted;
    }

    private static Filter filter(final Map<String, Set<String>> wanted) {
        return new Filter() {
            @Override public boolean shouldRun(Description d) {
                if (d.isTest()) {
                    Set<String> methods = wanted.get(d.getClassName());
                    return methods != null && (methods.isEmpty() || methods.contains(d.getMethodName()));
                }
                for (Description child : d.getChildren()) if (shouldRun(child)) return true;
                return false;
            }

            @Override public String describe() { return "Methods " + wanted; }
        };
    }

    private MbInstrumentationRunner(PrintStream out) { this.out = out; }

    /** Runs the selection, the protocol to {@code channel}; classes come from {@code loader}. */
    private static void runAll(String arg, ClassLoader loader, PrintStream channel) throws Exception {
        Map<String, Set<String>> wanted = selection(arg);
        List<Class<?>> classes = new ArrayList<>();
        for (String name : wanted.keySet()) classes.add(Class.forName(name, false, loader));
        final MbInstrumentationRunner listener = new MbInstrumentationRunner(channel);
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> listener.processCrash(e));
        Request request = Request.classes(classes.toArray(new Class<?>[0])).filterWith(filter(wanted));
        JUnitCore core = new JUnitCore();
        core.addListener(listener);
        Result result = core.run(request);
        StringBuilder b = new StringBuilder("INSTRUMENTATION_RESULT: stream=\n\nTime: ");
        b.append(result.getRunTime() / 1000.0).append("\n\n");
        if (result.wasSuccessful()) {
            b.append("OK (").append(result.getRunCount()).append(" test").append(result.getRunCount() == 1 ? "" : "s").append(")\n");
        } else {
            b.append("FAILURES!!!\nTests run: ").append(result.getRunCount())
             .append(",  Failures: ").append(result.getFailureCount()).append('\n');
        }
        b.append("\nINSTRUMENTATION_CODE: -1\n");
        synchronized (listener) {
            channel.print(b);
            channel.flush();
        }
        System.exit(0);
    }

    /** The channel entry (called by MbBoot): {@code handshake} is "port token" as read from stdin. */
    public static void run(String handshake, ClassLoader loader, String arg) throws Exception {
        String[] parts = handshake.trim().split(" ", 2);
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(parts[0]));
        PrintStream channel = new PrintStream(socket.getOutputStream(), false, "UTF-8");
        channel.print(parts[1] + "\n");
        channel.flush();
        Thread.currentThread().setContextClassLoader(loader);
        runAll(arg, loader, channel);
    }

    public static void main(String[] args) throws Exception {
        runAll(args[0], MbInstrumentationRunner.class.getClassLoader(), System.out);
    }
}
