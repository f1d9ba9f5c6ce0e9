"""The AWS CLI's high-level `aws s3` commands (cp, ls, rm) against the data plane with `--endpoint-url`:
a large file (TABLEBAY_TEST_LARGE_MIB, default 200 MiB) up and down with byte equality — the CLI splits
it into 8 MiB parts with its default settings — plus listing and removal."""

from __future__ import annotations

import filecmp
import hashlib
import os
import subprocess

import pytest

from tablebay_test.cli import AwsCli, aws_executable
from tablebay_test.s3 import MIB

LARGE_MIB = int(os.environ.get("TABLEBAY_TEST_LARGE_MIB", "200"))


class AwsS3Cli(AwsCli):
    """`aws s3 …` (high-level commands) with the same isolated environment as `aws s3tables`."""

    def s3(self, *args: str, timeout: float = 600) -> str:
        cmd = [aws_executable(), "s3", *args, "--endpoint-url", self.endpoint_url]
        if args[0] in ("cp", "mv", "sync"):
            cmd.append("--no-progress")
        proc = subprocess.run(cmd, env=self.environment(), stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout)
        if proc.returncode != 0:
            raise AssertionError(f"aws s3 {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return proc.stdout


@pytest.fixture(scope="module")
def aws(s3env, tmp_path_factory):
    return AwsS3Cli(s3env.s3_url, tmp_path_factory.mktemp("aws-s3-home"))


@pytest.fixture(scope="module")
def table(s3env):
    return s3env.new_table()


def _random_file(path, mib: int) -> str:
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for _ in range(mib):
            block = os.urandom(MIB)
            digest.update(block)
            f.write(block)
        tail = os.urandom(12345)  # not a multiple of the part size
        digest.update(tail)
        f.write(tail)
    return digest.hexdigest()


def test_cp_large_file_up_and_down(aws, s3env, table, tmp_path):
    src, dst = tmp_path / "large.bin", tmp_path / "large.back"
    _random_file(src, LARGE_MIB)
    url = f"s3://{table.bucket}/cli/large.bin"
    aws.s3("cp", str(src), url)
    head = s3env.client().head_object(Bucket=table.bucket, Key="cli/large.bin")
    assert head["ContentLength"] == src.stat().st_size
    parts = -(-src.stat().st_size // (8 * MIB))
    assert head["ETag"].endswith(f'-{parts}"'), head["ETag"]  # the CLI's default 8 MiB parts
    aws.s3("cp", url, str(dst))
    assert filecmp.cmp(src, dst, shallow=False)


def test_cp_small_ls_and_rm(aws, s3env, table, tmp_path):
    for name, body in (("a.txt", b"alpha"), ("b.txt", b"bravo")):
        (tmp_path / name).write_bytes(body)
        aws.s3("cp", str(tmp_path / name), f"s3://{table.bucket}/cli/small/{name}")
    listing = aws.s3("ls", f"s3://{table.bucket}/cli/small/")
    assert "a.txt" in listing and "b.txt" in listing
    aws.s3("cp", f"s3://{table.bucket}/cli/small/a.txt", str(tmp_path / "a.back"))
    assert (tmp_path / "a.back").read_bytes() == b"alpha"
    aws.s3("rm", "--recursive", f"s3://{table.bucket}/cli/small/")
    # (`aws s3 ls` of an empty prefix exits 1, so the check after `rm` is boto3's.)
    left = s3env.client().list_objects_v2(Bucket=table.bucket, Prefix="cli/small/")
    assert left.get("Contents", []) == []


def test_sync_directory(aws, table, tmp_path):
    src = tmp_path / "tree"
    for rel in ("x/1.parquet", "x/2.parquet", "y/3.json"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(rel.encode() * 100)
    aws.s3("sync", str(src), f"s3://{table.bucket}/cli/tree")
    back = tmp_path / "back"
    aws.s3("sync", f"s3://{table.bucket}/cli/tree", str(back))
    for rel in ("x/1.parquet", "x/2.parquet", "y/3.json"):
        assert (back / rel).read_bytes() == (src / rel).read_bytes()
