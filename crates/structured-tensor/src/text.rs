//! A JSON text reader for `from_json_str`: one pass over the bytes into a light tree that
//! borrows strings without escapes from the text (no per-key `String`, no `BTreeMap`).
//! Numbers are read as Python's `json` module reads them, which is what TensorFlow's
//! `from_pyval` sees: a literal without fraction or exponent is an integer (`-0` is the
//! integer 0; one beyond `int64` is kept as written, for the error), any other a float.
//! A repeated key keeps its last value, as in a Python `dict`. Anything else it does not
//! take (a syntax error, nesting deeper than 128) makes the caller fall back to
//! `serde_json`, which then decides.

use std::borrow::Cow;

/// A parsed JSON value.
#[derive(Debug)]
pub(crate) enum TNode<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer literal beyond `int64`, as written.
    BigInt(&'a str),
    Float(f64),
    Str(Cow<'a, str>),
    List(Vec<TNode<'a>>),
    Dict(Vec<(Cow<'a, str>, TNode<'a>)>),
}

/// The reader gave up; `serde_json` decides instead.
#[derive(Debug)]
pub(crate) struct GiveUp;

const MAX_DEPTH: usize = 128;

/// Parses a whole document.
pub(crate) fn parse(text: &str) -> Result<TNode<'_>, GiveUp> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(GiveUp);
    }
    Ok(v)
}

