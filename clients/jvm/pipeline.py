"""What the Spark and Flink scenario drivers share: a fresh `tablebay serve`, a table bucket, the JVM scenario
run with the product guide's settings in its environment, and the tally of its step lines.

A scenario's JVM main prints `PASS <step>` or `FAIL <step>: <reason>` per step; a driver adds its own checks
through `Tally.check` and ends with the one `N passed, M failed` line of the whole scenario.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "python"))

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY  # noqa: E402
from tablebay_test.clients import make_client  # noqa: E402
from tablebay_test.server import TablebayServer  # noqa: E402

__all__ = ["Tally", "Scenario", "make_client", "REGION"]


class Tally:
    def __init__(self, name: str):
        self.name = name
        self.passed = 0
        self.failed = 0

    def record(self, ok: bool, step: str, reason: str = "") -> None:
        if ok:
            self.passed += 1
            print(f"PASS {step}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {step}: {reason}", flush=True)

    def check(self, step: str, fn: Callable[[], object]) -> None:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is a reported step, not a crash
            self.record(False, step, f"{type(e).__name__}: {e}")
        else:
            self.record(True, step)

    def summary(self) -> int:
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 and self.passed > 0 else 1


def build(name: str) -> str:
    """The class path of clients/jvm/NAME (built with Maven if needed)."""
    out = subprocess.run([str(REPO / "scripts" / "jvm-pipeline-build.sh"), name], check=True,
                         stdout=subprocess.PIPE, text=True)
    return out.stdout.strip().splitlines()[-1]


class Scenario:
    """A fresh server (root credentials of the test suite) and one table bucket. `arn_flavor`: "aws"
    (`arn:aws:s3tables:…`) or None for the server's default, the OSS form (`acs:osstables:…`)."""

    def __init__(self, name: str, bucket: str, arn_flavor: str | None = "aws"):
        self.name = name
        self.tally = Tally(name)
        self.work = Path(tempfile.mkdtemp(prefix=f"tablebay-{name}-"))
        self.server = TablebayServer(self.work, arn_flavor=arn_flavor)
        self.server.start()
        self.s3tables = make_client(self.server.tables_url)
        self.warehouse = self.s3tables.create_table_bucket(name=f"{bucket}-{int(time.time())}")["arn"]
        print(f"{name}: server {self.server.tables_url} (s3 {self.server.s3_url}), warehouse {self.warehouse}",
              flush=True)

    def jvm_env(self) -> dict[str, str]:
        """The client's environment: the guide's credentials variables and Tablebay's endpoints, nothing from
        the developer's ~/.aws."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLEBAY_"))}
        empty = self.work / "aws"
        empty.mkdir(exist_ok=True)
        for name in ("config", "credentials"):
            (empty / name).write_text("")
        env.update({
            "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
            "AWS_REGION": REGION,
            "AWS_CONFIG_FILE": str(empty / "config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(empty / "credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "TABLEBAY_ICEBERG_URI": f"{self.server.tables_url}/iceberg",
            "TABLEBAY_TABLES_ENDPOINT": self.server.tables_url,
            "TABLEBAY_WAREHOUSE": self.warehouse,
            "TABLEBAY_S3_ENDPOINT": self.server.s3_url,
        })
        return env

    def run_jvm(self, cmd: list[str], timeout: float) -> int:
        """Runs the JVM scenario, echoing its output and counting its PASS/FAIL lines into the tally."""
        log_path = self.work / f"{self.name}-jvm.log"
        failed_before = self.tally.failed
        print(f"{self.name}: {' '.join(cmd[:1] + ['…', cmd[-1]])} (limit {timeout:.0f} s, JVM log {log_path})",
              flush=True)
        with open(log_path, "w", encoding="utf-8") as log:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=self.jvm_env(),
                                    start_new_session=True, errors="replace")
            # A hung JVM must not hang the test command: killed at the deadline (which ends the loop below).
            timer = threading.Timer(timeout, proc.kill)
            timer.start()
            assert proc.stdout is not None
            for line in proc.stdout:
                line = line.rstrip("\n")
                if line.startswith("PASS "):
                    self.tally.record(True, line[5:])
                elif line.startswith("FAIL "):
                    step, _, reason = line[5:].partition(": ")
                    self.tally.record(False, step, reason)
                else:
                    print(f"  {line}", flush=True)
            rc = proc.wait()
            timer.cancel()
        # The JVM exits 1 after a failed step (already counted); any other way of ending is a failure of its own.
        if rc != 0 and not (rc == 1 and self.tally.failed > failed_before):
            self.tally.record(False, f"{self.name} JVM exits 0", f"exit {rc}; last lines of {log_path}:\n"
                              + "\n".join(log_path.read_text(errors="replace").splitlines()[-25:]))
        return rc

    def stop(self) -> None:
        self.server.stop()
