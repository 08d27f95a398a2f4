package queen.compat;

import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What the Java scenario program shares with the others: one JSON line per
 * step on stdout, and the scenario's constants (see test/compat/clients.ts).
 */
final class Report {
  static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
  static final int PER_CODEC = 10;
  static final int PARTITIONS = 2;

  interface Body {
    String run() throws Exception;
  }

  private Report() {}

  private static String quote(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }

  static void emit(String step, String status, String detail) {
    System.out.println("{\"step\":" + quote(step) + ",\"status\":" + quote(status) + ",\"detail\":" + quote(detail) + "}");
    System.out.flush();
  }

  /** Runs one step: pass with what body returns, fail with what it threw. */
  static boolean step(String name, Body body) {
    try {
      emit(name, "pass", body.run());
      return true;
    } catch (Throwable e) {
      Throwable root = e;
      while (root.getCause() != null && root != root.getCause()) root = root.getCause();
      emit(name, "fail", e + (root == e ? "" : " (cause: " + root + ")"));
      return false;
    }
  }

  static void unsupported(String name, String why) {
    emit(name, "unsupported", why);
  }

  /** Runs tick and tests cond until true, or throws naming what after ms. */
  static void waitUntil(long ms, Supplier<String> what, Runnable tick, BooleanSupplier cond) {
    long deadline = System.currentTimeMillis() + ms;
    while (true) {
      tick.run();
      if (cond.getAsBoolean()) return;
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("waited " + ms / 1000 + " s for " + what.get());
    }
  }

  static void check(boolean cond, String message) {
    if (!cond) throw new IllegalStateException(message);
  }

  static Map<String, Object> map(Object... pairs) {
    Map<String, Object> out = new java.util.HashMap<>();
    for (int i = 0; i < pairs.length; i += 2) out.put((String) pairs[i], pairs[i + 1]);
    return out;
  }
}
