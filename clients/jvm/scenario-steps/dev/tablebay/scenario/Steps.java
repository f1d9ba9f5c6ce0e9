package dev.tablebay.scenario;

/**
 * The step protocol of the JVM pipeline scenarios (clients/jvm/spark, clients/jvm/flink; compiled into both by
 * build-helper-maven-plugin): a line {@code PASS <step>} or {@code FAIL <step>: <reason>} per step, which
 * clients/jvm/pipeline.py counts, and a closing {@code <name>: N passed, M failed}.
 */
public class Steps {
  private int passed;
  private int failed;

  /** A step's body; any exception or assertion error fails the step (and only it). */
  public interface Body {
    void run() throws Exception;
  }

  public void step(String name, Body body) {
    try {
      body.run();
      passed++;
      System.out.println("PASS " + name);
    } catch (Throwable e) {
      failed++;
      String msg = String.valueOf(e.getMessage()).replace('\n', ' ');
      System.out.println("FAIL " + name + ": " + e.getClass().getSimpleName() + ": " + msg);
      e.printStackTrace(System.err);
    }
    System.out.flush();
  }

  /** Prints the closing line; the exit status for it (1 if a step failed). */
  public int summary(String name) {
    System.out.println(name + ": " + passed + " passed, " + failed + " failed");
    return failed == 0 ? 0 : 1;
  }

  public static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }

  public static void checkEq(Object want, Object got, String what) {
    if (!want.equals(got)) {
      throw new AssertionError(what + ": want " + want + ", got " + got);
    }
  }
}
