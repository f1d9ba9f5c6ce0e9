"""boto3 `s3` clients for the data plane, the tables they write to, and the checksums S3 computes.

Every table's storage is the bucket `<table-uuid>--table-s3` on the S3 listener (its `warehouseLocation`).
`S3Env` is one server under test plus the table bucket and namespace its tables live in; the `s3env`
fixtures in conftest.py build it on the local-disk backend and on a remote one (a second Tablebay).

Client modes the suite runs:
- `default`: boto3 exactly as shipped (botocore 1.44.8: `request_checksum_calculation="when_supported"`, so
  a CRC32 on every PutObject/UploadPart; over plain http botocore puts it in a header and signs the payload).
- `trailer`: the same default client, but the checksum goes where botocore puts it over https: in an
  aws-chunked trailer with `x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER` (`force_trailer`).
- `when_required`: `Config(request_checksum_calculation="when_required",
  response_checksum_validation="when_required")`, the workaround other services need; here it must work too.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import zlib
from dataclasses import dataclass, field
from types import SimpleNamespace
from unittest import mock

import boto3
import botocore.auth
from botocore.config import Config
from botocore.exceptions import ClientError

from . import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY
from .expect import unique

MIB = 1024 * 1024
CHECKSUM_ALGORITHMS = ("CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256")
WHEN_REQUIRED = {"request_checksum_calculation": "when_required", "response_checksum_validation": "when_required"}
CLIENT_MODES = ("default", "trailer", "when_required")

# botocore picks its signer from AUTH_TYPE_MAPS; with awscrt importable (installed for CRC32C/CRC64NVME) it
# swaps in the CRT signers. The suite signs as plain boto3 does and opts into CRT with `crt_signers()`.
_PURE_PYTHON_SIGNERS = {
    "v4": botocore.auth.SigV4Auth,
    "v4-query": botocore.auth.SigV4QueryAuth,
    "s3v4": botocore.auth.S3SigV4Auth,
    "s3v4-query": botocore.auth.S3SigV4QueryAuth,
}
_CRT_SIGNERS = {}
try:
    from botocore.crt.auth import CRT_AUTH_TYPE_MAPS as _CRT_MAPS

    _CRT_SIGNERS = {k: v for k, v in _CRT_MAPS.items() if k in _PURE_PYTHON_SIGNERS}
except ImportError:  # awscrt missing: the CRT cases skip
    pass


def use_pure_python_signers() -> None:
    botocore.auth.AUTH_TYPE_MAPS.update(_PURE_PYTHON_SIGNERS)


@contextlib.contextmanager
def crt_signers():
    """Signs with awscrt (what boto3 does when `boto3[crt]` is installed) inside the block."""
    if not _CRT_SIGNERS:
        raise RuntimeError("awscrt is not installed")
    with mock.patch.dict(botocore.auth.AUTH_TYPE_MAPS, _CRT_SIGNERS):
        yield


def make_s3_client(endpoint_url: str, mode: str = "default", access_key: str = ACCESS_KEY_ID,
                   secret_key: str = SECRET_ACCESS_KEY, region: str = REGION, addressing_style: str = "path",
                   **config):
    """A boto3 `s3` client for the data plane in one of `CLIENT_MODES` (no retries, bounded timeouts)."""
    if mode not in CLIENT_MODES:
        raise ValueError(mode)
    # total_max_attempts=1: no retry at all (botocore's `max_attempts` in `retries` still allows one), so a
    # 5xx or a dropped connection shows as one.
    settings = dict(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=10, read_timeout=120,
                    s3={"addressing_style": addressing_style})
    if mode == "when_required":
        settings.update(WHEN_REQUIRED)
    settings.update(config)
    session = boto3.session.Session(aws_access_key_id=access_key, aws_secret_access_key=secret_key,
                                    region_name=region)
    client = session.client("s3", endpoint_url=endpoint_url, config=Config(**settings))
    if mode == "trailer":
        force_trailer(client)
    return client


def force_trailer(client) -> None:
    """Makes botocore send request checksums the way it does over https: an aws-chunked body with the
    checksum in a trailer and `STREAMING-UNSIGNED-PAYLOAD-TRAILER` (botocore only chooses that when the
    endpoint's scheme is https, httpchecksum.resolve_request_checksum_algorithm). The encoding and the
    signing stay botocore's own."""
    def to_trailer(params, model, **_):
        algorithm = params.get("context", {}).get("checksum", {}).get("request_algorithm")
        if isinstance(algorithm, dict) and model.has_streaming_input:
            algorithm["in"] = "trailer"

    client.meta.events.register("before-call.s3", to_trailer)


def wire_recorder(client) -> list[dict[str, str]]:
    """Records the headers of every request `client` sends (after signing), newest last."""
    seen: list[dict[str, str]] = []

    def record(request, **_):
        seen.append({k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()})

    client.meta.events.register("before-send.s3", record)
    return seen


# --- checksums as S3 computes them (base64 of the big-endian digest) ---

def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def checksum(algorithm: str, data: bytes) -> str:
    """`x-amz-checksum-<algorithm>` of `data`."""
    algorithm = algorithm.upper()
    if algorithm == "CRC32":
        return b64(zlib.crc32(data).to_bytes(4, "big"))
    if algorithm == "CRC32C":
        from awscrt import checksums
        return b64(checksums.crc32c(data).to_bytes(4, "big"))
    if algorithm == "CRC64NVME":
        from awscrt import checksums
        return b64(checksums.crc64nvme(data).to_bytes(8, "big"))
    if algorithm == "SHA1":
        return b64(hashlib.sha1(data).digest())
    if algorithm == "SHA256":
        return b64(hashlib.sha256(data).digest())
    raise ValueError(algorithm)


def composite_checksum(algorithm: str, parts: list[bytes]) -> str:
    """A multipart upload's COMPOSITE checksum: the checksum of the parts' raw checksums, then `-N`."""
    raw = b"".join(base64.b64decode(checksum(algorithm, p)) for p in parts)
    return f"{checksum(algorithm, raw)}-{len(parts)}"


def md5_etag(data: bytes) -> str:
    return f'"{hashlib.md5(data).hexdigest()}"'


def multipart_etag(parts: list[bytes]) -> str:
    """`"<md5 of the concatenated part MD5s>-N"`."""
    digest = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
    return f'"{digest}-{len(parts)}"'


def content_md5(data: bytes) -> str:
    return b64(hashlib.md5(data).digest())


def pattern(size: int, seed: int = 0) -> bytes:
    """Deterministic, non-repeating-looking bytes (fast for tens of MiB)."""
    block = hashlib.sha256(f"tablebay-{seed}".encode()).digest() * 2048  # 64 KiB
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += counter.to_bytes(8, "big") + block[8:]
        counter += 1
    return bytes(out[:size])


# --- tables and their storage buckets ---

@dataclass
class Table:
    name: str
    namespace: str
    arn: str
    warehouse: str

    @property
    def bucket(self) -> str:
        """The table's storage bucket on the S3 listener: `<table-uuid>--table-s3`."""
        return self.warehouse.removeprefix("s3://").split("/", 1)[0]


@dataclass
class S3Env:
    """A server under test, its `s3tables` client, and a table bucket + namespace to create tables in."""
    backend: str
    server: object
    tables: object
    bucket_arn: str
    namespace: str
    store: object | None = None          # the second Tablebay holding the bytes (remote backend)
    store_table: Table | None = None
    _clients: dict = field(default_factory=dict)

    @property
    def s3_url(self) -> str:
        return self.server.s3_url

    def client(self, mode: str = "default", **kw):
        """A cached boto3 `s3` client per (mode, settings)."""
        key = (mode, tuple(sorted((k, repr(v)) for k, v in kw.items())))
        if key not in self._clients:
            self._clients[key] = make_s3_client(self.s3_url, mode, **kw)
        return self._clients[key]

    def new_table(self, metadata: dict | None = None, name: str | None = None) -> Table:
        return create_table(self.tables, self.bucket_arn, self.namespace, metadata=metadata, name=name)


def create_table(tables, bucket_arn: str, namespace: str, metadata: dict | None = None,
                 name: str | None = None) -> Table:
    name = name or unique("t", "_")
    kw = {"metadata": metadata} if metadata else {}
    arn = tables.create_table(tableBucketARN=bucket_arn, namespace=namespace, name=name, format="ICEBERG",
                              **kw)["tableARN"]
    got = tables.get_table(tableBucketARN=bucket_arn, namespace=namespace, name=name)
    return Table(name=name, namespace=namespace, arn=arn, warehouse=got["warehouseLocation"])


def create_table_home(tables) -> SimpleNamespace:
    """A fresh table bucket and namespace (`.bucket_arn`, `.namespace`)."""
    bucket = unique("s3data")
    arn = tables.create_table_bucket(name=bucket)["arn"]
    namespace = unique("ns", "_")
    tables.create_namespace(tableBucketARN=arn, namespace=[namespace])
    return SimpleNamespace(bucket_arn=arn, namespace=namespace)


# --- assertions ---

@contextlib.contextmanager
def s3_error(code: str | tuple[str, ...], http_status: int):
    """Expects a boto3 S3 call to fail with one of the S3 error `code`s and `http_status`."""
    import pytest

    codes = (code,) if isinstance(code, str) else code
    with pytest.raises(ClientError) as info:
        yield info
    err = info.value.response
    got = err.get("Error", {}).get("Code")
    assert got in codes, f"S3 error code {got!r}, wanted {codes}: {err}"
    assert err["ResponseMetadata"]["HTTPStatusCode"] == http_status, err


def assert_absent(client, bucket: str, key: str) -> None:
    """HeadObject is 404 and ListObjectsV2 does not show the key."""
    with s3_error(("404", "NoSuchKey", "NotFound"), 404):
        client.head_object(Bucket=bucket, Key=key)
    listed = client.list_objects_v2(Bucket=bucket, Prefix=key)
    assert [o["Key"] for o in listed.get("Contents", []) if o["Key"] == key] == [], listed


def get_bytes(client, bucket: str, key: str, **kw) -> bytes:
    return client.get_object(Bucket=bucket, Key=key, **kw)["Body"].read()
