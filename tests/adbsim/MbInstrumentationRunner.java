// The simulated device's instrumentation runner: runs ONE JUnit 4 test method on the host JVM and
// prints the raw instrumentation status protocol that `am instrument -r` prints on a device
// (status codes of androidx.test's InstrumentationResultPrinter: 1 start, 0 ok, -2 failure,
// -3 ignored, -4 assumption failure). Usage: java MbInstrumentationRunner pkg.Class#method
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunListener;

public final class MbInstrumentationRunner extends RunListener {
    private int current = 0;
    private int numTests = 1;
    private Failure failure;
    private boolean assumption;

    private static String trace(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    private void block(Description d, String stack, int code) {
        StringBuilder b = new StringBuilder();
        b.append("INSTRUMENTATION_STATUS: class=").append(d.getClassName()).append('\n');
        b.append("INSTRUMENTATION_STATUS: current=").append(current).append('\n');
        b.append("INSTRUMENTATION_STATUS: id=AndroidJUnitRunner\n");
        b.append("INSTRUMENTATION_STATUS: numtests=").append(numTests).append('\n');
        if (stack != null) {
            b.append("INSTRUMENTATION_STATUS: stack=").append(stack);
            if (!stack.endsWith("\n")) b.append('\n');
        }
        b.append("INSTRUMENTATION_STATUS: stream=\n");
        b.append("INSTRUMENTATION_STATUS: test=").append(d.getMethodName()).append('\n');
        b.append("INSTRUMENTATION_STATUS_CODE: ").append(code).append('\n');
        System.out.print(b);
        System.out.flush();
    }

    @Override public void testStarted(Description d) {
        current++;
        failure = null;
        assumption = false;
        block(d, null, 1);
    }

    @Override public void testFailure(Failure f) { failure = f; }

    @Override public void testAssumptionFailure(Failure f) { failure = f; assumption = true; }

    @Override public void testIgnored(Description d) {
        current++;
        block(d, null, 1);
        block(d, null, -3);
    }

    @Override public void testFinished(Description d) {
        if (failure == null) block(d, null, 0);
        else block(d, trace(failure.getException()), assumption ? -4 : -2);
    }

    public static void main(String[] args) throws Exception {
        String[] target = args[0].split("#", 2);
        Request request = target.length == 2
            ? Request.method(Class.forName(target[0]), target[1])
            : Request.aClass(Class.forName(target[0]));
        JUnitCore core = new JUnitCore();
        MbInstrumentationRunner listener = new MbInstrumentationRunner();
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
        System.out.print(b);
        System.out.flush();
    }
}
