"""A power loss, not just a killed process: every acknowledged write survives when the page cache is lost too.

The server's data directory lives on ext4 on a loop device (Linux `losetup`, backed by an image file). The
filesystem is mounted with `commit=600`, so its journal reaches the device only when something syncs. The
server takes writes: objects from 4 KiB to 20 MiB, a multipart upload, and Iceberg commits from PyIceberg. Then
it is killed with kill -9, and the image file is copied at once. The copy holds exactly what the filesystem had
written to its device: what a disk holds after a power cut, with the page cache gone. The copy is mounted again
(ext4 replays its journal, as after a crash), a server starts on it, and everything acknowledged must read back
byte-exact.

The control run (`--durability relaxed`, which skips the syncs) must lose acknowledged writes on the same
procedure: it shows that the crash image really drops what was not synced, so the first run proves something.

Needs root (losetup, mount) and e2fsprogs; skipped otherwise. CI runs as root.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest
from botocore.exceptions import ClientError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test.clients import make_client
from tablebay_test.iceberg import rest_catalog
from tablebay_test.s3 import MIB, create_table, create_table_home, make_s3_client, pattern
from tablebay_test.server import TablebayServer

IMAGE_MIB = 512
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "note", StringType(), required=False),
)
ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string())])
# Sizes straddling the 8 MiB batch of the blob writer: small files written at once, large ones streamed.
OBJECT_SIZES = [4096, 1, 100_000, 4096, MIB, 9 * MIB, 4096, 20 * MIB, 3 * MIB, 4096] * 3
APPENDS = 6


def _missing_tools() -> str | None:
    if os.geteuid() != 0:
        return "needs root for losetup and mount"
    for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    return None


pytestmark = pytest.mark.skipif(_missing_tools() is not None, reason=_missing_tools() or "")


def run(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


class LoopDisk:
    """ext4 on a loop device over `image`, mounted at `mountpoint`."""

    def __init__(self, image: Path, mountpoint: Path):
        self.image, self.mountpoint = image, mountpoint
        self.device: str | None = None

    def format(self) -> None:
        with open(self.image, "wb") as f:
            f.truncate(IMAGE_MIB * MIB)
        run("mkfs.ext4", "-q", "-F", str(self.image))

    def mount(self) -> None:
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        self.device = run("losetup", "--find", "--show", str(self.image))
        # commit=600: the journal is written out only when a sync asks for it (or after ten minutes), so nothing
        # unsynced reaches the device by chance before the crash image is taken.
        run("mount", "-t", "ext4", "-o", "commit=600", self.device, str(self.mountpoint))

    def power_cut(self, copy: Path) -> "LoopDisk":
        """The device's blocks as they are now, as a new disk at the same mount point; this one is discarded.

        The loop device writes into the image file as the filesystem submits blocks, so the file holds what
        reached the 'disk'; dirty pages of the mounted filesystem are not in it. The old filesystem is then
        detached lazily: whatever it still flushes goes to the old image, which is thrown away."""
        shutil.copyfile(self.image, copy)
        self.discard()
        return LoopDisk(copy, self.mountpoint)

    def discard(self) -> None:
        if self.device is None:
            return
        subprocess.run(["umount", "-l", str(self.mountpoint)], capture_output=True)
        subprocess.run(["losetup", "-d", self.device], capture_output=True)
        self.device = None


def take_writes(srv: TablebayServer) -> dict:
    """Acknowledged writes of every kind, recorded as the client saw them acknowledged."""
    tables = make_client(srv.tables_url)
    home = create_table_home(tables)
    table = create_table(tables, home.bucket_arn, home.namespace)
    s3 = make_s3_client(srv.s3_url)
    objects = {}
    for i, size in enumerate(OBJECT_SIZES):
        key = f"data/object-{i}"
        body = pattern(size, seed=i)
        s3.put_object(Bucket=table.bucket, Key=key, Body=body)
        objects[key] = hashlib.sha256(body).hexdigest()
    parts = [pattern(5 * MIB, seed=100 + n) for n in range(3)]
    upload = s3.create_multipart_upload(Bucket=table.bucket, Key="data/multipart")
    etags = [s3.upload_part(Bucket=table.bucket, Key="data/multipart", UploadId=upload["UploadId"],
                            PartNumber=n + 1, Body=part)["ETag"] for n, part in enumerate(parts)]
    s3.complete_multipart_upload(
        Bucket=table.bucket, Key="data/multipart", UploadId=upload["UploadId"],
        MultipartUpload={"Parts": [{"PartNumber": n + 1, "ETag": e} for n, e in enumerate(etags)]})
    objects["data/multipart"] = hashlib.sha256(b"".join(parts)).hexdigest()

    catalog = rest_catalog(srv, home.bucket_arn)
    events = catalog.create_table((home.namespace, "events"), SCHEMA)
    snapshots = []
    for n in range(APPENDS):
        batch = pa.Table.from_pylist([{"id": n * 100 + i, "note": f"append-{n}"} for i in range(100)],
                                     schema=ARROW_SCHEMA)
        events.append(batch)
        snapshots.append(events.current_snapshot().snapshot_id)
    return {"home": home, "table": table, "objects": objects, "snapshots": snapshots}


def lost_writes(srv: TablebayServer, taken: dict) -> list[str]:
    """What of `taken` the server no longer has, or has altered."""
    lost = []
    tables = make_client(srv.tables_url)
    try:
        tables.get_table(tableBucketARN=taken["home"].bucket_arn, namespace=taken["home"].namespace,
                         name=taken["table"].name)
    except ClientError as e:
        return [f"the table bucket or table: {e.response['Error']['Code']}"]
    s3 = make_s3_client(srv.s3_url)
    for key, digest in taken["objects"].items():
        try:
            body = s3.get_object(Bucket=taken["table"].bucket, Key=key)["Body"].read()
        except ClientError as e:
            lost.append(f"{key}: {e.response['Error']['Code']}")
            continue
        if hashlib.sha256(body).hexdigest() != digest:
            lost.append(f"{key}: {len(body)} bytes that differ from what was acknowledged")
    try:
        events = rest_catalog(srv, taken["home"].bucket_arn).load_table((taken["home"].namespace, "events"))
    except Exception as e:  # noqa: BLE001 - any failure to load is a loss, reported as such
        return lost + [f"the Iceberg table: {e}"]
    have = {s.snapshot_id for s in events.snapshots()}
    lost += [f"snapshot {s}" for s in taken["snapshots"] if s not in have]
    rows = events.scan().to_arrow().num_rows
    if rows != APPENDS * 100:
        lost.append(f"{rows} rows instead of {APPENDS * 100}")
    return lost


def crash_and_recover(tmp_path: Path, durability: str) -> tuple[list[str], str]:
    disk = LoopDisk(tmp_path / "disk.img", tmp_path / "mnt")
    disk.format()
    disk.mount()
    srv = TablebayServer(tmp_path / "run", extra_args=("--durability", durability))
    srv.workdir.mkdir(parents=True, exist_ok=True)
    srv.data_dir = disk.mountpoint / "data"
    recovered_disk = disk
    try:
        srv.start()
        taken = take_writes(srv)
        srv.kill()
        recovered_disk = disk.power_cut(tmp_path / "after-power-cut.img")
        recovered_disk.mount()
        srv.start()
        return lost_writes(srv, taken), srv.log_tail()
    finally:
        srv.stop()
        recovered_disk.discard()
        disk.discard()


def test_acknowledged_writes_survive_a_power_cut(tmp_path):
    lost, log = crash_and_recover(tmp_path, "full")
    assert lost == [], f"acknowledged writes lost with the page cache: {lost}\n{log}"


def test_the_power_cut_drops_unsynced_writes(tmp_path):
    """The control: without syncs the same procedure loses acknowledged writes (so the test above could fail)."""
    lost, _ = crash_and_recover(tmp_path, "relaxed")
    assert lost, "a relaxed server lost nothing: the crash image kept unsynced writes, and proves nothing"
