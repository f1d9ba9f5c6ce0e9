"""The issue-5 Spark scenario against a fresh `tablebay serve`: Spark 3.5 local mode with Iceberg 1.10.1's REST
catalog (SigV4, signing name osstables) and S3FileIO, as docs/clients/spark.md configures it.

1. start the binary on ephemeral ports and create a table bucket (its ARN is the warehouse);
2. run dev.tablebay.spark.SparkScenario (create, INSERT, MERGE INTO, UPDATE, DELETE with delete files, the
   snapshots/files/delete_files metadata tables, ALTER TABLE ADD COLUMN, time travel, rewrite_data_files,
   DROP TABLE PURGE), which prints a PASS/FAIL line per step;
3. check through the S3 Tables control plane that the purged table and the dropped namespace are gone.

Ends with `N passed, M failed`; exit status 1 if a step failed.

    python clients/jvm/spark/run_scenario.py [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline import Scenario, build  # noqa: E402

HERE = Path(__file__).resolve().parent
NAMESPACE, TABLE = "spark_db", "events"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=480.0, help="wall-clock limit of the JVM (s)")
    args = parser.parse_args()

    classpath = build("spark")
    scenario = Scenario("spark", "spark")
    tally = scenario.tally
    try:
        cmd = ["java", f"@{HERE / 'jvm-options.txt'}", "-cp", classpath, "dev.tablebay.spark.SparkScenario"]
        scenario.run_jvm(cmd, args.timeout)

        def table_gone() -> None:
            client = scenario.s3tables
            try:
                client.get_table(tableBucketARN=scenario.warehouse, namespace=NAMESPACE, name=TABLE)
            except client.exceptions.NotFoundException:
                pass
            else:
                raise AssertionError("GetTable still finds the purged table")
            tables = client.list_tables(tableBucketARN=scenario.warehouse)["tables"]
            assert tables == [], f"ListTables: {tables}"

        def namespace_gone() -> None:
            client = scenario.s3tables
            names = [n["namespace"] for n in client.list_namespaces(tableBucketARN=scenario.warehouse)["namespaces"]]
            assert names == [], f"ListNamespaces: {names}"

        def multipart_used() -> None:
            log = scenario.server.log_path.read_text(errors="replace")
            for op in ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"):
                assert re.search(f'operation="{op}" .*status=200', log), f"no successful {op} in the server log"

        tally.check("data plane: the large file came as an S3 multipart upload", multipart_used)
        tally.check("control plane: the purged table is gone (GetTable 404, ListTables empty)", table_gone)
        tally.check("control plane: the namespace is gone (ListNamespaces empty)", namespace_gone)
    finally:
        scenario.stop()
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
