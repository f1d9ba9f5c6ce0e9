//! What a read of an object returns: preconditions (`If-Match`, `If-None-Match`, `If-Modified-Since`,
//! `If-Unmodified-Since`), the byte range (`Range: bytes=a-b`, `bytes=a-`, suffix `bytes=-n`, or one part of a
//! multipart object), and which pieces of which blob segments hold that range.

use std::ops::Range;

use chrono::{DateTime, Utc};
use tablebay_store::meta::BlobSegment;

use crate::{MAX_PART_NUMBER, ObjectError};

/// An entity-tag condition of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtagCondition {
    /// `*`: any current object.
    Any,
    /// This ETag (without quotes).
    Etag(String),
}

impl EtagCondition {
    fn matches(&self, etag: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Etag(want) => want.trim_matches('"') == etag,
        }
    }
}

/// The conditional headers of a GET or HEAD.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// `If-Match`.
    pub if_match: Option<EtagCondition>,
    /// `If-None-Match`.
    pub if_none_match: Option<EtagCondition>,
    /// `If-Modified-Since`.
    pub if_modified_since: Option<DateTime<Utc>>,
    /// `If-Unmodified-Since`.
    pub if_unmodified_since: Option<DateTime<Utc>>,
}

impl Preconditions {
    /// Evaluates the conditions against an object's ETag and modification time, in RFC 9110 §13.2.2 order:
    /// `If-Match` (else `If-Unmodified-Since`) → 412, then `If-None-Match` (else `If-Modified-Since`) → 304.
    /// HTTP dates have whole seconds, so times compare at that precision.
    pub fn check(&self, etag: &str, modified: DateTime<Utc>) -> Result<(), ObjectError> {
        let modified = modified.timestamp();
        match (&self.if_match, self.if_unmodified_since) {
            (Some(condition), _) if !condition.matches(etag) => {
                return Err(ObjectError::PreconditionFailed);
            }
            (None, Some(since)) if modified > since.timestamp() => {
                return Err(ObjectError::PreconditionFailed);
            }
            _ => {}
        }
        match (&self.if_none_match, self.if_modified_since) {
            (Some(condition), _) if condition.matches(etag) => Err(ObjectError::NotModified),
            (None, Some(since)) if modified <= since.timestamp() => Err(ObjectError::NotModified),
            _ => Ok(()),
        }
    }
}

/// A `Range` header's single byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteRange {
    /// `bytes=first-` or `bytes=first-last` (inclusive).
    From {
        /// First byte.
        first: u64,
        /// Last byte, inclusive.
        last: Option<u64>,
    },
    /// `bytes=-length`: the last `length` bytes.
    Suffix(u64),
}

impl ByteRange {
    /// The bytes of an object of `size` bytes this range selects; `InvalidRange` if none.
    pub fn resolve(self, size: u64) -> Result<Range<u64>, ObjectError> {
        match self {
            Self::From { first, last } => {
                if first >= size || last.is_some_and(|last| last < first) {
                    return Err(ObjectError::InvalidRange);
                }
                let end = last.map_or(size, |last| last.saturating_add(1).min(size));
                Ok(first..end)
            }
            Self::Suffix(0) => Err(ObjectError::InvalidRange),
            Self::Suffix(length) => Ok(size.saturating_sub(length)..size),
        }
    }
}

/// What part of an object a read wants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadRequest {
    /// A byte range.
    pub range: Option<ByteRange>,
    /// One part of a multipart object (1-based); part 1 of a single-part object is all of it.
    pub part_number: Option<u32>,
    /// Conditional headers.
    pub preconditions: Preconditions,
}

/// The bytes `request` selects from an object of these segments and `parts_count`, and whether that is a partial
/// answer (206 with `Content-Range`).
pub(crate) fn select(
    request: &ReadRequest,
    segments: &[BlobSegment],
    size: u64,
    parts_count: Option<u32>,
) -> Result<(Range<u64>, bool), ObjectError> {
    match (request.range, request.part_number) {
        (Some(_), Some(_)) => Err(ObjectError::RangeAndPart),
        (Some(range), None) => Ok((range.resolve(size)?, true)),
        (None, Some(part)) => {
            if part == 0 {
                return Err(ObjectError::Invalid(format!(
                    "Part number must be an integer between 1 and {MAX_PART_NUMBER}"
                )));
            }
            if parts_count.is_none() {
                // S3 treats a single-part object as one part.
                return if part == 1 {
                    Ok((0..size, false))
                } else {
                    Err(ObjectError::InvalidRange)
                };
            }
            let index = usize::try_from(part - 1).map_err(|_| ObjectError::InvalidRange)?;
            let start: u64 = segments.iter().take(index).map(|s| s.size).sum();
            let segment = segments.get(index).ok_or(ObjectError::InvalidRange)?;
            Ok((start..start + segment.size, true))
        }
        (None, None) => Ok((0..size, false)),
    }
}

