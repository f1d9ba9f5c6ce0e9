package dev.tablebay.flink;

import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * The issue-5 Flink scenario: the product guide's CREATE CATALOG and CREATE TABLE, verbatim but for
 * Tablebay's endpoints, in a local mini-cluster — an INSERT of generated rows, a rate-limited streaming insert
 * with checkpoints every 2 s that commits several snapshots, then SELECT back (batch mode) compared row by row
 * with the rows generated. Prints {@code PASS <step>} or {@code FAIL <step>: <reason>} per step and
 * {@code flink: N passed, M failed}; exits 1 if a step failed.
 *
 * <p>Environment: TABLEBAY_ICEBERG_URI, TABLEBAY_WAREHOUSE, TABLEBAY_S3_ENDPOINT, and the guide's
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_REGION (read by the AWS SDK itself).
 */
public final class FlinkScenario {
  static final String NAMESPACE = "flink_db";
  static final String TABLE = "events";
  static final long BATCH_ROWS = 1000;
  static final long STREAM_ROWS = 3000;
  static final long STREAM_ROWS_PER_SECOND = 300;
  static final long CHECKPOINT_MS = 2000;

  private int passed;
  private int failed;

  interface Body {
    void run() throws Exception;
  }

  static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("environment variable " + name + " is not set");
    }
    return value;
  }

  /** The guide's CREATE CATALOG, with Tablebay's endpoints in the placeholders. */
  static String createCatalog() {
    return "CREATE CATALOG mycatalog WITH (\n"
        + "  'type'='iceberg', 'catalog-impl'='org.apache.iceberg.rest.RESTCatalog',\n"
        + "  'io-impl'='org.apache.iceberg.aws.s3.S3FileIO', 'uri'='" + env("TABLEBAY_ICEBERG_URI") + "',\n"
        + "  'warehouse'='" + env("TABLEBAY_WAREHOUSE") + "', 'rest.sigv4-enabled'='true',"
        + " 'rest.signing-name'='osstables',\n"
        + "  'rest.signing-region'='" + env("AWS_REGION") + "', 's3.endpoint'='" + env("TABLEBAY_S3_ENDPOINT")
        + "', 's3.path-style-access'='true')";
  }

  /** The guide's CREATE TABLE. */
  static String createTable() {
    return "CREATE TABLE IF NOT EXISTS mycatalog." + NAMESPACE + "." + TABLE
        + " (event_id STRING, event_time STRING, event_type STRING)\n"
        + "  WITH ('format-version'='2', 'write.format.default'='parquet',\n"
        + "        'write.target-file-size-bytes'='33554432', 'write.parquet.row-group-size-bytes'='8388608')";
  }

  /** The SELECT list that turns a datagen sequence number into an event; {@link #event} is its model. */
  static String eventColumns(String prefix) {
    return "CONCAT('" + prefix + "-', CAST(seq AS STRING)),"
        + " DATE_FORMAT(TIMESTAMPADD(SECOND, CAST(seq AS INT), TIMESTAMP '2026-01-01 00:00:00'),"
        + " 'yyyy-MM-dd HH:mm:ss'),"
        + " CASE MOD(seq, 3) WHEN 0 THEN 'click' WHEN 1 THEN 'view' ELSE 'purchase' END";
  }

  static String event(String prefix, long seq) {
    String time = LocalDateTime.of(2026, 1, 1, 0, 0).plusSeconds(seq)
        .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
    String type = new String[] {"click", "view", "purchase"}[(int) (seq % 3)];
    return prefix + "-" + seq + "|" + time + "|" + type;
  }

  /** Loopback only, a small mini-cluster. */
  static Configuration clusterConfig() {
    Configuration conf = new Configuration();
    conf.setString("rest.bind-address", "127.0.0.1");
    conf.setString("rest.address", "127.0.0.1");
    conf.setString("rest.bind-port", "0");
    conf.setString("jobmanager.rpc.address", "127.0.0.1");
    conf.setString("taskmanager.host", "127.0.0.1");
    conf.setString("parallelism.default", "2");
    return conf;
  }

  public static void main(String[] args) throws Exception {
    FlinkScenario s = new FlinkScenario();
    s.run();
    System.out.println("flink: " + s.passed + " passed, " + s.failed + " failed");
    System.exit(s.failed == 0 ? 0 : 1);
  }

  void step(String name, Body body) {
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

  static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }

  static void checkEq(Object want, Object got, String what) {
    if (!want.equals(got)) {
      throw new AssertionError(what + ": want " + want + ", got " + got);
    }
  }

  static List<String> rows(TableEnvironment tEnv, String sql) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<Row> it = tEnv.executeSql(sql).collect()) {
      while (it.hasNext()) {
        Row row = it.next();
        List<String> cells = new ArrayList<>();
        for (int i = 0; i < row.getArity(); i++) {
          cells.add(String.valueOf(row.getField(i)));
        }
        out.add(String.join("|", cells));
      }
    }
    return out;
  }

  void run() {
    String table = "mycatalog." + NAMESPACE + "." + TABLE;
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(clusterConfig());
    env.enableCheckpointing(CHECKPOINT_MS);
    StreamTableEnvironment stream = StreamTableEnvironment.create(env);
    TableEnvironment batch =
        TableEnvironment.create(
            EnvironmentSettings.newInstance().inBatchMode().withConfiguration(clusterConfig()).build());
    TreeSet<String> model = new TreeSet<>();
    List<Long> snapshotCounts = new ArrayList<>();

    step("CREATE CATALOG (the guide's DDL, streaming and batch environments)", () -> {
      stream.executeSql(createCatalog()).await();
      batch.executeSql(createCatalog()).await();
      check(List.of(stream.listCatalogs()).contains("mycatalog"), "mycatalog registered");
    });

    step("CREATE DATABASE " + NAMESPACE, () -> {
      stream.executeSql("CREATE DATABASE IF NOT EXISTS mycatalog." + NAMESPACE).await();
      check(rows(batch, "SHOW DATABASES IN mycatalog").contains(NAMESPACE), "SHOW DATABASES lists it");
    });

    step("CREATE TABLE (the guide's DDL)", () -> {
      stream.executeSql(createTable()).await();
      checkEq(List.of(TABLE), rows(batch, "SHOW TABLES IN mycatalog." + NAMESPACE), "SHOW TABLES");
      List<String> columns = rows(batch, "DESCRIBE " + table).stream().map(r -> r.split("\\|")[0]).toList();
      checkEq(List.of("event_id", "event_time", "event_type"), columns, "columns");
      // Again: IF NOT EXISTS on an existing table is a no-op.
      stream.executeSql(createTable()).await();
    });

    step("INSERT of " + BATCH_ROWS + " generated rows", () -> {
      stream.executeSql("CREATE TEMPORARY TABLE batch_gen (seq BIGINT) WITH ('connector'='datagen',"
          + " 'fields.seq.kind'='sequence', 'fields.seq.start'='1', 'fields.seq.end'='" + BATCH_ROWS + "')")
          .await();
      TableResult result = stream.executeSql(
          "INSERT INTO " + table + " SELECT " + eventColumns("batch") + " FROM batch_gen");
      result.await();
      for (long seq = 1; seq <= BATCH_ROWS; seq++) {
        model.add(event("batch", seq));
      }
      checkEq(List.of(String.valueOf(BATCH_ROWS)), rows(batch, "SELECT count(*) FROM " + table), "count");
      snapshotCounts.add(snapshotCount(batch, table));
      check(snapshotCounts.get(0) >= 1, "the INSERT committed");
    });

    step("streaming INSERT (datagen " + STREAM_ROWS_PER_SECOND + " rows/s, checkpoint every "
        + CHECKPOINT_MS + " ms) commits several snapshots", () -> {
      stream.executeSql("CREATE TEMPORARY TABLE stream_gen (seq BIGINT) WITH ('connector'='datagen',"
          + " 'rows-per-second'='" + STREAM_ROWS_PER_SECOND + "', 'fields.seq.kind'='sequence',"
          + " 'fields.seq.start'='1', 'fields.seq.end'='" + STREAM_ROWS + "')").await();
      TableResult result = stream.executeSql(
          "INSERT INTO " + table + " SELECT " + eventColumns("stream") + " FROM stream_gen");
      result.await();
      for (long seq = 1; seq <= STREAM_ROWS; seq++) {
        model.add(event("stream", seq));
      }
      long snapshots = snapshotCount(batch, table);
      snapshotCounts.add(snapshots);
      long added = snapshots - snapshotCounts.get(0);
      check(added >= 3, "the streaming job committed at least 3 snapshots, got " + added);
      System.out.println("streaming insert committed " + added + " snapshots");
    });

    step("SELECT back: every row, exactly once", () -> {
      List<String> got = rows(batch, "SELECT event_id, event_time, event_type FROM " + table);
      checkEq((long) model.size(), (long) got.size(), "row count");
      TreeSet<String> distinct = new TreeSet<>(got);
      checkEq(got.size(), distinct.size(), "no duplicates");
      checkEq(model, distinct, "rows");
    });

    step("SELECT back: aggregates per event_type", () -> {
      TreeMap<String, Long> want = new TreeMap<>();
      for (String r : model) {
        want.merge(r.split("\\|")[2], 1L, Long::sum);
      }
      TreeMap<String, Long> got = new TreeMap<>();
      for (String r : rows(batch, "SELECT event_type, count(*) FROM " + table + " GROUP BY event_type")) {
        String[] cells = r.split("\\|");
        got.put(cells[0], Long.parseLong(cells[1]));
      }
      checkEq(want, got, "counts per event_type");
    });

    step("snapshots metadata table: appends, each one's parent the previous", () -> {
      List<String> snaps = rows(batch, "SELECT snapshot_id, parent_id, operation FROM mycatalog." + NAMESPACE
          + ".`" + TABLE + "$snapshots` ORDER BY committed_at, snapshot_id");
      checkEq(snapshotCounts.get(1), (long) snaps.size(), "snapshot count");
      for (int i = 0; i < snaps.size(); i++) {
        String[] cells = snaps.get(i).split("\\|");
        checkEq("append", cells[2], "operation of snapshot " + i);
        checkEq(i == 0 ? "null" : snaps.get(i - 1).split("\\|")[0], cells[1], "parent of snapshot " + i);
      }
    });

    String upserts = "mycatalog." + NAMESPACE + ".upserts";
    step("upsert table (primary key, write.upsert.enabled): equality deletes, latest values read back", () -> {
      stream.executeSql("CREATE TABLE " + upserts + " (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)"
          + " WITH ('format-version'='2', 'write.upsert.enabled'='true')").await();
      stream.executeSql("INSERT INTO " + upserts + " VALUES (1, 'a'), (2, 'b'), (3, 'c')").await();
      stream.executeSql("INSERT INTO " + upserts + " VALUES (2, 'B'), (4, 'd')").await();
      stream.executeSql("INSERT INTO " + upserts + " VALUES (3, 'C'), (2, 'BB')").await();
      checkEq(List.of("1|a", "2|BB", "3|C", "4|d"), rows(batch, "SELECT id, v FROM " + upserts + " ORDER BY id"),
          "latest value per key");
      // content: 0 data, 1 position deletes, 2 equality deletes.
      List<String> content = rows(batch, "SELECT DISTINCT content FROM mycatalog." + NAMESPACE
          + ".`upserts$files` ORDER BY content");
      check(content.contains("2"), "equality delete files written: contents " + content);
      checkEq(List.of("3"), rows(batch, "SELECT count(*) FROM mycatalog." + NAMESPACE + ".`upserts$snapshots`"),
          "one snapshot per INSERT");
    });
  }

  static long snapshotCount(TableEnvironment tEnv, String table) throws Exception {
    return Long.parseLong(rows(tEnv, "SELECT count(*) FROM " + table.replace("." + TABLE, ".`" + TABLE
        + "$snapshots`")).get(0));
  }
}
