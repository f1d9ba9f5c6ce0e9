//! The one parser of `application/x-www-form-urlencoded` text, for query strings and form bodies alike (the
//! WHATWG URL standard's `application/x-www-form-urlencoded` parsing): pairs split on `&`, key and value on the
//! first `=`, `+` is a space, `%XX` is a byte, and the result must be UTF-8. Every client this server meets
//! encodes that way (botocore, Java's `URLEncoder`, Python's `urlencode`); names and tokens that could hold a
//! literal `+` (pagination tokens) are base64url, so the reading is unambiguous.

use percent_encoding::percent_decode;

/// Decoded `key=value` pairs, in order; keys may repeat (`tagKeys=a&tagKeys=b`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FormPairs(Vec<(String, String)>);

/// A pair that does not decode to UTF-8.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not valid percent-encoded UTF-8")]
pub(crate) struct FormError(String);

impl FormPairs {
    /// Parses raw form text (a query string without its `?`, or a form body).
    pub(crate) fn parse(raw: &str) -> Result<Self, FormError> {
        raw.split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                Ok((decode_component(key)?, decode_component(value)?))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    /// Parses an optional query string.
    pub(crate) fn query(raw: Option<&str>) -> Result<Self, FormError> {
        Self::parse(raw.unwrap_or_default())
    }

    /// The first value of `key`.
    pub(crate) fn first(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order.
    pub(crate) fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every pair, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// One form-encoded component, decoded.
pub(crate) fn decode_component(raw: &str) -> Result<String, FormError> {
    let spaced = raw.replace('+', " ");
    percent_decode(spaced.as_bytes())
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| FormError(raw.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_as_browsers_and_sdks_encode() {
        let pairs =
            FormPairs::parse("a=1&b=x+y%2Bz&tagKeys=k1&tagKeys=k2&flag&=v&&t=abc%2F%3D").unwrap();
        assert_eq!(pairs.first("a"), Some("1"));
        assert_eq!(pairs.first("b"), Some("x y+z"));
        assert_eq!(pairs.all("tagKeys").collect::<Vec<_>>(), ["k1", "k2"]);
        assert_eq!(pairs.first("flag"), Some(""));
        assert_eq!(pairs.first(""), Some("v"));
        assert_eq!(pairs.first("t"), Some("abc/="));
        assert_eq!(pairs.first("missing"), None);
        assert_eq!(FormPairs::query(None).unwrap(), FormPairs::default());
        assert!(FormPairs::parse("a=%FF").is_err());
        assert!(FormPairs::parse("%C3=1").is_err());
        assert_eq!(
            FormPairs::parse("a=caf%C3%A9").unwrap().first("a"),
            Some("café")
        );
    }
}
