//! What both router targets share: the input format, and two independent, strict readings of JSON bodies: the one
//! the issue names (`std::str::from_utf8` + `serde_json::Value`), and an RFC 8259 reader written here that keeps
//! repeated members, so that a body can be read both "first member wins" and "last member wins".
//!
//! Input: the first line is `METHOD /path[?query]`, everything after the first `\n` is the body. Seeds are real
//! requests written that way.
#![allow(dead_code)]

/// A request split out of the fuzz input; `None` when the request line is not text or has no method.
pub struct Request<'a> {
    pub method: http::Method,
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub body: &'a [u8],
}

pub fn request(data: &[u8]) -> Option<Request<'_>> {
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let (line, body) = data.split_at(split);
    let body = body.get(1..).unwrap_or_default();
    let line = std::str::from_utf8(line).ok()?;
    let (method, target) = line.split_once(' ')?;
    let method = http::Method::from_bytes(method.as_bytes()).ok()?;
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    Some(Request {
        method,
        path,
        query,
        body,
    })
}

/// A JSON document with every member kept, in order (duplicates included).
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number,
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// Which of several members of the same name a reader takes.
#[derive(Clone, Copy, Debug)]
pub enum Pick {
    First,
    Last,
}

impl Json {
    /// Reads a body strictly: UTF-8 (the whole of it), then one RFC 8259 document ([`Parser`]).
    pub fn read(body: &[u8]) -> Option<Json> {
        Parser::document(std::str::from_utf8(body).ok()?)
    }

    pub fn member(&self, name: &str, pick: Pick) -> Option<&Json> {
        let Json::Object(members) = self else {
            return None;
        };
        let mut named = members.iter().filter(|(k, _)| k == name).map(|(_, v)| v);
        match pick {
            Pick::First => named.next(),
            Pick::Last => named.last(),
        }
    }

    /// A member that is present and not `null` (serde reads `null` as an absent `Option`).
    pub fn present(&self, name: &str, pick: Pick) -> Option<&Json> {
        self.member(name, pick).filter(|v| **v != Json::Null)
    }

    pub fn str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }
}

/// A strict reader of RFC 8259 JSON, written apart from serde_json: UTF-8 text, one value, members kept in order.
/// It has no limits of its own (numbers of any size, any depth), so that it reads every document serde could
/// accept, including what serde only skips (`serde_json::Value` refuses `1e400`, `"\ud800"` and more than 128
/// levels, which a typed parse skips in members it ignores). A lone surrogate escape reads as U+FFFD.
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn document(text: &str) -> Option<Json> {
        let mut parser = Parser {
            text: text.as_bytes(),
            at: 0,
        };
        let value = parser.value()?;
        parser.whitespace();
        (parser.at == parser.text.len()).then_some(value)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn eat(&mut self, literal: &[u8]) -> Option<()> {
        let end = self.at.checked_add(literal.len())?;
        (self.text.get(self.at..end)? == literal).then(|| self.at = end)
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Option<Json> {
        self.whitespace();
        match self.peek()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string().map(Json::String),
            b't' => self.eat(b"true").map(|()| Json::Bool(true)),
            b'f' => self.eat(b"false").map(|()| Json::Bool(false)),
            b'n' => self.eat(b"null").map(|()| Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn digits(&mut self) -> Option<()> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        (self.at > start).then_some(())
    }

    fn number(&mut self) -> Option<Json> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => {
                let _ = self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.digits()?;
        }
        Some(Json::Number)
    }

    fn hex4(&mut self) -> Option<u32> {
        let end = self.at.checked_add(4)?;
        let hex = std::str::from_utf8(self.text.get(self.at..end)?).ok()?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at = end;
        u32::from_str_radix(hex, 16).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.eat(b"\"")?;
        let mut out = Vec::new();
        loop {
            match self.next()? {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let c = match self.next()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let unit = self.hex4()?;
                            let low = if (0xD800..0xDC00).contains(&unit) {
                                let save = self.at;
                                let low = self
                                    .eat(b"\\u")
                                    .and_then(|()| self.hex4())
                                    .filter(|low| (0xDC00..0xE000).contains(low));
                                if low.is_none() {
                                    self.at = save;
                                }
                                low
                            } else {
                                None
                            };
                            let code = match low {
                                Some(low) => 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                                None => unit,
                            };
                            char::from_u32(code).unwrap_or('\u{fffd}')
                        }
                        _ => return None,
                    };
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                b if b < 0x20 => return None,
                b => out.push(b),
            }
        }
    }

    fn array(&mut self) -> Option<Json> {
        self.eat(b"[")?;
        let mut items = Vec::new();
        self.whitespace();
        if self.eat(b"]").is_some() {
            return Some(Json::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.whitespace();
            match self.next()? {
                b',' => {}
                b']' => return Some(Json::Array(items)),
                _ => return None,
            }
        }
    }

    fn object(&mut self) -> Option<Json> {
        self.eat(b"{")?;
        let mut members = Vec::new();
        self.whitespace();
        if self.eat(b"}").is_some() {
            return Some(Json::Object(members));
        }
        loop {
            self.whitespace();
            let key = self.string()?;
            self.whitespace();
            self.eat(b":")?;
            members.push((key, self.value()?));
            self.whitespace();
            match self.next()? {
                b',' => {}
                b'}' => return Some(Json::Object(members)),
                _ => return None,
            }
        }
    }
}

/// The reading the issue names: `std::str::from_utf8` + `serde_json::Value` (a repeated member: the last one
/// wins), as a [`Json`] with one member per name.
pub fn read_value(body: &[u8]) -> Option<Json> {
    let value: serde_json::Value = serde_json::from_str(std::str::from_utf8(body).ok()?).ok()?;
    Some(from_value(value))
}

fn from_value(value: serde_json::Value) -> Json {
    use serde_json::Value as V;
    match value {
        V::Null => Json::Null,
        V::Bool(b) => Json::Bool(b),
        V::Number(_) => Json::Number,
        V::String(s) => Json::String(s),
        V::Array(items) => Json::Array(items.into_iter().map(from_value).collect()),
        V::Object(members) => {
            Json::Object(members.into_iter().map(|(k, v)| (k, from_value(v))).collect())
        }
    }
}

/// Percent-decodes a path segment to UTF-8 (`+` stays `+`).
pub fn decode(raw: &str) -> Option<String> {
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .ok()
        .map(|s| s.into_owned())
}
