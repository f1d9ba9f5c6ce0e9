"""The issue-5 Flink scenario against a fresh `tablebay serve`: Flink 1.20 in a local mini-cluster with Iceberg
1.10.1's Flink runtime, configured with the product guide's CREATE CATALOG / CREATE TABLE (docs/clients/flink.md).

1. start the binary on ephemeral ports (default ARN flavour, as the OSS guide has it) and create a table bucket
   (its ARN, `acs:osstables:…`, is the warehouse);
2. run dev.tablebay.flink.FlinkScenario (CREATE CATALOG, CREATE DATABASE, CREATE TABLE, an INSERT of generated
   rows, a rate-limited streaming INSERT with checkpoints that commits several snapshots, SELECT back), which
   prints a PASS/FAIL line per step;
3. read the table back with another client, PyIceberg, and check what the guide's DDL asked for (format
   version 2, the write properties) and the rows Flink wrote.

Ends with `N passed, M failed`; exit status 1 if a step failed.

    python clients/jvm/flink/run_scenario.py [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline import Scenario, build  # noqa: E402
from tablebay_test.iceberg import rest_catalog  # noqa: E402

HERE = Path(__file__).resolve().parent
NAMESPACE, TABLE = "flink_db", "events"
BATCH_ROWS, STREAM_ROWS = 1000, 3000  # as in FlinkScenario.java


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=480.0, help="wall-clock limit of the JVM (s)")
    args = parser.parse_args()

    classpath = build("flink")
    # The server's default ARN flavour: the guide's warehouse is an OSS Tables ARN (acs:osstables:…).
    scenario = Scenario("flink", "flink", arn_flavor=None)
    tally = scenario.tally
    try:
        cmd = ["java", f"@{HERE / 'jvm-options.txt'}", "-cp", classpath, "dev.tablebay.flink.FlinkScenario"]
        scenario.run_jvm(cmd, args.timeout)

        def table_as_the_guide_asked() -> None:
            client = scenario.s3tables
            t = client.get_table(tableBucketARN=scenario.warehouse, namespace=NAMESPACE, name=TABLE)
            assert t["format"] == "ICEBERG", t
            table = rest_catalog(scenario.server, scenario.warehouse).load_table((NAMESPACE, TABLE))
            assert table.metadata.format_version == 2, table.metadata.format_version
            props = table.properties
            for key, want in {"write.format.default": "parquet", "write.target-file-size-bytes": "33554432",
                              "write.parquet.row-group-size-bytes": "8388608"}.items():
                assert props.get(key) == want, f"{key}={props.get(key)!r}"
            assert [f.name for f in table.schema().fields] == ["event_id", "event_time", "event_type"]

        def rows_read_by_pyiceberg() -> None:
            table = rest_catalog(scenario.server, scenario.warehouse).load_table((NAMESPACE, TABLE))
            ids = table.scan(selected_fields=("event_id",)).to_arrow().column("event_id").to_pylist()
            want = {f"batch-{i}" for i in range(1, BATCH_ROWS + 1)} | {f"stream-{i}" for i in range(1, STREAM_ROWS + 1)}
            assert len(ids) == len(want), f"{len(ids)} rows, want {len(want)}"
            assert set(ids) == want, f"missing {sorted(want - set(ids))[:5]}, unexpected {sorted(set(ids) - want)[:5]}"

        tally.check("PyIceberg: the table has the guide's format version, properties and schema",
                    table_as_the_guide_asked)
        tally.check("PyIceberg: reads every row Flink wrote, exactly once", rows_read_by_pyiceberg)
    finally:
        scenario.stop()
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
