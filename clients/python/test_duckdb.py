"""DuckDB 1.5.5 with its iceberg extension (from the `duckdb-extension-*` PyPI packages, LOADed from their
files: no download at run time) attached to Tablebay with `AUTHORIZATION_TYPE 'sigv4'`,
`SIGV4_SERVICE 'osstables'`, `SIGV4_REGION 'us-east-1'` and DuckDB's default attach options — so
CREATE TABLE goes through stage-create + an `assert-create` commit (trap 10) and writes to existing tables
go through `POST /v1/{prefix}/transactions/commit` (trap 9). The exact setup is docs/clients/duckdb.md.

Catalog-only statements (ATTACH, schemas, CREATE/DROP TABLE, an empty SELECT) run without the data plane;
INSERT and reading data files skip until the S3 data plane is in the build.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test.iceberg import duckdb_attach, duckdb_connect, rest_catalog


@pytest.fixture
def duck(tmp_path):
    con = duckdb_connect(tmp_path / "duckdb-extensions")
    yield con
    con.close()


def test_extensions_load_from_pypi_packages_without_network(duck, tmp_path):
    loaded = dict(duck.execute(
        "SELECT extension_name, install_path FROM duckdb_extensions() WHERE loaded").fetchall())
    for name in ("iceberg", "httpfs", "avro", "parquet"):
        assert name in loaded, loaded
    assert duck.execute("SELECT current_setting('autoinstall_known_extensions')").fetchone()[0] is False
    assert not any((tmp_path / "duckdb-extensions").rglob("*.duckdb_extension")), "nothing was installed"


@pytest.mark.parametrize("service", ["osstables", "s3tables"])
def test_attach_and_list_namespaces(server, bucket, duck, service):
    catalog = rest_catalog(server, bucket.arn)
    catalog.create_namespace("from_pyiceberg")
    catalog.create_table(("from_pyiceberg", "t"), Schema(NestedField(1, "id", LongType(), required=True)))
    duckdb_attach(duck, server, bucket.arn, service=service)
    tables = duck.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'cat'").fetchall()
    assert ("from_pyiceberg", "t") in tables, tables
    cols = duck.execute("DESCRIBE cat.from_pyiceberg.t").fetchall()
    assert [(c[0], c[1]) for c in cols] == [("id", "BIGINT")], cols
    assert duck.execute("SELECT count(*) FROM cat.from_pyiceberg.t").fetchone()[0] == 0


def test_create_schema_and_table_with_default_attach_options(server, bucket, duck):
    duckdb_attach(duck, server, bucket.arn)
    duck.execute("CREATE SCHEMA cat.duck_ns")
    duck.execute("CREATE TABLE cat.duck_ns.items (id BIGINT, name VARCHAR, price DOUBLE)")
    catalog = rest_catalog(server, bucket.arn)
    table = catalog.load_table(("duck_ns", "items"))
    assert [f.name for f in table.schema().fields] == ["id", "name", "price"]
    assert table.metadata_location and table.metadata_location.endswith(".metadata.json")
    assert duck.execute("SELECT count(*) FROM cat.duck_ns.items").fetchone()[0] == 0
    duck.execute("DROP TABLE cat.duck_ns.items")
    assert not catalog.table_exists(("duck_ns", "items"))


def test_insert_and_select(server, bucket, duck, data_plane):
    duckdb_attach(duck, server, bucket.arn)
    duck.execute("CREATE SCHEMA cat.sales")
    duck.execute("CREATE TABLE cat.sales.orders (id BIGINT, item VARCHAR)")
    duck.execute("INSERT INTO cat.sales.orders VALUES (1, 'apple'), (2, 'pear')")
    duck.execute("INSERT INTO cat.sales.orders SELECT i, 'gen-' || i FROM range(3, 11) t(i)")
    got = duck.execute("SELECT id, item FROM cat.sales.orders ORDER BY id").fetchall()
    assert got == [(1, "apple"), (2, "pear")] + [(i, f"gen-{i}") for i in range(3, 11)]

    table = rest_catalog(server, bucket.arn).load_table(("sales", "orders"))
    assert len(table.snapshots()) == 2
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == list(range(1, 11))


def test_create_table_as_select_in_one_transaction(server, bucket, duck, data_plane):
    duckdb_attach(duck, server, bucket.arn)
    duck.execute("CREATE SCHEMA cat.ctas")
    duck.execute("CREATE TABLE cat.ctas.numbers AS SELECT range AS n FROM range(100)")
    assert duck.execute("SELECT sum(n) FROM cat.ctas.numbers").fetchone()[0] == sum(range(100))


def test_duckdb_reads_pyiceberg_data_and_pyiceberg_reads_duckdb_inserts(server, bucket, duck, data_plane):
    catalog = rest_catalog(server, bucket.arn)
    catalog.create_namespace("mixed")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "who", StringType(), required=False))
    table = catalog.create_table(("mixed", "t"), schema)
    table.append(pa.Table.from_pylist([{"id": i, "who": "py"} for i in range(5)],
                                      schema=pa.schema([("id", pa.int64()), ("who", pa.string())])))
    duckdb_attach(duck, server, bucket.arn)
    assert duck.execute("SELECT count(*), min(who) FROM cat.mixed.t").fetchone() == (5, "py")
    duck.execute("INSERT INTO cat.mixed.t VALUES (100, 'duck')")
    rows = catalog.load_table(("mixed", "t")).scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["who"]) for r in rows) == [(i, "py") for i in range(5)] + [(100, "duck")]


def test_multi_table_transaction_commits_atomically(server, bucket, duck, data_plane):
    """DuckDB sends both tables' changes in one `POST /transactions/commit`."""
    duckdb_attach(duck, server, bucket.arn)
    duck.execute("CREATE SCHEMA cat.tx")
    duck.execute("CREATE TABLE cat.tx.a (id BIGINT)")
    duck.execute("CREATE TABLE cat.tx.b (id BIGINT)")
    duck.execute("BEGIN")
    duck.execute("INSERT INTO cat.tx.a VALUES (1)")
    duck.execute("INSERT INTO cat.tx.b VALUES (2)")
    duck.execute("COMMIT")
    assert duck.execute("SELECT (SELECT sum(id) FROM cat.tx.a), (SELECT sum(id) FROM cat.tx.b)").fetchone() == (1, 2)
