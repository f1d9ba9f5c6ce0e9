"""Eight PyIceberg writers append to one table at once, each with its own RestCatalog (and HTTP session).

PyIceberg does not retry a 409 itself; each writer does what an application does: on
CommitFailedException it reloads the table and appends again. At the end every append is present exactly
once: the row count is exact, every id appears once, and there is one snapshot per successful append
(issue 4, "Concurrency"). Needs the S3 data plane (skips with that reason without it).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test.iceberg import rest_catalog

WRITERS = 8
APPENDS_PER_WRITER = 4
ROWS_PER_APPEND = 25
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "writer", StringType(), required=False))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("writer", pa.string())])


pytestmark = pytest.mark.usefixtures("data_plane")  # skips without the S3 data plane (conftest.py)


def test_eight_writers_each_append_lands_exactly_once(server, bucket):
    setup = rest_catalog(server, bucket.arn)
    setup.create_namespace("conc")
    setup.create_table(("conc", "appends"), SCHEMA)
    start = threading.Barrier(WRITERS)
    conflicts = [0] * WRITERS

    def writer(w: int) -> int:
        catalog = rest_catalog(server, bucket.arn, name=f"writer-{w}")
        table = catalog.load_table(("conc", "appends"))
        start.wait(timeout=60)
        for a in range(APPENDS_PER_WRITER):
            base = (w * APPENDS_PER_WRITER + a) * ROWS_PER_APPEND
            batch = pa.Table.from_pylist(
                [{"id": base + i, "writer": f"w{w}"} for i in range(ROWS_PER_APPEND)], schema=ARROW)
            deadline = time.monotonic() + 120
            while True:
                try:
                    table.append(batch)
                    break
                except CommitFailedException:
                    conflicts[w] += 1
                    assert time.monotonic() < deadline, f"writer {w} kept conflicting"
                    table = catalog.load_table(("conc", "appends"))
        return w

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        assert sorted(pool.map(writer, range(WRITERS))) == list(range(WRITERS))

    table = setup.load_table(("conc", "appends"))
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    total = WRITERS * APPENDS_PER_WRITER * ROWS_PER_APPEND
    assert len(ids) == total, f"{len(ids)} rows, wanted {total} (conflicts per writer: {conflicts})"
    assert sorted(ids) == list(range(total)), "some append is missing or present twice"
    assert len(table.snapshots()) == WRITERS * APPENDS_PER_WRITER
    assert table.current_snapshot().summary["total-records"] == str(total)
    print(f"conflicts retried per writer: {conflicts}")
