//! Encryption at rest as the object service sees it: which master key seals the new bytes of a table (the
//! table's setting, resolved by the catalog and passed in with the [`Storage`](crate::Storage)), what a write may
//! ask for, and what stored blobs report. The sealing itself is `tablebay-store`'s encryption module.

use tablebay_store::encryption::{BlobEncryption, KeyId};
use tablebay_store::meta::BlobSegment;

use crate::ObjectError;

/// How bytes are encrypted at rest: under the server's managed master key, or under a KMS key named by its ARN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectEncryption {
    /// The server's managed key (what S3 calls SSE with `AES256`).
    Managed,
    /// The KMS key with this ARN.
    Kms(String),
}

impl ObjectEncryption {
    /// The master key that seals bytes under this encryption.
    pub(crate) fn key(&self) -> KeyId {
        match self {
            Self::Managed => KeyId::Managed,
            Self::Kms(arn) => KeyId::Kms(arn.clone()),
        }
    }

    /// The encryption one stored blob reports.
    pub(crate) fn of_blob(encryption: &BlobEncryption) -> Self {
        match encryption.key_id() {
            KeyId::Managed => Self::Managed,
            KeyId::Kms(arn) => Self::Kms(arn.clone()),
        }
    }

    /// The encryption stored segments report (from the first encrypted one; `None` when plaintext).
    pub(crate) fn of_segments(segments: &[BlobSegment]) -> Option<Self> {
        segments
            .iter()
            .find_map(|s| s.encryption.as_ref())
            .map(Self::of_blob)
    }
}

/// The server-side encryption a write asks for. A table's data is encrypted only as its setting says, so the
/// request must name the table's encryption or none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestedEncryption {
    /// The server's managed key.
    Managed,
    /// A KMS key: the table's, or the one named (an ARN, or the key id that ends one).
    Kms {
        /// The key named, if any.
        key_id: Option<String>,
    },
}

impl RequestedEncryption {
    /// Checks the request against the table's encryption; `EncryptionMismatch` when it asks for another.
    pub(crate) fn check(&self, table: &ObjectEncryption) -> Result<(), ObjectError> {
        let allowed = match (self, table) {
            (Self::Managed, ObjectEncryption::Managed) => true,
            (Self::Kms { key_id: None }, ObjectEncryption::Kms(_)) => true,
            (
                Self::Kms {
                    key_id: Some(asked),
                },
                ObjectEncryption::Kms(arn),
            ) => asked == arn || arn.ends_with(&format!("/{asked}")),
            (Self::Managed, ObjectEncryption::Kms(_))
            | (Self::Kms { .. }, ObjectEncryption::Managed) => false,
        };
        if allowed {
            Ok(())
        } else {
            Err(ObjectError::EncryptionMismatch {
                requested: self.clone(),
                table: table.clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_must_name_the_tables_encryption() {
        let arn = "arn:aws:kms:us-east-1:111122223333:key/abc".to_string();
        let kms = ObjectEncryption::Kms(arn.clone());
        let asking = |key_id: Option<&str>| RequestedEncryption::Kms {
            key_id: key_id.map(str::to_string),
        };
        for (requested, table, ok) in [
            (
                RequestedEncryption::Managed,
                ObjectEncryption::Managed,
                true,
            ),
            (RequestedEncryption::Managed, kms.clone(), false),
            (asking(None), ObjectEncryption::Managed, false),
            (asking(None), kms.clone(), true),
            (asking(Some(&arn)), kms.clone(), true),
            (asking(Some("abc")), kms.clone(), true),
            (asking(Some("bc")), kms.clone(), false),
            (asking(Some("other")), kms.clone(), false),
        ] {
            assert_eq!(
                requested.check(&table).is_ok(),
                ok,
                "{requested:?} on {table:?}"
            );
        }
    }
}
