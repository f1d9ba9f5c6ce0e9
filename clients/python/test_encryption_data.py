"""Encryption at rest with real clients (issue 8, docs/encryption.md): PyIceberg writes and DuckDB reads an
AES256 table and an `aws:kms` table with no client-side change; the files on disk are ciphertext (no Parquet
magic, no metadata JSON); boto3 sees `ServerSideEncryption` on PUT/HEAD/GET answers and is refused another mode.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from botocore.exceptions import ClientError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test.expect import purge_bucket, unique
from tablebay_test.clients import make_client
from tablebay_test.iceberg import duckdb_attach, duckdb_connect, rest_catalog, s3_client, split_s3_location
from tablebay_test.server import TablebayServer

KMS_ARN = "arn:aws:kms:us-east-1:111122223333:key/5f0e1d2c-0000-4000-8000-00000000c0de"
KEYS = (
    "default 1 AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\n"
    f"{KMS_ARN} 1 AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=\n"
)
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "note", StringType(), required=False))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server with a key file holding the server-managed key and one KMS key."""
    work = tmp_path_factory.mktemp("tablebay-enc")
    key_file = work / "keys"
    key_file.write_text(KEYS)
    srv = TablebayServer(work, arn_flavor="aws", extra_args=("--encryption-key-file", str(key_file)))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def kms_bucket(server):
    tables = make_client(server.tables_url)
    name = unique("kms")
    arn = tables.create_table_bucket(
        name=name, encryptionConfiguration={"sseAlgorithm": "aws:kms", "kmsKeyArn": KMS_ARN})["arn"]
    yield arn
    purge_bucket(tables, arn)


@pytest.fixture
def aes_bucket(server):
    tables = make_client(server.tables_url)
    arn = tables.create_table_bucket(name=unique("aes"))["arn"]
    yield arn
    purge_bucket(tables, arn)


def rows(n: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "note": f"PLAINTEXT-MARKER-{i}"} for i in range(n)],
                                schema=pa.schema([pa.field("id", pa.int64(), nullable=False),
                                                  pa.field("note", pa.string())]))


def write_and_read(server, warehouse: str, tmp_path) -> tuple[str, str]:
    """PyIceberg appends twice, DuckDB reads it all back; returns a data file's (bucket, key)."""
    catalog = rest_catalog(server, warehouse)
    catalog.create_namespace("enc")
    table = catalog.create_table(("enc", "events"), SCHEMA)
    table.append(rows(500))
    table.append(rows(20))
    assert table.scan().to_arrow().num_rows == 520
    duck = duckdb_connect(tmp_path / "duckdb-extensions")
    try:
        duckdb_attach(duck, server, warehouse)
        got = duck.execute("SELECT count(*), count(DISTINCT id), min(note) FROM cat.enc.events").fetchone()
        assert got == (520, 500, "PLAINTEXT-MARKER-0")
        duck.execute("INSERT INTO cat.enc.events VALUES (1000, 'from duckdb')")
        assert duck.execute("SELECT note FROM cat.enc.events WHERE id = 1000").fetchone() == ("from duckdb",)
    finally:
        duck.close()
    table = catalog.load_table(("enc", "events"))
    assert table.scan().to_arrow().num_rows == 521
    data_file = next(iter(table.scan().plan_files())).file.file_path
    return split_s3_location(data_file)


def assert_ciphertext_on_disk(server):
    """No file under the blob directory is a readable Parquet file or metadata JSON."""
    files = [p for p in (server.data_dir / "blobs").rglob("*") if p.is_file()]
    assert files
    for path in files:
        raw = path.read_bytes()
        assert not raw.startswith(b"PAR1") and not raw.endswith(b"PAR1"), path
        assert b"format-version" not in raw and b"PLAINTEXT-MARKER" not in raw, path


def test_pyiceberg_and_duckdb_on_an_aes256_table(server, aes_bucket, tmp_path):
    bucket, key = write_and_read(server, aes_bucket, tmp_path)
    assert_ciphertext_on_disk(server)
    s3 = s3_client(server)
    head = s3.head_object(Bucket=bucket, Key=key)
    assert head["ServerSideEncryption"] == "AES256"
    assert "SSEKMSKeyId" not in head
    got = s3.get_object(Bucket=bucket, Key=key)
    assert got["ServerSideEncryption"] == "AES256"
    assert got["Body"].read()[:4] == b"PAR1"