/// The reader's position in a text.
pub(crate) struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    /// A reader at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Parser<'a> {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    /// Consumes `b` (after white space) or gives up.
    pub(crate) fn eat(&mut self, b: u8) -> Result<(), GiveUp> {
        self.skip_ws();
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// Consumes the key `"name"` written without escapes, if that is what comes next.
    pub(crate) fn eat_plain_key(&mut self, name: &str) -> bool {
        let end = self.pos + 1 + name.len();
        let found = self.bytes.get(self.pos) == Some(&b'"')
            && self.bytes.get(self.pos + 1..end) == Some(name.as_bytes())
            && self.bytes.get(end) == Some(&b'"');
        if found {
            self.pos = end + 1;
        }
        found
    }

    /// The position in the text, in bytes.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// True at the end of the text (after white space).
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos == self.bytes.len()
    }

    pub(crate) fn skip_ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect(&mut self, lit: &[u8]) -> Result<(), GiveUp> {
        if self.bytes[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    pub(crate) fn value(&mut self, depth: usize) -> Result<TNode<'a>, GiveUp> {
        if depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        self.skip_ws();
        match self.peek().ok_or(GiveUp)? {
            b'{' => self.dict(depth),
            b'[' => self.list(depth),
            b'"' => Ok(TNode::Str(self.string()?)),
            b't' => self.expect(b"true").map(|()| TNode::Bool(true)),
            b'f' => self.expect(b"false").map(|()| TNode::Bool(false)),
            b'n' => self.expect(b"null").map(|()| TNode::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(GiveUp),
        }
    }

    fn list(&mut self, depth: usize) -> Result<TNode<'a>, GiveUp> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(TNode::List(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek().ok_or(GiveUp)? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Ok(TNode::List(items));
                }
                _ => return Err(GiveUp),
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Result<TNode<'a>, GiveUp> {
        self.pos += 1;
        let mut entries: Vec<(Cow<'a, str>, TNode<'a>)> = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(TNode::Dict(entries));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(GiveUp);
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(GiveUp);
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            // A repeated key keeps its first place and its last value (Python's `dict`).
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some((_, earlier)) => *earlier = value,
                None => entries.push((key, value)),
            }
            self.skip_ws();
            match self.peek().ok_or(GiveUp)? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Ok(TNode::Dict(entries));
                }
                _ => return Err(GiveUp),
            }
        }
    }

    pub(crate) fn string(&mut self) -> Result<Cow<'a, str>, GiveUp> {
        self.pos += 1;
        let start = self.pos;
        loop {
            let b = *self.bytes.get(self.pos).ok_or(GiveUp)?;
            match b {
                b'"' => {
                    let s = &self.text[start..self.pos];
                    self.pos += 1;
                    return Ok(Cow::Borrowed(s));
                }
                b'\\' => break,
                0..=0x1f => return Err(GiveUp),
                _ => self.pos += 1,
            }
        }
        let mut out = String::from(&self.text[start..self.pos]);
        loop {
            let b = *self.bytes.get(self.pos).ok_or(GiveUp)?;
            match b {
                b'"' => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                b'\\' => {
                    let e = *self.bytes.get(self.pos + 1).ok_or(GiveUp)?;
                    self.pos += 2;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi) {
                                self.expect(b"\\u")?;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(GiveUp);
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(GiveUp);
                            } else {
                                hi
                            };
                            out.push(char::from_u32(c).ok_or(GiveUp)?);
                        }
                        _ => return Err(GiveUp),
                    }
                }
                0..=0x1f => return Err(GiveUp),
                _ => {
                    // Copy the run of plain characters up to the next quote or escape.
                    let run_start = self.pos;
                    while let Some(&c) = self.bytes.get(self.pos) {
                        if c == b'"' || c == b'\\' || c < 0x20 {
                            break;
                        }
                        self.pos += 1;
                    }
                    out.push_str(&self.text[run_start..self.pos]);
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, GiveUp> {
        let digits = self.text.get(self.pos..self.pos + 4).ok_or(GiveUp)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GiveUp);
        }
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| GiveUp)
    }

    fn number(&mut self) -> Result<TNode<'a>, GiveUp> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek().ok_or(GiveUp)? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => self.digits(),
            _ => return Err(GiveUp),
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(GiveUp);
            }
            self.digits();
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(GiveUp);
            }
            self.digits();
            float = true;
        }
        let s = &self.text[start..self.pos];
        if float {
            let v: f64 = s.parse().map_err(|_| GiveUp)?;
            if !v.is_finite() {
                return Err(GiveUp);
            }
            Ok(TNode::Float(v))
        } else {
            // Only digits with an optional sign are left, so a failure is an overflow.
            Ok(s.parse::<i64>().map_or(TNode::BigInt(s), TNode::Int))
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_serde_reads() {
        let text = r#" {"a": [1, -2, 3.5, 1e3, -0.0], "b\u00e9\"": "x\ny\ud83d\ude00", "c": [true, false, null], "d": {}} "#;
        let TNode::Dict(entries) = parse(text).unwrap() else {
            panic!("not a dict")
        };
        assert_eq!(entries.len(), 4);
        assert_eq!(entries[1].0, "bé\"");
        match &entries[1].1 {
            TNode::Str(s) => assert_eq!(s, "x\ny😀"),
            other => panic!("{other:?}"),
        }
        match &entries[0].1 {
            TNode::List(items) => {
                assert!(matches!(items[0], TNode::Int(1)));
                assert!(matches!(items[1], TNode::Int(-2)));
                assert!(matches!(items[2], TNode::Float(v) if v == 3.5));
                assert!(matches!(items[3], TNode::Float(v) if v == 1000.0));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn numbers_and_repeated_keys_are_read_as_python_reads_them() {
        // Python 3.11: json.loads("-0") -> 0 (int), json.loads("-0.0") -> -0.0 (float),
        // json.loads('{"a": 1, "a": -0}') -> {'a': 0}, and integers of any size are ints.
        let TNode::List(items) =
            parse("[-0, -0.0, 0, -0e0, 18446744073709551615, -99999999999999999999]").unwrap()
        else {
            panic!("not a list")
        };
        assert!(matches!(items[0], TNode::Int(0)));
        assert!(matches!(items[1], TNode::Float(v) if v == 0.0 && v.is_sign_negative()));
        assert!(matches!(items[2], TNode::Int(0)));
        assert!(matches!(items[3], TNode::Float(v) if v == 0.0 && v.is_sign_negative()));
        assert!(matches!(items[4], TNode::BigInt("18446744073709551615")));
        assert!(matches!(items[5], TNode::BigInt("-99999999999999999999")));
        let TNode::Dict(entries) = parse(r#"{"a": 1, "b": 2, "a": -0}"#).unwrap() else {
            panic!("not a dict")
        };
        assert_eq!(entries.len(), 2);
        assert_eq!((entries[0].0.as_ref(), entries[1].0.as_ref()), ("a", "b"));
        assert!(matches!(entries[0].1, TNode::Int(0)));
    }

    #[test]
    fn gives_up_on_what_it_does_not_take() {
        for text in [
            "",
            "[",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "-",
            "\"\\x\"",
            "\"\u{1}\"",
            "[1] x",
            "\"\\ud800\"",
            "tru",
            "{1:2}",
        ] {
            assert!(parse(text).is_err(), "{text:?}");
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&deep).is_err());
    }
}
