"""Compaction of a table whose delete files Spark wrote (issue 6 §3): Spark 3.5 with Iceberg 1.10.1
(docs/clients/spark.md) creates a partitioned merge-on-read table, makes 24 small INSERTs, then a DELETE and a
MERGE INTO (position delete files); `tablebay compact` rewrites it; Spark, PyIceberg and DuckDB must then read
exactly the rows Spark read before, from fewer files, with no delete file left.

Ends with `N passed, M failed`; exit status 1 if a step failed.

    python clients/jvm/spark/run_compaction.py [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from pipeline import Scenario, build  # noqa: E402
from tablebay_test import REGION  # noqa: E402
from tablebay_test.iceberg import duckdb_attach, duckdb_connect, rest_catalog  # noqa: E402
from tablebay_test.server import binary_path  # noqa: E402

HERE = Path(__file__).resolve().parent
NS, TABLE = "compact_db", "events"
SELECT = f"SELECT id, v, part FROM tablebay.{NS}.{TABLE} ORDER BY id"
COUNTS = (f"SELECT (SELECT count(*) FROM tablebay.{NS}.{TABLE}.data_files) AS data_files, "
          f"(SELECT count(*) FROM tablebay.{NS}.{TABLE}.delete_files) AS delete_files")


def run_sql(scenario: Scenario, classpath: str, sql: str, timeout: float) -> list[str]:
    cmd = ["java", f"@{HERE / 'jvm-options.txt'}", "-cp", classpath, "dev.tablebay.spark.RunSql"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=scenario.jvm_env(), start_new_session=True, errors="replace")
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    out, err = proc.communicate(sql)
    timer.cancel()
    if proc.returncode != 0:
        raise AssertionError(f"Spark exited {proc.returncode}:\n{out[-3000:]}\n{err[-3000:]}")
    return out.splitlines()


def result_of(lines: list[str], statement: str) -> list[list[str]]:
    """The rows printed after `spark-sql> <statement>` (tab-separated, after a header line)."""
    start = max(i for i, line in enumerate(lines) if line == f"spark-sql> {statement}")
    rows = []
    for line in lines[start + 2:]:
        if line.startswith("spark-sql> "):
            break
        rows.append(line.split("\t"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=480.0, help="wall-clock limit of each JVM (s)")
    args = parser.parse_args()
    classpath = build("spark")
    scenario = Scenario("spark-compaction", "spark-compact")
    tally = scenario.tally
    state: dict = {}
    try:
        inserts = "\n".join(
            f"INSERT INTO tablebay.{NS}.{TABLE} VALUES "
            + ", ".join(f"({i}, 'v{i}', {i % 3})" for i in range(batch * 50, batch * 50 + 50)) + ";"
            for batch in range(24))
        setup = f"""
CREATE NAMESPACE IF NOT EXISTS tablebay.{NS};
CREATE TABLE tablebay.{NS}.{TABLE} (id BIGINT, v STRING, part INT) USING iceberg PARTITIONED BY (part)
  TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read',
                 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read');
{inserts}
DELETE FROM tablebay.{NS}.{TABLE} WHERE id % 10 = 3;
MERGE INTO tablebay.{NS}.{TABLE} t USING (SELECT id, CASE WHEN id % 4 = 0 THEN 'del' ELSE 'upd' END AS op
  FROM range(100, 400, 7)) s ON t.id = s.id
  WHEN MATCHED AND s.op = 'del' THEN DELETE
  WHEN MATCHED THEN UPDATE SET v = concat('merged-', t.v);
{COUNTS};
{SELECT};
"""

        def spark_writes() -> None:
            lines = run_sql(scenario, classpath, setup, args.timeout)
            counts = result_of(lines, COUNTS)[0]
            state["files_before"] = int(counts[0])
            assert int(counts[1]) > 0, f"Spark wrote no delete files: {counts}"
            state["rows"] = [tuple(r) for r in result_of(lines, SELECT)]
            assert 0 < len(state["rows"]) < 24 * 50, len(state["rows"])
            print(f"  spark: {state['files_before']} data files, {counts[1]} delete files, "
                  f"{len(state['rows'])} rows", flush=True)

        tally.check("Spark writes 24 small inserts, a DELETE and a MERGE (merge-on-read)", spark_writes)

        def compact() -> None:
            arn = scenario.s3tables.get_table(tableBucketARN=scenario.warehouse, namespace=NS,
                                              name=TABLE)["tableARN"]
            server = scenario.server
            out = subprocess.run(
                [str(binary_path()), "compact", "--data-dir", str(server.data_dir), "--region", REGION,
                 "--account-id", server.account_id, "--arn-flavor", "aws", "--table-arn", arn,
                 "--target-file-size-mb", "64"],
                env=server.environment(), capture_output=True, text=True, timeout=300)
            assert out.returncode == 0, out.stderr
            report = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"  compact: {report}", flush=True)
            assert report["groupsCommitted"] == 3 and report["deleteFilesRemoved"] > 0, report

        tally.check("tablebay compact rewrites the three partitions and drops the delete files", compact)

        def spark_reads() -> None:
            lines = run_sql(scenario, classpath, f"{COUNTS};\n{SELECT};\n", args.timeout)
            counts = result_of(lines, COUNTS)[0]
            assert counts == ["3", "0"], f"data files, delete files after compaction: {counts}"
            assert [tuple(r) for r in result_of(lines, SELECT)] == state["rows"]

        tally.check("Spark reads the same rows from 3 files and no delete file", spark_reads)

        def pyiceberg_reads() -> None:
            table = rest_catalog(scenario.server, scenario.warehouse).load_table((NS, TABLE))
            rows = [(str(r["id"]), r["v"], str(r["part"])) for r in table.scan().to_arrow().to_pylist()]
            assert sorted(rows, key=lambda r: int(r[0])) == state["rows"]

        tally.check("PyIceberg reads the same rows", pyiceberg_reads)

        def duckdb_reads() -> None:
            con = duckdb_connect(scenario.work / "duckdb-ext")
            try:
                duckdb_attach(con, scenario.server, scenario.warehouse)
                rows = con.execute(f"SELECT id, v, part FROM cat.{NS}.{TABLE} ORDER BY id").fetchall()
            finally:
                con.close()
            assert [(str(a), b, str(c)) for a, b, c in rows] == state["rows"]

        tally.check("DuckDB reads the same rows", duckdb_reads)
    finally:
        scenario.stop()
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