/// The pieces of `segments` (the segment and the byte range inside it) that hold bytes `range` of the object,
/// in order. Empty segments are skipped.
pub(crate) fn pieces(
    segments: &[BlobSegment],
    range: Range<u64>,
) -> Vec<(BlobSegment, Range<u64>)> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    for segment in segments {
        let (start, end) = (offset, offset + segment.size);
        offset = end;
        let from = range.start.max(start);
        let to = range.end.min(end);
        if from < to {
            out.push((segment.clone(), (from - start)..(to - start)));
        }
        if end >= range.end {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(key: &str, size: u64) -> BlobSegment {
        BlobSegment::plain(key, size)
    }

    #[test]
    fn ranges() {
        use ByteRange::*;
        for (range, size, want) in [
            (
                From {
                    first: 0,
                    last: Some(0),
                },
                10,
                Some(0..1),
            ),
            (
                From {
                    first: 2,
                    last: Some(5),
                },
                10,
                Some(2..6),
            ),
            (
                From {
                    first: 2,
                    last: Some(500),
                },
                10,
                Some(2..10),
            ),
            (
                From {
                    first: 9,
                    last: None,
                },
                10,
                Some(9..10),
            ),
            (
                From {
                    first: 10,
                    last: None,
                },
                10,
                None,
            ),
            (
                From {
                    first: 5,
                    last: Some(4),
                },
                10,
                None,
            ),
            (
                From {
                    first: 0,
                    last: None,
                },
                0,
                None,
            ),
            (
                From {
                    first: 0,
                    last: Some(u64::MAX),
                },
                10,
                Some(0..10),
            ),
            (Suffix(3), 10, Some(7..10)),
            (Suffix(30), 10, Some(0..10)),
            (Suffix(0), 10, None),
            (Suffix(5), 0, Some(0..0)),
        ] {
            assert_eq!(range.resolve(size).ok(), want, "{range:?} of {size}");
        }
    }

    #[test]
    fn preconditions() {
        let t = DateTime::from_timestamp(1_700_000_000, 500_000_000).unwrap();
        let earlier = DateTime::from_timestamp(1_699_999_999, 0).unwrap();
        let same_second = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let etag = |s: &str| Some(EtagCondition::Etag(s.into()));
        let ok = |p: Preconditions| p.check("abc", t).is_ok();
        let code = |p: Preconditions| match p.check("abc", t) {
            Ok(()) => 200,
            Err(ObjectError::PreconditionFailed) => 412,
            Err(ObjectError::NotModified) => 304,
            Err(e) => panic!("{e}"),
        };
        assert!(ok(Preconditions::default()));
        assert_eq!(
            code(Preconditions {
                if_match: etag("abc"),
                ..Default::default()
            }),
            200
        );
        assert_eq!(
            code(Preconditions {
                if_match: etag("\"abc\""),
                ..Default::default()
            }),
            200
        );
        assert_eq!(
            code(Preconditions {
                if_match: etag("xyz"),
                ..Default::default()
            }),
            412
        );
        assert_eq!(
            code(Preconditions {
                if_match: Some(EtagCondition::Any),
                ..Default::default()
            }),
            200
        );
        assert_eq!(
            code(Preconditions {
                if_none_match: etag("abc"),
                ..Default::default()
            }),
            304
        );
        assert_eq!(
            code(Preconditions {
                if_none_match: Some(EtagCondition::Any),
                ..Default::default()
            }),
            304
        );
        assert_eq!(
            code(Preconditions {
                if_none_match: etag("xyz"),
                ..Default::default()
            }),
            200
        );
        assert_eq!(
            code(Preconditions {
                if_modified_since: Some(same_second),
                ..Default::default()
            }),
            304
        );
        assert_eq!(
            code(Preconditions {
                if_modified_since: Some(earlier),
                ..Default::default()
            }),
            200
        );
        assert_eq!(
            code(Preconditions {
                if_unmodified_since: Some(earlier),
                ..Default::default()
            }),
            412
        );
        assert_eq!(
            code(Preconditions {
                if_unmodified_since: Some(same_second),
                ..Default::default()
            }),
            200
        );
        // If-Match that holds overrides a failing If-Unmodified-Since; If-None-Match overrides If-Modified-Since.
        assert_eq!(
            code(Preconditions {
                if_match: etag("abc"),
                if_unmodified_since: Some(earlier),
                ..Default::default()
            }),
            200
        );
        assert_eq!(
            code(Preconditions {
                if_none_match: etag("xyz"),
                if_modified_since: Some(same_second),
                ..Default::default()
            }),
            200
        );
    }

    #[test]
    fn pieces_cross_segment_boundaries() {
        let segments = [seg("a", 5), seg("b", 0), seg("c", 5), seg("d", 3)];
        let pieces = |segments: &[BlobSegment], range| -> Vec<(String, Range<u64>)> {
            pieces(segments, range)
                .into_iter()
                .map(|(s, r)| (s.key, r))
                .collect()
        };
        assert_eq!(
            pieces(&segments, 0..13),
            vec![("a".into(), 0..5), ("c".into(), 0..5), ("d".into(), 0..3)]
        );
        assert_eq!(
            pieces(&segments, 3..7),
            vec![("a".into(), 3..5), ("c".into(), 0..2)]
        );
        assert_eq!(pieces(&segments, 5..10), vec![("c".into(), 0..5)]);
        assert_eq!(pieces(&segments, 12..13), vec![("d".into(), 2..3)]);
        assert_eq!(pieces(&segments, 4..4), Vec::<(String, Range<u64>)>::new());
    }

    #[test]
    fn part_numbers_select_segments() {
        let segments = [seg("a", 5), seg("b", 7)];
        let read = |part| ReadRequest {
            part_number: Some(part),
            ..Default::default()
        };
        assert_eq!(
            select(&read(2), &segments, 12, Some(2)).unwrap(),
            (5..12, true)
        );
        assert!(select(&read(3), &segments, 12, Some(2)).is_err());
        assert_eq!(
            select(&read(1), &segments[..1], 5, None).unwrap(),
            (0..5, false)
        );
        let both = ReadRequest {
            part_number: Some(1),
            range: Some(ByteRange::Suffix(1)),
            ..Default::default()
        };
        assert!(select(&both, &segments, 12, Some(2)).is_err());
    }
}
