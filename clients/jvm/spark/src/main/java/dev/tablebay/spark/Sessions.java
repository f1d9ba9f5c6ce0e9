package dev.tablebay.spark;

import java.nio.file.Files;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * A local-mode SparkSession whose Iceberg catalog is Tablebay's REST catalog: SigV4-signed requests (signing
 * name {@code osstables}), the table bucket ARN as warehouse, and S3FileIO on Tablebay's S3 endpoint with
 * path-style addressing. Credentials come from the AWS SDK's default chain (AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY / AWS_REGION), as the product guide configures it.
 *
 * <p>Settings, from the environment: TABLEBAY_ICEBERG_URI (e.g. http://127.0.0.1:8181/iceberg),
 * TABLEBAY_WAREHOUSE (the table bucket ARN), TABLEBAY_S3_ENDPOINT (e.g. http://127.0.0.1:9000), AWS_REGION,
 * and optionally TABLEBAY_CATALOG (the catalog's name in SQL, default {@code tablebay}) and
 * TABLEBAY_SIGNING_NAME (default {@code osstables}).
 */
public final class Sessions {
  private Sessions() {}

  public static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("environment variable " + name + " is not set");
    }
    return value;
  }

  public static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  public static String catalogName() {
    return env("TABLEBAY_CATALOG", "tablebay");
  }

  /** The catalog's properties, without the {@code spark.sql.catalog.<name>.} prefix. */
  public static Map<String, String> catalogProperties() {
    String region = env("AWS_REGION");
    return Map.ofEntries(
        Map.entry("type", "rest"),
        Map.entry("uri", env("TABLEBAY_ICEBERG_URI")),
        Map.entry("warehouse", env("TABLEBAY_WAREHOUSE")),
        Map.entry("rest.sigv4-enabled", "true"),
        Map.entry("rest.signing-name", env("TABLEBAY_SIGNING_NAME", "osstables")),
        Map.entry("rest.signing-region", region),
        Map.entry("io-impl", "org.apache.iceberg.aws.s3.S3FileIO"),
        Map.entry("s3.endpoint", env("TABLEBAY_S3_ENDPOINT")),
        Map.entry("s3.path-style-access", "true"),
        Map.entry("client.region", region));
  }

  /** {@code extraConf}: more Spark settings ({@code key=value}), e.g. from the command line. */
  public static SparkSession create(String appName, Map<String, String> extraConf) throws Exception {
    String catalog = catalogName();
    SparkSession.Builder builder =
        SparkSession.builder()
            .appName(appName)
            .master(env("TABLEBAY_SPARK_MASTER", "local[2]"))
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.catalogImplementation", "in-memory")
            .config(
                "spark.sql.warehouse.dir",
                Files.createTempDirectory("tablebay-spark-warehouse").toUri().toString())
            .config(
                "spark.sql.extensions",
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.sql.catalog." + catalog, "org.apache.iceberg.spark.SparkCatalog");
    for (Map.Entry<String, String> e : catalogProperties().entrySet()) {
      builder.config("spark.sql.catalog." + catalog + "." + e.getKey(), e.getValue());
    }
    for (Map.Entry<String, String> e : extraConf.entrySet()) {
      builder.config(e.getKey(), e.getValue());
    }
    SparkSession spark = builder.getOrCreate();
    spark.sparkContext().setLogLevel(env("TABLEBAY_SPARK_LOG_LEVEL", "WARN"));
    return spark;
  }
}
