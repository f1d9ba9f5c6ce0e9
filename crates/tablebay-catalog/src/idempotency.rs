//! Idempotent retries: the first answer to a mutation carrying an `Idempotency-Key` is kept for
//! [`IDEMPOTENCY_LIFETIME`] and handed back to retries with the same key instead of applying them again.
//! Only successful answers are kept (a failed mutation changed nothing, so a retry may as well run again).
//! Expired keys are swept now and then by the writes themselves, so no background job is needed.

use chrono::{Duration, Utc};
use tablebay_store::meta::IdempotencyRecord;

use crate::{AccountId, Catalog, CatalogError, IcebergTable};

/// How long an answer is kept: one hour, advertised as `idempotency-key-lifetime` `PT1H`.
pub const IDEMPOTENCY_LIFETIME: Duration = Duration::hours(1);

/// A remembered answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RememberedReply {
    /// What the request was (method and path): a key reused for another request is an error.
    pub fingerprint: String,
    /// HTTP status of the answer.
    pub status: u16,
    /// Its body (empty for none).
    pub body: String,
}

/// The answer to an idempotent commit, stored with the commit itself
/// ([`Catalog::commit_tables_remembering`]).
pub struct RememberedCommit<'a> {
    /// Whose key it is.
    pub account: &'a AccountId,
    /// The `Idempotency-Key`.
    pub key: &'a str,
    /// What the request was (see [`RememberedReply::fingerprint`]).
    pub fingerprint: String,
    /// Renders the answer (status and body) from the tables as the commit leaves them.
    #[allow(clippy::type_complexity)]
    pub answer: Box<dyn Fn(&[IcebergTable]) -> Result<(u16, String), CatalogError> + Send + Sync + 'a>,
}

impl RememberedCommit<'_> {
    /// The record to store for the committed `tables`.
    pub(crate) fn record(&self, tables: &[IcebergTable]) -> Result<IdempotencyRecord, CatalogError> {
        let (status, body) = (self.answer)(tables)?;
        let now = Utc::now();
        Ok(IdempotencyRecord {
            scope: self.account.to_string(),
            key: self.key.to_string(),
            fingerprint: self.fingerprint.clone(),
            status,
            body,
            created_at: now,
            expires_at: now + IDEMPOTENCY_LIFETIME,
        })
    }
}

/// Sweep expired keys on about one write in this many.
const SWEEP_EVERY: u8 = 64;

impl Catalog {
    /// The unexpired answer remembered for `key` of `account`, if any.
    pub async fn remembered_reply(
        &self,
        account: &AccountId,
        key: &str,
    ) -> Result<Option<RememberedReply>, CatalogError> {
        let record = self
            .meta
            .idempotency_record(account.as_str(), key, Utc::now())
            .await?;
        Ok(record.map(|r| RememberedReply {
            fingerprint: r.fingerprint,
            status: r.status,
            body: r.body,
        }))
    }

    /// Remembers the answer to `key` of `account` (the first one wins if two race).
    pub async fn remember_reply(
        &self,
        account: &AccountId,
        key: &str,
        reply: RememberedReply,
    ) -> Result<(), CatalogError> {
        let now = Utc::now();
        let record = IdempotencyRecord {
            scope: account.to_string(),
            key: key.to_string(),
            fingerprint: reply.fingerprint,
            status: reply.status,
            body: reply.body,
            created_at: now,
            expires_at: now + IDEMPOTENCY_LIFETIME,
        };
        self.meta.insert_idempotency_record(&record).await?;
        if rand::random::<u8>().is_multiple_of(SWEEP_EVERY) {
            let swept = self.meta.sweep_idempotency_records(now).await?;
            tracing::debug!(swept, "expired idempotency keys removed");
        }
        Ok(())
    }
}
