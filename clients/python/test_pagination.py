"""Pagination of ListTableBuckets, ListNamespaces and ListTables: boto3 paginators, hand-driven
continuation tokens and the CLI's auto-pagination (reference/s3tables-api.md §1.6).

This module has its own server, so the listings hold exactly what it creates. It keeps at most 9
table buckets alive at once: AWS's default quota is 10 per account and region (§3.3).
"""

import pytest

from tablebay_test.expect import api_error, assert_raw_error, bucket_arn, purge_bucket, unique
from tablebay_test.signing import quote_arn

BUCKETS = 7
NAMESPACES = 23
TABLES_PER_NAMESPACE = 6


def drain(pages, key, page_size, max_pages=50):
    """Checks the page contract and returns every item in order."""
    collected = []
    for page in pages:
        collected.append(page)
        assert len(collected) <= max_pages, f"more than {max_pages} pages: the listing does not end"
    pages = collected
    assert pages, "no pages"
    items = []
    tokens = []
    for i, page in enumerate(pages):
        assert len(page[key]) <= page_size, f"page {i} has {len(page[key])} > {page_size} items"
        items.extend(page[key])
        if i < len(pages) - 1:
            assert page.get("continuationToken"), f"page {i} of {len(pages)} has no continuationToken"
            tokens.append(page["continuationToken"])
    assert "continuationToken" not in pages[-1], f"last page still has a token: {pages[-1]['continuationToken']!r}"
    assert len(set(tokens)) == len(tokens), f"a continuation token was repeated: {tokens}"
    return items


def names_of(buckets):
    return [b["name"] for b in buckets]


@pytest.fixture(scope="module")
def many_buckets(s3tables):
    stem = unique("pg")
    names = sorted(f"{stem}-{i:02d}" for i in range(BUCKETS))
    arns = [s3tables.create_table_bucket(name=n)["arn"] for n in names]
    yield stem, names
    for arn in arns:
        purge_bucket(s3tables, arn)


@pytest.fixture(scope="module")
def many_namespaces(s3tables, many_buckets):
    _, names = many_buckets
    arn = bucket_arn(names[0])
    namespaces = sorted(f"ns_{i:03d}" for i in range(NAMESPACES))
    for ns in namespaces:
        s3tables.create_namespace(tableBucketARN=arn, namespace=[ns])
    return arn, namespaces


@pytest.fixture(scope="module")
def many_tables(s3tables, many_buckets):
    _, names = many_buckets
    arn = bucket_arn(names[1])
    tables = []
    for ns in ("alpha", "beta", "gamma"):
        s3tables.create_namespace(tableBucketARN=arn, namespace=[ns])
        for i in range(TABLES_PER_NAMESPACE):
            name = f"t_{i:02d}"
            s3tables.create_table(tableBucketARN=arn, namespace=ns, name=name, format="ICEBERG")
            tables.append((ns, name))
    return arn, sorted(tables)


def test_buckets_paginator(s3tables, many_buckets):
    stem, names = many_buckets
    pages = s3tables.get_paginator("list_table_buckets").paginate(PaginationConfig={"PageSize": 2})
    items = drain(pages, "tableBuckets", 2)
    assert sorted(names_of(items)) == names
    assert len(items) == len(set(names_of(items)))
    with_prefix = drain(s3tables.get_paginator("list_table_buckets").paginate(
        prefix=stem, PaginationConfig={"PageSize": 3}), "tableBuckets", 3)
    assert sorted(names_of(with_prefix)) == names


def test_buckets_by_hand(s3tables, many_buckets):
    _, names = many_buckets
    seen, tokens, token = [], [], None
    for _ in range(BUCKETS + 2):
        kwargs = {"maxBuckets": 3}
        if token:
            kwargs["continuationToken"] = token
        page = s3tables.list_table_buckets(**kwargs)
        assert len(page["tableBuckets"]) <= 3
        seen.extend(names_of(page["tableBuckets"]))
        token = page.get("continuationToken")
        if not token:
            break
        tokens.append(token)
    else:
        pytest.fail("listing never ended")
    assert sorted(seen) == names and len(seen) == len(names)
    assert len(tokens) >= 2 and len(set(tokens)) == len(tokens)


def test_namespaces_paginator(s3tables, many_namespaces):
    arn, namespaces = many_namespaces
    pages = s3tables.get_paginator("list_namespaces").paginate(tableBucketARN=arn,
                                                               PaginationConfig={"PageSize": 5})
    items = drain(pages, "namespaces", 5)
    got = [n["namespace"][0] for n in items]
    assert sorted(got) == namespaces and len(got) == NAMESPACES
    prefixed = drain(s3tables.get_paginator("list_namespaces").paginate(
        tableBucketARN=arn, prefix="ns_01", PaginationConfig={"PageSize": 4}), "namespaces", 4)
    assert sorted(n["namespace"][0] for n in prefixed) == [n for n in namespaces if n.startswith("ns_01")]


