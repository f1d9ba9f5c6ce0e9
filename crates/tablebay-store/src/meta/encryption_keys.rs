//! Key-check values of the master key versions that encrypted data: one row per (key id, version), written the
//! first time a server runs with that version, compared on every later start. The value identifies the key
//! material without revealing it (`encryption::MasterKey::check_value`).

use sqlx::Row;

use super::{MetaStore, codec};
use crate::StoreError;

/// What the stored check value says about a key version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyCheck {
    /// First use of this version: its value is now recorded.
    Recorded,
    /// The same key material as recorded.
    Matches,
    /// Other key material than recorded: data written with this version will not decrypt.
    Differs,
}

impl MetaStore {
    /// Records `check_value` for the key version if none is, and compares it with the recorded one.
    pub async fn check_key(
        &self,
        key_id: &str,
        version: u32,
        check_value: &str,
    ) -> Result<KeyCheck, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO encryption_keys (key_id, version, check_value, created_at_ms) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (key_id, version) DO NOTHING",
        )
        .bind(key_id)
        .bind(i64::from(version))
        .bind(check_value)
        .bind(codec::millis(chrono::Utc::now()))
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(KeyCheck::Recorded);
        }
        let row = sqlx::query(
            "SELECT check_value FROM encryption_keys WHERE key_id = $1 AND version = $2",
        )
        .bind(key_id)
        .bind(i64::from(version))
        .fetch_one(&self.pool)
        .await?;
        let stored: String = row.try_get("check_value")?;
        Ok(if stored == check_value {
            KeyCheck::Matches
        } else {
            KeyCheck::Differs
        })
    }

    /// Every recorded key version (key id, version).
    pub async fn recorded_keys(&self) -> Result<Vec<(String, u32)>, StoreError> {
        let rows =
            sqlx::query("SELECT key_id, version FROM encryption_keys ORDER BY key_id, version")
                .fetch_all(&self.pool)
                .await?;
        rows.iter()
            .map(|row| {
                let version: i64 = row.try_get("version")?;
                let version = u32::try_from(version)
                    .map_err(|_| StoreError::Corrupt(format!("key version {version}")))?;
                Ok((row.try_get("key_id")?, version))
            })
            .collect()
    }
}
