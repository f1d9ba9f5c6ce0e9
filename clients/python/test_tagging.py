"""Tags: TagResource, UntagResource, ListTagsForResource, and `tags` on CreateTableBucket/CreateTable
(reference/s3tables-api.md §2 "Tagging", §3.2 TagKey 1–128, TagValue 0–256)."""

import pytest

from tablebay_test.expect import api_error, bucket_arn, purge_bucket, status, unique


def tags_of(s3tables, arn):
    return s3tables.list_tags_for_resource(resourceArn=arn).get("tags", {})


def test_bucket_tags_lifecycle(s3tables):
    name = unique("tag")
    arn = s3tables.create_table_bucket(name=name, tags={"team": "data", "env": "test"})["arn"]
    try:
        resp = s3tables.list_tags_for_resource(resourceArn=arn)
        assert status(resp) == 200
        assert resp["tags"] == {"team": "data", "env": "test"}

        assert status(s3tables.tag_resource(resourceArn=arn, tags={"env": "prod", "cost": "42"})) == 200
        assert tags_of(s3tables, arn) == {"team": "data", "env": "prod", "cost": "42"}

        resp = s3tables.untag_resource(resourceArn=arn, tagKeys=["team", "cost"])
        assert status(resp) == 204
        assert tags_of(s3tables, arn) == {"env": "prod"}

        s3tables.untag_resource(resourceArn=arn, tagKeys=["env"])
        assert tags_of(s3tables, arn) == {}
    finally:
        purge_bucket(s3tables, arn)


def test_table_tags(s3tables, namespace):
    created = s3tables.create_table(tableBucketARN=namespace.bucket.arn, namespace=namespace.name, name="tagged",
                                    format="ICEBERG", tags={"owner": "alice"})
    arn = created["tableARN"]
    assert tags_of(s3tables, arn) == {"owner": "alice"}
    s3tables.tag_resource(resourceArn=arn, tags={"pii": ""})
    assert tags_of(s3tables, arn) == {"owner": "alice", "pii": ""}
    # Table tags are the table's own: the bucket's are untouched.
    assert tags_of(s3tables, namespace.bucket.arn) == {}
    # The table ARN is by id, so tags survive a rename.
    s3tables.rename_table(tableBucketARN=namespace.bucket.arn, namespace=namespace.name, name="tagged",
                          newName="still_tagged")
    assert tags_of(s3tables, arn) == {"owner": "alice", "pii": ""}


def test_tags_of_missing_resources(s3tables, bucket):
    missing = bucket_arn(unique("nobkt"))
    with api_error("NotFoundException", 404):
        s3tables.list_tags_for_resource(resourceArn=missing)
    with api_error("NotFoundException", 404):
        s3tables.tag_resource(resourceArn=missing, tags={"a": "b"})
    with api_error("NotFoundException", 404):
        s3tables.untag_resource(resourceArn=missing, tagKeys=["a"])
    missing_table = f"{bucket.arn}/table/00000000-0000-4000-8000-000000000000"
    with api_error("NotFoundException", 404):
        s3tables.list_tags_for_resource(resourceArn=missing_table)


@pytest.mark.parametrize("tags", [{"k" * 129: "v"}, {"k": "v" * 257}], ids=["key-too-long", "value-too-long"])
def test_invalid_tags_are_bad_request(s3tables, bucket, tags):
    with api_error("BadRequestException", 400):
        s3tables.tag_resource(resourceArn=bucket.arn, tags=tags)
    assert tags_of(s3tables, bucket.arn) == {}


def test_invalid_resource_arn_is_bad_request(s3tables):
    with api_error("BadRequestException", 400):
        s3tables.list_tags_for_resource(resourceArn="arn:aws:s3:::not-a-table-bucket")
