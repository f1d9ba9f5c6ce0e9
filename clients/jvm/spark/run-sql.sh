#!/usr/bin/env bash
# Runs Spark SQL statements against Tablebay (Spark 3.5 local mode, Iceberg 1.10.1 REST catalog with SigV4 and
# S3FileIO): statements from the files given, or from stdin; each statement and its result rows are printed.
#
#   TABLEBAY_ICEBERG_URI=http://127.0.0.1:8181/iceberg \
#   TABLEBAY_WAREHOUSE=arn:aws:s3tables:us-east-1:111122223333:bucket/analytics \
#   TABLEBAY_S3_ENDPOINT=http://127.0.0.1:9000 \
#   AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… AWS_REGION=us-east-1 \
#   clients/jvm/spark/run-sql.sh [--conf spark.key=value]... [FILE...]
#
# The catalog is named `tablebay` in SQL (TABLEBAY_CATALOG to change it), e.g.
#   CALL tablebay.system.rewrite_data_files(table => 'db.t');
# Optional: TABLEBAY_SIGNING_NAME (default osstables), TABLEBAY_SPARK_MASTER (default local[2]),
# TABLEBAY_SPARK_LOG_LEVEL (default WARN), JAVA_OPTS (more JVM options). The first run builds the class path
# with Maven (scripts/jvm-pipeline-build.sh spark).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
classpath="$("$here/../../../scripts/jvm-pipeline-build.sh" spark | tail -n 1)"
# shellcheck disable=SC2086 # JAVA_OPTS is a list of words on purpose
exec java @"$here/jvm-options.txt" ${JAVA_OPTS:-} -cp "$classpath" dev.tablebay.spark.RunSql "$@"
