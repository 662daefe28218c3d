/*
 * HelperLoad - loads jprof's helper jar into a JVM through the JDK's own
 * attach API, as any tool could, so a test can drive the helper's file
 * protocol without jprof's C side: java HelperLoad.java PID JAR AGENT-ARGS.
 * Prints "loaded" once the JVM has run the agent, or the JVM's error.
 */
import com.sun.tools.attach.VirtualMachine;

public final class HelperLoad {
    private HelperLoad() {
    }

    public static void main(String[] args) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        try {
            vm.loadAgent(args[1], args[2]);
            System.out.println("loaded");
        } finally {
            vm.detach();
        }
    }
}
