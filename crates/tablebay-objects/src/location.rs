//! Where a table's files live: the `s3://<table-id>--table-s3/<key>` locations clients see, the object keys
//! inside a table's storage, and the blob keys the server stores bytes under. Clients never see the backing
//! store's layout (DESIGN.md "Surfaces and ports"): every write goes to a fresh blob key, and the object row
//! (`Objects::put_object`) maps the key to it.

use std::fmt;

use uuid::Uuid;

use crate::ObjectError;

/// Longest object key S3 accepts, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// A validated object key inside a table's storage: 1 to 1024 bytes of UTF-8, no `.` or `..` segment (so no
/// key can name a path outside the table, whatever the backing store makes of it), no NUL or other control
/// character.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey(String);

impl ObjectKey {
    /// Validates a key as the client sent it (already percent-decoded by the surface).
    pub fn parse(key: &str) -> Result<Self, ObjectError> {
        if key.is_empty() {
            return Err(ObjectError::Invalid(
                "The object key must not be empty".to_string(),
            ));
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(ObjectError::Invalid(format!(
                "The object key is longer than {MAX_KEY_BYTES} bytes"
            )));
        }
        if key.chars().any(char::is_control) {
            return Err(ObjectError::Invalid(
                "The object key contains a control character".to_string(),
            ));
        }
        // `\` is a separator to some stores and file systems: check its segments too.
        if key
            .split(['/', '\\'])
            .any(|segment| segment == "." || segment == "..")
        {
            return Err(ObjectError::Invalid(
                "The object key must not contain '.' or '..' segments".to_string(),
            ));
        }
        Ok(Self(key.to_string()))
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A fresh, unique blob key for bytes of the table: `tables/<table-id>/objects/<uuid-v7>`. Never reused, so a
/// write can never expose or clobber bytes another object row points at.
pub(crate) fn new_blob_key(table_id: Uuid) -> String {
    format!("tables/{table_id}/objects/{}", Uuid::now_v7())
}

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
        let rest = ["s3://", "s3a://", "oss://"]
            .iter()
            .find_map(|scheme| uri.strip_prefix(scheme))?;
        let (bucket, key) = rest.split_once('/')?;
        let table_id = Self::table_of_bucket(bucket)?;
        let key = key.trim_start_matches('/');
        if key.is_empty()
            || key
                .split('/')
                .any(|segment| segment == ".." || segment == ".")
        {
            return None;
        }
        Some(Self {
            table_id,
            key: key.to_string(),
        })
    }

    /// The table whose storage bucket is named `bucket` (`<table-id>--table-s3`, the id in its canonical
    /// lowercase hyphenated form, so each table has exactly one bucket name).
    pub fn table_of_bucket(bucket: &str) -> Option<Uuid> {
        let id = bucket.strip_suffix(TABLE_BUCKET_SUFFIX)?;
        let table_id = Uuid::parse_str(id).ok()?;
        (table_id.hyphenated().to_string() == id).then_some(table_id)
    }

    /// The legacy blob key of this file (`tables/<id>/<key>`). Files are now stored through the object service,
    /// under fresh blob keys that an object row maps the key to; read and write them with [`Objects::find`] and
    /// [`Objects::put_object`], not at this key.
    ///
    /// [`Objects::find`]: crate::Objects::find
    /// [`Objects::put_object`]: crate::Objects::put_object
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
    fn object_keys() {
        for (key, ok) in [
            ("metadata/00000-x.metadata.json", true),
            ("a", true),
            ("a/b/", true),
            ("..a/b..", true),
            ("a/.../b", true),
            ("ünïcödé/ключ", true),
            ("", false),
            (".", false),
            ("..", false),
            ("../x", false),
            ("a/../b", false),
            ("a/./b", false),
            ("a/..", false),
            ("a\\..\\b", false),
            ("a\u{0}b", false),
            ("a\nb", false),
        ] {
            assert_eq!(ObjectKey::parse(key).is_ok(), ok, "{key:?}");
        }
        assert!(ObjectKey::parse(&"k".repeat(1024)).is_ok());
        assert!(ObjectKey::parse(&"k".repeat(1025)).is_err());
        let id = Uuid::now_v7();
        assert!(new_blob_key(id).starts_with(&format!("tables/{id}/objects/")));
        assert_ne!(new_blob_key(id), new_blob_key(id));
    }

    #[test]
    fn parses_table_locations() {
        let id = Uuid::parse_str("8ab7b6a8-1c2d-4e5f-9a0b-123456789abc").unwrap();
        let loc = TableLocation::parse(&format!(
            "s3://{id}--table-s3/metadata/00000-x.metadata.json"
        ))
        .unwrap();
        assert_eq!(loc.table_id, id);
        assert_eq!(loc.key, "metadata/00000-x.metadata.json");
        assert_eq!(
            loc.blob_key(),
            format!("tables/{id}/metadata/00000-x.metadata.json")
        );
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