def test_tables_paginator_across_namespaces(s3tables, many_tables):
    arn, tables = many_tables
    pages = s3tables.get_paginator("list_tables").paginate(tableBucketARN=arn, PaginationConfig={"PageSize": 4})
    got = [(t["namespace"][0], t["name"]) for t in drain(pages, "tables", 4)]
    assert sorted(got) == tables and len(got) == len(tables)


def test_tables_paginator_in_namespace(s3tables, many_tables):
    arn, tables = many_tables
    pages = s3tables.get_paginator("list_tables").paginate(tableBucketARN=arn, namespace="beta",
                                                           PaginationConfig={"PageSize": 4})
    got = [(t["namespace"][0], t["name"]) for t in drain(pages, "tables", 4)]
    assert sorted(got) == [t for t in tables if t[0] == "beta"]
    pages = s3tables.get_paginator("list_tables").paginate(tableBucketARN=arn, prefix="t_0",
                                                           PaginationConfig={"PageSize": 5})
    assert sorted((t["namespace"][0], t["name"]) for t in drain(pages, "tables", 5)) == tables


def test_cli_auto_pagination(cli, many_buckets, many_namespaces, many_tables):
    _, names = many_buckets
    listed = cli("list-table-buckets", "--page-size", "2")
    assert sorted(names_of(listed["tableBuckets"])) == names
    assert "NextToken" not in listed

    ns_arn, namespaces = many_namespaces
    listed = cli("list-namespaces", "--table-bucket-arn", ns_arn, "--page-size", "4")
    assert sorted(n["namespace"][0] for n in listed["namespaces"]) == namespaces

    tbl_arn, tables = many_tables
    listed = cli("list-tables", "--table-bucket-arn", tbl_arn, "--page-size", "4")
    assert sorted((t["namespace"][0], t["name"]) for t in listed["tables"]) == tables
    listed = cli("list-tables", "--table-bucket-arn", tbl_arn, "--namespace", "gamma", "--page-size", "4")
    assert sorted((t["namespace"][0], t["name"]) for t in listed["tables"]) == [t for t in tables if t[0] == "gamma"]


def test_cli_max_items_and_starting_token(cli, many_namespaces):
    arn, namespaces = many_namespaces
    seen, starting = [], None
    for _ in range(NAMESPACES):
        args = ["list-namespaces", "--table-bucket-arn", arn, "--page-size", "3", "--max-items", "5"]
        if starting:
            args += ["--starting-token", starting]
        out = cli(*args)
        assert len(out["namespaces"]) <= 5
        seen.extend(n["namespace"][0] for n in out["namespaces"])
        starting = out.get("NextToken")
        if not starting:
            break
    assert sorted(seen) == namespaces and len(seen) == NAMESPACES


def test_invalid_continuation_token_is_bad_request(s3tables, many_namespaces):
    arn, _ = many_namespaces
    with api_error("BadRequestException", 400):
        s3tables.list_table_buckets(continuationToken="not-a-token-we-issued")
    with api_error("BadRequestException", 400):
        s3tables.list_namespaces(tableBucketARN=arn, continuationToken="not-a-token-we-issued")
    with api_error("BadRequestException", 400):
        s3tables.list_tables(tableBucketARN=arn, continuationToken="not-a-token-we-issued")


def test_page_size_limits(s3tables, raw, many_namespaces):
    arn, _ = many_namespaces
    assert len(s3tables.list_table_buckets(maxBuckets=1000)["tableBuckets"]) == BUCKETS
    with api_error("BadRequestException", 400):
        s3tables.list_table_buckets(maxBuckets=5000)
    with api_error("BadRequestException", 400):
        s3tables.list_table_buckets(maxBuckets=1001)
    with api_error("BadRequestException", 400):
        s3tables.list_namespaces(tableBucketARN=arn, maxNamespaces=1001)
    with api_error("BadRequestException", 400):
        s3tables.list_tables(tableBucketARN=arn, maxTables=1001)
    # botocore refuses values below the model's `min` client-side; other clients send them.
    assert_raw_error(raw("GET", "/buckets?maxBuckets=0"), 400, "BadRequestException")
    assert_raw_error(raw("GET", f"/namespaces/{quote_arn(arn)}?maxNamespaces=0"), 400, "BadRequestException")
    assert_raw_error(raw("GET", f"/tables/{quote_arn(arn)}?maxTables=-1"), 400, "BadRequestException")
    assert_raw_error(raw("GET", "/buckets?maxBuckets=ten"), 400, "BadRequestException")
