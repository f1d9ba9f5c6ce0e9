//! Where a table's files live: the `s3://<table-id>--table-s3/<key>` locations clients see, and the blob keys
//! the server stores them under. Clients never see the backing store's layout (DESIGN.md "Surfaces and ports").

use uuid::Uuid;

/// The suffix of every table's storage bucket name, as in S3 Tables.
pub const TABLE_BUCKET_SUFFIX: &str = "--table-s3";

/// `s3://<table-id>--table-s3`: the table's warehouse location.
pub fn warehouse_location(table_id: Uuid) -> String {
    format!("s3://{table_id}{TABLE_BUCKET_SUFFIX}")
}

/// A file inside a table's storage: the table and the key under its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableLocation {
    /// The table owning the storage.
    pub table_id: Uuid,
    /// The object key inside the table's storage bucket (no leading `/`).
    pub key: String,
}

impl TableLocation {
    /// Parses `s3://<table-id>--table-s3/<key>` (also `s3a://` and `oss://`, which some engines write); `None` for
    /// anything that is not inside a table's storage or whose key could escape it.
    pub fn parse(uri: &str) -> Option<Self> {
        let rest = ["s3://", "s3a://", "oss://"].iter().find_map(|scheme| uri.strip_prefix(scheme))?;
        let (bucket, key) = rest.split_once('/')?;
        let table_id = Self::table_of_bucket(bucket)?;
        let key = key.trim_start_matches('/');
        if key.is_empty() || key.split('/').any(|segment| segment == ".." || segment == ".") {
            return None;
        }
        Some(Self { table_id, key: key.to_string() })
    }

    /// The table whose storage bucket is named `bucket` (`<table-id>--table-s3`).
    pub fn table_of_bucket(bucket: &str) -> Option<Uuid> {
        Uuid::parse_str(bucket.strip_suffix(TABLE_BUCKET_SUFFIX)?).ok()
    }

    /// The key under which the blob store keeps this file.
    pub fn blob_key(&self) -> String {
        format!("tables/{}/{}", self.table_id, self.key)
    }

    /// The location as clients see it.
    pub fn uri(&self) -> String {
        format!("{}/{}", warehouse_location(self.table_id), self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_table_locations() {
        let id = Uuid::parse_str("8ab7b6a8-1c2d-4e5f-9a0b-123456789abc").unwrap();
        let loc = TableLocation::parse(&format!("s3://{id}--table-s3/metadata/00000-x.metadata.json")).unwrap();
        assert_eq!(loc.table_id, id);
        assert_eq!(loc.key, "metadata/00000-x.metadata.json");
        assert_eq!(loc.blob_key(), format!("tables/{id}/metadata/00000-x.metadata.json"));
        assert_eq!(TableLocation::parse(&loc.uri()), Some(loc));
        for bad in [
            "s3://bucket/key".to_string(),
            format!("s3://{id}--table-s3/"),
            format!("s3://{id}--table-s3/a/../../x"),
            format!("http://{id}--table-s3/a"),
            format!("s3://{id}/a"),
        ] {
            assert!(TableLocation::parse(&bad).is_none(), "{bad}");
        }
    }
}
