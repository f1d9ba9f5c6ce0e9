//! Pagination of list operations: opaque continuation tokens and pages.
//!
//! A token encodes the sort key of the last item returned (base64url of a versioned string), so it stays
//! valid however the listing changes between calls, is never repeated, and is omitted on the last page
//! (`reference/s3tables-api.md` §1.6: aws-cli fails on a repeated token).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::ServiceError;

const TOKEN_VERSION: &str = "tb1:";

/// An opaque position in a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContinuationToken(String);

impl ContinuationToken {
    /// The token that resumes after the item whose sort key is `key`.
    pub fn after(key: &str) -> Self {
        Self(URL_SAFE_NO_PAD.encode(format!("{TOKEN_VERSION}{key}")))
    }

    /// Reads a token a client sent back; anything this server did not issue is a 400.
    pub fn parse(token: &str) -> Result<Self, ServiceError> {
        let invalid = || ServiceError::invalid("The continuation token provided is invalid");
        if token.is_empty() || token.len() > 2048 {
            return Err(invalid());
        }
        let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| invalid())?;
        let text = String::from_utf8(bytes).map_err(|_| invalid())?;
        if text.starts_with(TOKEN_VERSION) {
            Ok(Self(token.to_string()))
        } else {
            Err(invalid())
        }
    }

    /// The sort key after which the next page starts.
    pub fn key(&self) -> String {
        URL_SAFE_NO_PAD
            .decode(&self.0)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| text.strip_prefix(TOKEN_VERSION).map(str::to_string))
            .unwrap_or_default()
    }

    /// The token as sent on the wire.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a caller asks of a listing.
#[derive(Clone, Debug, Default)]
pub struct PageRequest {
    /// Only names starting with this.
    pub prefix: Option<String>,
    /// Resume after this position.
    pub token: Option<ContinuationToken>,
    /// At most this many items (1–1000).
    pub limit: u32,
}

impl PageRequest {
    /// The default and largest page size of the S3 Tables list operations.
    pub const MAX_LIMIT: u32 = 1000;

    /// Validates the limit (1–1000, default 1000) and the prefix length (`max_prefix` characters).
    pub fn new(
        prefix: Option<String>,
        token: Option<&str>,
        limit: Option<i64>,
        max_prefix: usize,
    ) -> Result<Self, ServiceError> {
        let limit = match limit {
            None => Self::MAX_LIMIT,
            Some(n) if (1..=i64::from(Self::MAX_LIMIT)).contains(&n) => n as u32,
            Some(n) => {
                return Err(ServiceError::invalid(format!(
                    "The page size must be between 1 and 1000, got {n}"
                )));
            }
        };
        if let Some(prefix) = &prefix
            && (prefix.is_empty() || prefix.len() > max_prefix)
        {
            return Err(ServiceError::invalid(format!(
                "prefix must be between 1 and {max_prefix} characters long"
            )));
        }
        let token = token.map(ContinuationToken::parse).transpose()?;
        Ok(Self {
            prefix,
            token,
            limit,
        })
    }
}

/// One page of a listing.
#[derive(Clone, Debug)]
pub struct Page<T> {
    /// The items, in listing order.
    pub items: Vec<T>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<ContinuationToken>,
}

impl<T> Page<T> {
    /// Builds a page from up to `limit + 1` fetched items: the extra one only proves there is more.
    pub(crate) fn from_overfetch(
        mut items: Vec<T>,
        limit: u32,
        key: impl Fn(&T) -> String,
    ) -> Self {
        let limit = limit as usize;
        let next = if items.len() > limit {
            items.truncate(limit);
            items
                .last()
                .map(|last| ContinuationToken::after(&key(last)))
        } else {
            None
        };
        Self { items, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_reject_garbage() {
        let token = ContinuationToken::after("ns\u{0}table");
        let parsed = ContinuationToken::parse(token.as_str()).unwrap();
        assert_eq!(parsed.key(), "ns\u{0}table");
        for bad in ["", "!!!", "abc", &URL_SAFE_NO_PAD.encode("other:x")] {
            assert!(ContinuationToken::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn limits() {
        assert_eq!(PageRequest::new(None, None, None, 63).unwrap().limit, 1000);
        assert!(PageRequest::new(None, None, Some(0), 63).is_err());
        assert!(PageRequest::new(None, None, Some(1001), 63).is_err());
        assert!(PageRequest::new(Some("x".repeat(64)), None, None, 63).is_err());
        assert!(PageRequest::new(Some(String::new()), None, None, 63).is_err());
    }

    #[test]
    fn overfetch_sets_the_next_token() {
        let page = Page::from_overfetch(vec!["a", "b", "c"], 2, |s| s.to_string());
        assert_eq!(page.items, vec!["a", "b"]);
        assert_eq!(page.next.unwrap().key(), "b");
        let last = Page::from_overfetch(vec!["a", "b"], 2, |s| s.to_string());
        assert!(last.next.is_none());
    }
}
