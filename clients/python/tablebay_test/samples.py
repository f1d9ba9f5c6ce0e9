"""Request values the tests send: CreateTable metadata in both schema forms (boto3 member names;
botocore renames `schemaId` → `schema-id` etc. on the wire, reference/s3tables-api.md §1.3)."""

SCHEMA_FIELDS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "ts", "type": "timestamp"},
    {"name": "note", "type": "string"},
]

# `metadata.iceberg.schema`: the original flat form.
METADATA_SCHEMA = {"iceberg": {"schema": {"fields": SCHEMA_FIELDS}}}


# `metadata.iceberg.schemaV2` with a partition spec, a write order and properties.
METADATA_SCHEMA_V2 = {"iceberg": {
    "schemaV2": {
        "type": "struct", "schemaId": 0, "identifierFieldIds": [1],
        "fields": [
            {"id": 1, "name": "id", "type": "long", "required": True},
            {"id": 2, "name": "loc", "required": False, "doc": "nested",
             "type": {"type": "struct", "fields": [
                 {"id": 3, "name": "lat", "type": "double", "required": False}]}},
        ],
    },
    "partitionSpec": {"specId": 0, "fields": [
        {"sourceId": 1, "transform": "bucket[16]", "name": "id_bucket", "fieldId": 1000}]},
    "writeOrder": {"orderId": 1, "fields": [
        {"sourceId": 1, "transform": "identity", "direction": "asc", "nullOrder": "nulls-first"}]},
    "properties": {"write.format.default": "parquet"},
}}

TABLE_MAINTENANCE_DEFAULTS = {
    "icebergCompaction": {"status": "enabled",
                          "settings": {"icebergCompaction": {"targetFileSizeMB": 512, "strategy": "auto"}}},
    "icebergSnapshotManagement": {"status": "enabled",
                                  "settings": {"icebergSnapshotManagement": {"minSnapshotsToKeep": 1,
                                                                             "maxSnapshotAgeHours": 120}}},
}

BUCKET_MAINTENANCE_DEFAULTS = {
    "icebergUnreferencedFileRemoval": {"status": "enabled",
                                       "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 3,
                                                                                       "nonCurrentDays": 10}}},
}


def policy_document(action: str = "s3tables:GetTable", effect: str = "Allow") -> str:
    return ('{"Version":"2012-10-17","Statement":[{"Sid":"test","Effect":"%s",'
            '"Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":["%s"],"Resource":"*"}]}'
            % (effect, action))