def test_pyiceberg_and_duckdb_on_a_kms_table(server, kms_bucket, tmp_path):
    bucket, key = write_and_read(server, kms_bucket, tmp_path)
    assert_ciphertext_on_disk(server)
    s3 = s3_client(server)
    head = s3.head_object(Bucket=bucket, Key=key)
    assert head["ServerSideEncryption"] == "aws:kms"
    assert head["SSEKMSKeyId"] == KMS_ARN
    # Every metadata file too, the first one (written by the create) included.
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="metadata/")["Contents"]
    metadata_files = [o["Key"] for o in listed if o["Key"].endswith(".metadata.json")]
    assert any(k.startswith("metadata/00000-") for k in metadata_files), metadata_files
    for name in metadata_files:
        assert s3.head_object(Bucket=bucket, Key=name).get("SSEKMSKeyId") == KMS_ARN, name
    put = s3.put_object(Bucket=bucket, Key="extra/x", Body=b"x", ServerSideEncryption="aws:kms",
                        SSEKMSKeyId=KMS_ARN)
    assert (put["ServerSideEncryption"], put["SSEKMSKeyId"]) == ("aws:kms", KMS_ARN)
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket=bucket, Key="extra/y", Body=b"y", ServerSideEncryption="AES256")
    assert refused.value.response["Error"]["Code"] == "InvalidArgument"


def test_boto3_sse_headers_on_an_aes256_table(server, aes_bucket):
    catalog = rest_catalog(server, aes_bucket)
    catalog.create_namespace("h")
    table = catalog.create_table(("h", "t"), SCHEMA)
    bucket, _ = split_s3_location(table.location())
    s3 = s3_client(server)
    put = s3.put_object(Bucket=bucket, Key="a", Body=b"hello", ServerSideEncryption="AES256")
    assert put["ServerSideEncryption"] == "AES256"
    for kwargs in ({"ServerSideEncryption": "aws:kms"},
                   {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": KMS_ARN},
                   {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": "k" * 32}):
        with pytest.raises(ClientError) as refused:
            s3.put_object(Bucket=bucket, Key="b", Body=b"no", **kwargs)
        assert refused.value.response["Error"]["Code"] == "InvalidArgument", kwargs
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="b")
    mpu = s3.create_multipart_upload(Bucket=bucket, Key="m")
    assert mpu["ServerSideEncryption"] == "AES256"
    part = s3.upload_part(Bucket=bucket, Key="m", UploadId=mpu["UploadId"], PartNumber=1, Body=b"p" * 1000)
    assert part["ServerSideEncryption"] == "AES256"
    done = s3.complete_multipart_upload(Bucket=bucket, Key="m", UploadId=mpu["UploadId"],
                                        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert done["ServerSideEncryption"] == "AES256"
    assert s3.get_object(Bucket=bucket, Key="m", Range="bytes=10-19")["Body"].read() == b"p" * 10


def test_a_kms_key_the_server_lacks_is_a_clear_400(server):
    """A bucket may name any KMS key (as S3 Tables allows before use), but nothing can be written under a key
    the server does not hold: PyIceberg's create and boto3's PUT get a 400 naming the key, and nothing is
    stored."""
    from pyiceberg.exceptions import BadRequestError

    unknown = "arn:aws:kms:us-east-1:111122223333:key/99999999-0000-4000-8000-000000000000"
    tables = make_client(server.tables_url)
    arn = tables.create_table_bucket(
        name=unique("nokey"), encryptionConfiguration={"sseAlgorithm": "aws:kms", "kmsKeyArn": unknown})["arn"]
    try:
        catalog = rest_catalog(server, arn)
        catalog.create_namespace("k")
        with pytest.raises(BadRequestError) as refused:
            catalog.create_table(("k", "t"), SCHEMA)
        assert unknown in str(refused.value) and "not configured" in str(refused.value)
        assert ("k", "t") not in catalog.list_tables("k")
        # A table made through the control plane (no metadata written yet) refuses data the same way.
        tables.create_table(tableBucketARN=arn, namespace="k", name="plain", format="ICEBERG")
        location = tables.get_table(tableBucketARN=arn, namespace="k", name="plain")["warehouseLocation"]
        bucket = location.removeprefix("s3://").split("/")[0]
        s3 = s3_client(server)
        with pytest.raises(ClientError) as put:
            s3.put_object(Bucket=bucket, Key="data/x", Body=b"x")
        assert put.value.response["Error"]["Code"] == "KMS.NotFoundException"
        assert put.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert unknown in put.value.response["Error"]["Message"]
        with pytest.raises(ClientError):
            s3.head_object(Bucket=bucket, Key="data/x")
    finally:
        purge_bucket(tables, arn)
