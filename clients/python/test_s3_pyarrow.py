"""pyarrow's own S3 client (the AWS SDK for C++ inside pyarrow) against the data plane, configured as
docs/clients/pyarrow.md says: `pyarrow.fs.S3FileSystem(endpoint_override="127.0.0.1:PORT", scheme="http",
access_key=…, secret_key=…, region="us-east-1")` (path-style is its default with an endpoint override).
Writes and reads Parquet files (a small one and one large enough for a multipart upload), datasets,
random-access reads, listing and deletes — on both blob backends."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.s3 import get_bytes


def s3_filesystem(s3_url: str) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(
        endpoint_override=s3_url.removeprefix("http://"),
        scheme="http",
        access_key=ACCESS_KEY_ID,
        secret_key=SECRET_ACCESS_KEY,
        region=REGION,
        connect_timeout=10,
        request_timeout=120,
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=1),
    )


@pytest.fixture(scope="module")
def fs(s3env_both):
    return s3_filesystem(s3env_both.s3_url)


@pytest.fixture(scope="module")
def table(s3env_both):
    return s3env_both.new_table()


def _arrow_table(rows: int, seed: int = 0) -> pa.Table:
    import random

    rnd = random.Random(seed)
    return pa.table({
        "id": pa.array(range(rows), type=pa.int64()),
        "value": pa.array([rnd.random() for _ in range(rows)], type=pa.float64()),
        "note": pa.array([f"row-{i}-{rnd.getrandbits(64):016x}" for i in range(rows)], type=pa.string()),
    })


def test_write_and_read_parquet(fs, table, s3env_both):
    data = _arrow_table(10_000, seed=1)
    path = f"{table.bucket}/data/small.parquet"
    pq.write_table(data, path, filesystem=fs)
    info = fs.get_file_info(path)
    assert info.type == pafs.FileType.File and info.size > 0
    assert pq.read_table(path, filesystem=fs).equals(data)
    # What boto3 reads is what pyarrow wrote.
    raw = get_bytes(s3env_both.client(), table.bucket, "data/small.parquet")
    assert len(raw) == info.size and raw[:4] == b"PAR1" and raw[-4:] == b"PAR1"


def test_large_parquet_goes_multipart(fs, table):
    """Uncompressed random rows make a file of ~40 MiB, which pyarrow uploads in parts."""
    data = _arrow_table(600_000, seed=2)
    path = f"{table.bucket}/data/large.parquet"
    pq.write_table(data, path, filesystem=fs, compression="none")
    assert fs.get_file_info(path).size > 20 * 1024 * 1024
    back = pq.read_table(path, filesystem=fs)
    assert back.num_rows == data.num_rows and back.equals(data)


def test_random_access_reads(fs, table):
    payload = bytes(range(256)) * 4096  # 1 MiB
    path = f"{table.bucket}/raw/blob.bin"
    with fs.open_output_stream(path) as out:
        out.write(payload)
    with fs.open_input_file(path) as f:
        assert f.size() == len(payload)
        assert f.read_at(100, 500_000) == payload[500_000:500_100]
        f.seek(len(payload) - 10)
        assert f.read() == payload[-10:]


def test_dataset_listing_and_delete(fs, table):
    base = f"{table.bucket}/ds"
    for i in range(3):
        pq.write_table(_arrow_table(1000, seed=10 + i), f"{base}/part-{i}.parquet", filesystem=fs)
    infos = fs.get_file_info(pafs.FileSelector(base, recursive=True))
    names = sorted(i.path for i in infos if i.type == pafs.FileType.File)
    assert names == [f"{base}/part-{i}.parquet" for i in range(3)]
    dataset = ds.dataset(base, filesystem=fs, format="parquet")
    assert dataset.count_rows() == 3000
    fs.delete_file(f"{base}/part-1.parquet")
    assert fs.get_file_info(f"{base}/part-1.parquet").type == pafs.FileType.NotFound
    assert ds.dataset(base, filesystem=fs, format="parquet").count_rows() == 2000


def test_unknown_bucket_and_bad_credentials(s3env_both, table):
    fs_ok = s3_filesystem(s3env_both.s3_url)
    with pytest.raises(OSError):
        pq.read_table("no-such-bucket/x.parquet", filesystem=fs_ok)
    bad = pafs.S3FileSystem(endpoint_override=s3env_both.s3_url.removeprefix("http://"), scheme="http",
                            access_key=ACCESS_KEY_ID, secret_key="wrong", region=REGION,
                            retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=1))
    with pytest.raises(OSError):
        bad.get_file_info(f"{table.bucket}/data/small.parquet")
