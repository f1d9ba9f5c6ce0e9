"""Authentication on the tables listener: SigV4 with the root credentials, signing names `s3tables`
and `osstables`; every failure is a 403 with a modeled error name and changes nothing
(reference/s3tables-api.md §1.1, §1.5; DESIGN.md "Quality bar")."""

import datetime as dt

import pytest
import requests

from tablebay_test import ACCESS_KEY_ID, SECRET_ACCESS_KEY
from tablebay_test.expect import FORBIDDEN_CODES, api_error, assert_raw_error, bucket_arn, purge_bucket, unique
from tablebay_test.signing import utcnow


def assert_not_created(s3tables, name):
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket(tableBucketARN=bucket_arn(name))
    assert s3tables.list_table_buckets(prefix=name)["tableBuckets"] == []


def test_health_needs_no_auth(server):
    resp = requests.get(f"{server.tables_url}/health", timeout=10)
    assert resp.status_code == 200
    # …while the API next to it does.
    assert_raw_error(requests.get(f"{server.tables_url}/buckets", timeout=10), 403, FORBIDDEN_CODES)


def test_root_credentials_work(s3tables, raw):
    assert isinstance(s3tables.list_table_buckets()["tableBuckets"], list)
    resp = raw("GET", "/buckets")
    assert resp.status_code == 200, resp.text
    assert isinstance(resp.json()["tableBuckets"], list)


@pytest.mark.parametrize("access_key,secret_key", [
    (ACCESS_KEY_ID, SECRET_ACCESS_KEY[:-1] + "X"),
    ("TBUNKNOWNACCESSKEY99", SECRET_ACCESS_KEY),
], ids=["wrong-secret", "unknown-access-key"])
def test_bad_credentials_are_forbidden(client_factory, s3tables, access_key, secret_key):
    intruder = client_factory(access_key=access_key, secret_key=secret_key)
    name = unique("denied")
    with api_error(FORBIDDEN_CODES, 403):
        intruder.create_table_bucket(name=name)
    with api_error(FORBIDDEN_CODES, 403):
        intruder.list_table_buckets()
    assert_not_created(s3tables, name)


def test_bad_credentials_change_nothing_on_existing_resources(client_factory, s3tables, table):
    intruder = client_factory(secret_key="not-the-secret")
    with api_error(FORBIDDEN_CODES, 403):
        intruder.delete_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
    with api_error(FORBIDDEN_CODES, 403):
        intruder.update_table_metadata_location(
            tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
            versionToken=table.version_token, metadataLocation="s3://evil--table-s3/metadata/00001-x.metadata.json")
    with api_error(FORBIDDEN_CODES, 403):
        intruder.get_table(tableArn=table.arn)
    got = s3tables.get_table(tableArn=table.arn)
    assert got["versionToken"] == table.version_token
    assert "metadataLocation" not in got


def test_unsigned_request_is_forbidden(server, s3tables):
    name = unique("unsigned")
    resp = requests.put(f"{server.tables_url}/buckets", json={"name": name}, timeout=30)
    assert_raw_error(resp, 403, FORBIDDEN_CODES)
    resp = requests.get(f"{server.tables_url}/buckets", timeout=30)
    assert_raw_error(resp, 403, FORBIDDEN_CODES)
    assert_not_created(s3tables, name)


@pytest.mark.parametrize("skew", [dt.timedelta(hours=-1), dt.timedelta(hours=1), dt.timedelta(days=-2)],
                         ids=["1h-old", "1h-ahead", "2d-old"])
def test_skewed_request_time_is_forbidden(raw, s3tables, skew):
    name = unique("skewed")
    resp = raw("PUT", "/buckets", {"name": name}, at=utcnow() + skew)
    assert_raw_error(resp, 403, FORBIDDEN_CODES)
    assert_not_created(s3tables, name)


def test_small_clock_skew_is_tolerated(raw, s3tables):
    # The control for the test above: the same signer with a clock 2 minutes behind is accepted.
    name = unique("skewok")
    resp = raw("PUT", "/buckets", {"name": name}, at=utcnow() - dt.timedelta(minutes=2))
    try:
        assert resp.status_code == 200, resp.text
        assert resp.json()["arn"] == bucket_arn(name)
    finally:
        purge_bucket(s3tables, bucket_arn(name))


def test_body_changed_after_signing_is_forbidden(raw, s3tables):
    signed_name, sent_name = unique("signed"), unique("tamper")

    def swap_body(headers, body):
        return headers, body.replace(signed_name.encode(), sent_name.encode())

    resp = raw("PUT", "/buckets", {"name": signed_name}, tamper=swap_body)
    assert_raw_error(resp, 403, FORBIDDEN_CODES)
    assert_not_created(s3tables, signed_name)
    assert_not_created(s3tables, sent_name)


def test_signed_header_changed_after_signing_is_forbidden(raw, s3tables):
    name = unique("hdr")

    def shift_date(headers, body):
        stamp = dt.datetime.strptime(headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ") + dt.timedelta(seconds=1)
        return {**headers, "X-Amz-Date": stamp.strftime("%Y%m%dT%H%M%SZ")}, body

    assert_raw_error(raw("PUT", "/buckets", {"name": name}, tamper=shift_date), 403, FORBIDDEN_CODES)
    assert_not_created(s3tables, name)


def test_osstables_signing_name_is_accepted(raw, s3tables):
    name = unique("oss")
    resp = raw("PUT", "/buckets", {"name": name}, service="osstables")
    try:
        assert resp.status_code == 200, resp.text
        assert resp.json()["arn"] == bucket_arn(name)
    finally:
        purge_bucket(s3tables, bucket_arn(name))
