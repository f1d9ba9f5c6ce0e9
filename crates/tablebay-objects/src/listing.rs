//! Listings of a table's storage: prefix, delimiter (common prefixes), start-after / continuation, and
//! page size, in byte order of keys.
//!
//! Keys are read from the store in batches; a key that rolls up into a common prefix makes the next batch start
//! past every key with that prefix (`prefix_end`), so a directory with a million files costs one query, not a
//! million rows.

use tablebay_store::meta::{KeyRange, KeyStart};
use uuid::Uuid;

use crate::object::object_info;
use crate::{ObjectError, ObjectInfo, Objects};

/// Most keys one page may return, as S3.
pub const MAX_LIST_KEYS: u32 = 1000;

/// Rows fetched per store query.
const BATCH: u32 = 1000;

/// A listing request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListRequest {
    /// Only keys starting with this.
    pub prefix: String,
    /// Roll keys up to the first occurrence of this after the prefix.
    pub delimiter: Option<String>,
    /// Only keys (and common prefixes) after this one: `start-after`, a V1 `marker`, or a decoded continuation
    /// token (the last entry of the previous page).
    pub after: Option<String>,
    /// Page size (capped at [`MAX_LIST_KEYS`]).
    pub max_keys: u32,
}

/// One page of a listing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Objects, in key order.
    pub objects: Vec<ObjectInfo>,
    /// Common prefixes (each ends with the delimiter), in order.
    pub common_prefixes: Vec<String>,
    /// Whether more entries follow.
    pub truncated: bool,
    /// The last entry returned (a key or a common prefix) when truncated: where the next page starts.
    pub next_after: Option<String>,
}

impl Objects {
    /// Lists the objects of a table's storage.
    pub async fn list_objects(
        &self,
        table_id: Uuid,
        request: &ListRequest,
    ) -> Result<Listing, ObjectError> {
        let prefix = request.prefix.as_str();
        let delimiter = request.delimiter.as_deref().filter(|d| !d.is_empty());
        let max = request.max_keys.min(MAX_LIST_KEYS) as usize;
        if max == 0 {
            // S3 answers an empty, untruncated page (a truncated one without a continuation would loop clients).
            return Ok(Listing::default());
        }
        let end = prefix_end(prefix);
        let mut start = start_of(prefix, delimiter, request.after.as_deref());
        let mut listing = Listing::default();
        let mut last: Option<String> = None;
        let mut count = 0usize;
        'pages: while let Some(from) = start.take() {
            let range = KeyRange {
                start: Some(from.as_start()),
                end: end.as_deref(),
            };
            let records = self.meta.list_objects(table_id, range, BATCH).await?;
            let full_batch = records.len() == BATCH as usize;
            for record in records {
                if count == max {
                    listing.truncated = true;
                    break 'pages;
                }
                let rest = record.key.get(prefix.len()..).unwrap_or_default();
                if let Some(at) = delimiter.and_then(|d| rest.find(d).map(|i| i + d.len())) {
                    let common = format!("{prefix}{}", rest.get(..at).unwrap_or_default());
                    // Skip every other key under this prefix: restart at the first key past it.
                    start = prefix_end(&common).map(Start::AtOrAfter);
                    last = Some(common.clone());
                    listing.common_prefixes.push(common);
                    count += 1;
                    continue 'pages;
                }
                last = Some(record.key.clone());
                start = Some(Start::After(record.key.clone()));
                listing.objects.push(object_info(record)?);
                count += 1;
            }
            if !full_batch {
                break;
            }
        }
        if listing.truncated {
            listing.next_after = last;
        }
        Ok(listing)
    }
}

/// A key-range start the listing owns.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Start {
    After(String),
    AtOrAfter(String),
}

impl Start {
    fn as_start(&self) -> KeyStart<'_> {
        match self {
            Self::After(key) => KeyStart::After(key),
            Self::AtOrAfter(key) => KeyStart::AtOrAfter(key),
        }
    }
}

/// Where a listing starts: at the prefix, or after the marker if that is later. A marker that is itself a common
/// prefix (the last entry of a previous page) skips that whole prefix.
fn start_of(prefix: &str, delimiter: Option<&str>, after: Option<&str>) -> Option<Start> {
    match after {
        Some(after) if after >= prefix => {
            let rolled_up = delimiter.is_some_and(|d| {
                after
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.find(d).map(|i| i + d.len()))
                    == Some(after.len() - prefix.len())
            });
            if rolled_up {
                prefix_end(after).map(Start::AtOrAfter)
            } else {
                Some(Start::After(after.to_string()))
            }
        }
        _ => Some(Start::AtOrAfter(prefix.to_string())),
    }
}

/// The least string greater than every string starting with `prefix` (in byte order, which for UTF-8 is code
/// point order): the prefix with its last character incremented. `None` when there is no such string (empty
/// prefix, or only U+10FFFF characters).
pub(crate) fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match last {
            '\u{D7FF}' => Some('\u{E000}'),
            c => char::from_u32(u32::from(c) + 1),
        };
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(""), None);
        assert_eq!(prefix_end("a/"), Some("a0".into()));
        assert_eq!(prefix_end("abc"), Some("abd".into()));
        assert_eq!(prefix_end("a\u{10FFFF}"), Some("b".into()));
        assert_eq!(prefix_end("\u{D7FF}"), Some("\u{E000}".into()));
        assert_eq!(prefix_end("\u{10FFFF}"), None);
        for p in ["a/", "x\u{7F}", "é", "日本"] {
            let end = prefix_end(p).unwrap();
            assert!(
                format!("{p}\u{10FFFF}\u{10FFFF}").as_str() < end.as_str(),
                "{p}"
            );
            assert!(p < end.as_str());
        }
    }

    #[test]
    fn starts() {
        assert_eq!(
            start_of("p/", None, None),
            Some(Start::AtOrAfter("p/".into()))
        );
        assert_eq!(
            start_of("p/", None, Some("a")),
            Some(Start::AtOrAfter("p/".into()))
        );
        assert_eq!(
            start_of("p/", None, Some("p/x")),
            Some(Start::After("p/x".into()))
        );
        assert_eq!(
            start_of("p/", Some("/"), Some("p/x/")),
            Some(Start::AtOrAfter("p/x0".into()))
        );
        assert_eq!(
            start_of("p/", Some("/"), Some("p/x/y")),
            Some(Start::After("p/x/y".into()))
        );
        assert_eq!(
            start_of("", Some("/"), Some("a/")),
            Some(Start::AtOrAfter("a0".into()))
        );
    }
}
