"""The AWS SDK for Java v2 (clients/jvm, SDK >= 2.30) at its default checksum settings, with no
`-Daws.requestChecksumCalculation` / `-Daws.responseChecksumValidation` flags, writes and reads a multipart
file and a small one through the data plane, on both blob backends.

The jar is built by `scripts/jvm-build.sh` (scripts/test.sh stage `jvm-build`); `TABLEBAY_JVM_JAR` points
at another. Without a jar (or without `java`) the test fails, naming the build step: it is never skipped
silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY

JAR = Path(os.environ.get("TABLEBAY_JVM_JAR")
           or Path(__file__).resolve().parents[1] / "jvm" / "target" / "tablebay-s3-check.jar")


def run_jvm_check(s3_url: str, bucket: str, multipart_mib: int = 24) -> subprocess.CompletedProcess:
    java = shutil.which("java")
    assert java, "java is not on PATH (Java 17 is needed for clients/jvm)"
    assert JAR.is_file(), f"{JAR} is missing: build it with scripts/jvm-build.sh"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("AWS_") and k not in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")}
    env.update(
        TABLEBAY_S3_ENDPOINT=s3_url,
        TABLEBAY_S3_BUCKET=bucket,
        TABLEBAY_S3_ACCESS_KEY_ID=ACCESS_KEY_ID,
        TABLEBAY_S3_SECRET_ACCESS_KEY=SECRET_ACCESS_KEY,
        TABLEBAY_S3_REGION=REGION,
        TABLEBAY_S3_MULTIPART_MIB=str(multipart_mib),
        # The SDK must not find a developer's ~/.aws settings (which could set checksum options).
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_EC2_METADATA_DISABLED="true",
    )
    return subprocess.run([java, "-Xmx512m", "-jar", str(JAR)], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=240)


def test_java_sdk_v2_default_checksums(s3env_both):
    table = s3env_both.new_table()
    proc = run_jvm_check(s3env_both.s3_url, table.bucket)
    print(proc.stdout)
    lines = proc.stdout.strip().splitlines()
    assert lines and lines[-1].endswith(" failed"), f"no summary line\n{proc.stdout}\n{proc.stderr}"
    failures = [line for line in lines if line.startswith("FAIL ")]
    assert proc.returncode == 0 and not failures, "\n".join(failures) + f"\n{proc.stdout}\n{proc.stderr[-3000:]}"
    assert lines[-1] == "10 passed, 0 failed", lines[-1]
