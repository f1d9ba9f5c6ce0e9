package dev.tablebay.spark;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Runs SQL statements against Tablebay in Spark local mode (see {@link Sessions} for the settings) and
 * prints each statement and its result rows (tab-separated, with a header line).
 *
 * <pre>
 *   RunSql [--conf key=value]... [FILE...]     statements from the files, or from stdin when none is given
 * </pre>
 *
 * Statements end with {@code ;} (outside quotes); {@code --} comments are skipped. The first failing
 * statement stops the run with exit status 1.
 */
public final class RunSql {
  private RunSql() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> conf = new LinkedHashMap<>();
    List<String> files = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--conf") && i + 1 < args.length) {
        String kv = args[++i];
        int eq = kv.indexOf('=');
        if (eq <= 0) {
          System.err.println("run-sql: --conf wants key=value, got " + kv);
          System.exit(2);
        }
        conf.put(kv.substring(0, eq), kv.substring(eq + 1));
      } else {
        files.add(args[i]);
      }
    }
    StringBuilder sql = new StringBuilder();
    if (files.isEmpty()) {
      sql.append(read(System.in));
    } else {
      for (String f : files) {
        sql.append(Files.readString(Path.of(f), StandardCharsets.UTF_8)).append('\n');
      }
    }
    List<String> statements = split(sql.toString());
    SparkSession spark = Sessions.create("tablebay-run-sql", conf);
    int status = 0;
    try {
      for (String statement : statements) {
        System.out.println("spark-sql> " + statement);
        try {
          Dataset<Row> result = spark.sql(statement);
          print(result);
        } catch (Exception e) {
          System.out.println("error: " + e.getMessage());
          e.printStackTrace(System.err);
          status = 1;
          break;
        }
      }
    } finally {
      spark.stop();
    }
    System.exit(status);
  }

  private static String read(InputStream in) throws IOException {
    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
  }

  private static void print(Dataset<Row> result) {
    String[] columns = result.columns();
    if (columns.length == 0) {
      return;
    }
    System.out.println(String.join("\t", columns));
    for (Row row : result.collectAsList()) {
      List<String> cells = new ArrayList<>();
      for (int i = 0; i < row.length(); i++) {
        cells.add(String.valueOf(row.get(i)));
      }
      System.out.println(String.join("\t", cells));
    }
  }

  /** Splits on {@code ;} outside single/double/back quotes, dropping {@code --} line comments. */
  static List<String> split(String sql) {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    char quote = 0;
    for (int i = 0; i < sql.length(); i++) {
      char c = sql.charAt(i);
      if (quote != 0) {
        current.append(c);
        if (c == quote) {
          quote = 0;
        }
      } else if (c == '\'' || c == '"' || c == '`') {
        quote = c;
        current.append(c);
      } else if (c == '-' && i + 1 < sql.length() && sql.charAt(i + 1) == '-') {
        while (i < sql.length() && sql.charAt(i) != '\n') {
          i++;
        }
        current.append('\n');
      } else if (c == ';') {
        add(out, current);
      } else {
        current.append(c);
      }
    }
    add(out, current);
    return out;
  }

  private static void add(List<String> out, StringBuilder current) {
    String s = current.toString().trim();
    if (!s.isEmpty()) {
      out.add(s);
    }
    current.setLength(0);
  }
}
