//! The end of an aws-chunked body: S3 refuses an upload whose body stops before the final zero-length chunk
//! (400 `IncompleteBody`), but s3s's decoder treats the end of the connection's body after any complete chunk
//! as a normal end. [`require_final_chunk`] wraps the raw body of every `STREAMING-*` request with
//! [`FinalChunk`], which follows only the chunk framing (size line, data, CRLF) and turns an end of body before
//! the zero-length chunk into an error. The decoder then fails the upload with that error, so nothing is stored.
//! Everything else (signatures, trailers, malformed framing) stays s3s's to check: when the framing is not what
//! this check understands, it steps aside.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

/// The text of the error an incomplete body ends with; `error.rs` maps it to `IncompleteBody`.
pub(crate) const MISSING_FINAL_CHUNK: &str =
    "the aws-chunked body ended without its final zero-length chunk";

/// Longest chunk size line followed (s3s allows 1 KiB: the size, `;chunk-signature=` and 64 hex digits).
const MAX_SIZE_LINE: usize = 4096;

/// Wraps the body of an aws-chunked request (`x-amz-content-sha256: STREAMING-…`) with [`FinalChunk`]; other
/// requests pass unchanged.
pub(crate) fn require_final_chunk(request: Request) -> Request {
    let streaming = request
        .headers()
        .get("x-amz-content-sha256")
        .is_some_and(|v| v.as_bytes().starts_with(b"STREAMING-"));
    if streaming {
        request.map(|body| Body::new(FinalChunk::new(body)))
    } else {
        request
    }
}

/// Where the framing of the body stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    /// In a chunk's size line: its length so far, the hex size read, and whether the size ended (at `;`).
    SizeLine {
        len: usize,
        size: Option<u64>,
        extension: bool,
    },
    /// In a chunk's data and the CRLF after it: bytes left.
    Data(u64),
    /// The zero-length chunk was seen; what follows (trailers) is s3s's.
    Done,
    /// Not framing this check follows (s3s reports it); or the error was already given.
    Off,
}

impl Framing {
    const START: Framing = Framing::SizeLine {
        len: 0,
        size: None,
        extension: false,
    };

    /// Follows `bytes` of the body.
    fn advance(mut self, mut bytes: &[u8]) -> Self {
        while !bytes.is_empty() {
            match self {
                Framing::Done | Framing::Off => return self,
                Framing::Data(left) => {
                    let n = bytes.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    bytes = bytes.get(n..).unwrap_or_default();
                    // `n` fits in `left` by construction.
                    let left = left - n as u64;
                    self = if left == 0 {
                        Framing::START
                    } else {
                        Framing::Data(left)
                    };
                }
                Framing::SizeLine {
                    len,
                    size,
                    extension,
                } => {
                    let Some((&byte, rest)) = bytes.split_first() else {
                        return self;
                    };
                    bytes = rest;
                    self = Self::size_line_byte(byte, len, size, extension);
                }
            }
        }
        self
    }

    fn size_line_byte(byte: u8, len: usize, size: Option<u64>, extension: bool) -> Self {
        if len >= MAX_SIZE_LINE {
            return Framing::Off;
        }
        let len = len + 1;
        match (byte, extension) {
            (b'\n', _) => match size {
                Some(0) => Framing::Done,
                // The chunk's data, then its CRLF.
                Some(size) => size.checked_add(2).map_or(Framing::Off, Framing::Data),
                None => Framing::Off,
            },
            (b'\r', _) | (_, true) => Framing::SizeLine {
                len,
                size,
                extension,
            },
            (b';', false) => Framing::SizeLine {
                len,
                size,
                extension: true,
            },
            (_, false) => match (char::from(byte).to_digit(16), size) {
                (Some(digit), size) => size
                    .unwrap_or(0)
                    .checked_mul(16)
                    .and_then(|s| s.checked_add(u64::from(digit)))
                    .map_or(Framing::Off, |size| Framing::SizeLine {
                        len,
                        size: Some(size),
                        extension,
                    }),
                (None, _) => Framing::Off,
            },
        }
    }

    /// Whether a body that ends here lacks its final chunk.
    fn incomplete(self) -> bool {
        matches!(self, Framing::SizeLine { .. } | Framing::Data(_))
    }
}

/// A request body that ends with an error instead of ending before its final zero-length aws-chunked chunk.
pub(crate) struct FinalChunk {
    inner: Body,
    framing: Framing,
}

impl FinalChunk {
    fn new(inner: Body) -> Self {
        Self {
            inner,
            framing: Framing::START,
        }
    }
}

impl HttpBody for FinalChunk {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    self.framing = self.framing.advance(data);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) if self.framing.incomplete() => {
                self.framing = Framing::Off;
                Poll::Ready(Some(Err(MISSING_FINAL_CHUNK.into())))
            }
            Poll::Ready(None) => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        // The error is still owed at the end of an incomplete body.
        self.inner.is_end_stream() && !self.framing.incomplete()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    fn framing(body: &[u8]) -> Framing {
        Framing::START.advance(body)
    }

    #[test]
    fn follows_the_framing() {
        let sig = "a".repeat(64);
        let complete =
            format!("5;chunk-signature={sig}\r\nhello\r\n0;chunk-signature={sig}\r\n\r\n");
        assert_eq!(framing(complete.as_bytes()), Framing::Done);
        let unsigned =
            b"5\r\nhello\r\na\r\n0123456789\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n";
        assert_eq!(framing(unsigned), Framing::Done);
        // Split anywhere, the same.
        for at in 0..unsigned.len() {
            let (a, b) = unsigned.split_at(at);
            assert_eq!(Framing::START.advance(a).advance(b), Framing::Done, "{at}");
        }
        for incomplete in [
            &b""[..],
            b"5\r\nhello\r\n",
            b"5\r\nhel",
            b"5\r\nhello\r",
            b"5;chunk-signature=ab",
            b"5\r\nhello\r\n0",
        ] {
            assert!(framing(incomplete).incomplete(), "{incomplete:?}");
        }
        // Framing it does not understand is s3s's to report.
        for odd in [&b"zz\r\n"[..], b"\r\n", b"ffffffffffffffffff\r\n"] {
            assert_eq!(framing(odd), Framing::Off, "{odd:?}");
        }
        assert_eq!(framing(&[b'1'; MAX_SIZE_LINE + 1]), Framing::Off);
    }

    async fn collect(body: &[u8]) -> Result<Vec<u8>, String> {
        let wrapped = FinalChunk::new(Body::from(body.to_vec()));
        wrapped
            .collect()
            .await
            .map(|c| c.to_bytes().to_vec())
            .map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn an_incomplete_body_ends_with_an_error() {
        let complete = b"5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(collect(complete).await.unwrap(), complete.to_vec());
        assert_eq!(
            collect(b"5\r\nhello\r\n").await.unwrap_err(),
            MISSING_FINAL_CHUNK
        );
    }
}
