//! The line-reading half of every text format: lines of bounded length,
//! UTF-8 checked, numbered; the format's parser turns each into requests.

use std::collections::VecDeque;
use std::io::{self, BufRead};

use crate::error::TraceError;
use crate::num::Bad;
use crate::Request;

/// The longest line read, in bytes with its newline. The longest row of
/// any format here is well under 300 bytes (blkparse's with a 16-byte
/// command name; fio's with a 256-byte file name); a longer line (a binary
/// file read as text, `/dev/zero`) is refused rather than held in memory.
pub const MAX_LINE: usize = 4096;

/// A UTF-8 byte-order mark, which editors on some systems put first.
const BOM: &str = "\u{feff}";

/// One text format's parser.
pub(crate) trait LineFormat {
    /// One line, without its end (`\n` or `\r\n`), numbered from 1; the
    /// requests it completes go to `out`.
    fn line(&mut self, text: &str, out: &mut VecDeque<Request>) -> Result<(), Bad>;

    /// The input has ended: requests still held go to `out`.
    fn end(&mut self, _out: &mut VecDeque<Request>) -> Result<(), Bad> {
        Ok(())
    }
}

/// Reads `input` line by line through a [`LineFormat`].
///
/// Speed (issue 41 item 7): a line is found with `memchr` in the reader's
/// own buffer and copied once, into `buf`; the format reads it from there
/// (no `String` per line, no second copy).
pub(crate) struct Lines<R, F> {
    input: R,
    origin: String,
    line: u64,
    buf: Vec<u8>,
    ready: VecDeque<Request>,
    format: F,
    ended: bool,
}

/// `line` without its end (`\n` or `\r\n`), and on the first line without
/// a byte-order mark.
fn strip(text: &str, first: bool) -> &str {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    if first {
        text.strip_prefix(BOM).unwrap_or(text)
    } else {
        text
    }
}

impl<R: BufRead, F: LineFormat> Lines<R, F> {
    pub fn new(input: R, origin: &str, format: F) -> Self {
        Lines {
            input,
            origin: origin.to_string(),
            line: 0,
            buf: Vec::new(),
            ready: VecDeque::new(),
            format,
            ended: false,
        }
    }

    fn row_error(&self, bad: Bad) -> TraceError {
        TraceError::Row {
            origin: self.origin.clone(),
            line: self.line,
            field: bad.field,
            why: bad.why,
        }
    }

    /// The next line, with its end, into `self.buf`, at most one byte past
    /// [`MAX_LINE`] (which tells a line at the bound from a longer one);
    /// false at the end of the input.
    fn next_line(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        self.line += 1;
        loop {
            let room = MAX_LINE + 1 - self.buf.len();
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(TraceError::Read {
                        origin: self.origin.clone(),
                        at: self.line,
                        reason: e.to_string(),
                    })
                }
            };
            if available.is_empty() {
                break;
            }
            let window = &available[..available.len().min(room)];
            let (take, done) = match memchr::memchr(b'\n', window) {
                Some(i) => (i + 1, true),
                None => (window.len(), window.len() == room),
            };
            self.buf.extend_from_slice(&window[..take]);
            self.input.consume(take);
            if done {
                break;
            }
        }
        if self.buf.is_empty() {
            return Ok(false);
        }
        if self.buf.len() > MAX_LINE {
            return Err(self.row_error(Bad::new(
                "line",
                format!("longer than {MAX_LINE} bytes (a trace row is one short line of text)"),
            )));
        }
        Ok(true)
    }

    /// The line in `self.buf` through the format.
    fn parse_line(&mut self) -> Result<(), TraceError> {
        let result = match std::str::from_utf8(&self.buf) {
            Ok(text) => self
                .format
                .line(strip(text, self.line == 1), &mut self.ready),
            Err(_) => Err(Bad::new("line", "not valid UTF-8 (a trace is text)")),
        };
        result.map_err(|bad| self.row_error(bad))
    }
}

impl<R: BufRead, F: LineFormat> Iterator for Lines<R, F> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                return Some(Ok(r));
            }
            if self.ended {
                return None;
            }
            match self.next_line() {
                Err(e) => {
                    self.ended = true;
                    return Some(Err(e));
                }
                Ok(false) => {
                    self.ended = true;
                    if let Err(bad) = self.format.end(&mut self.ready) {
                        return Some(Err(self.row_error(bad)));
                    }
                }
                Ok(true) => {
                    if let Err(e) = self.parse_line() {
                        self.ended = true;
                        self.ready.clear();
                        return Some(Err(e));
                    }
                }
            }
        }
    }
}

/// `text` split at whitespace as `str::split_whitespace` splits it, a
/// byte at a time when the line is ASCII without a vertical tab (the
/// one ASCII byte Unicode calls whitespace and `u8::is_ascii_whitespace`
/// does not): the same fields, without decoding characters (issue 41
/// item 7: the char-wise split was a third of blkparse's parse).
pub(crate) struct Fields<'a> {
    rest: &'a str,
    ascii: bool,
}

impl<'a> Fields<'a> {
    pub fn new(text: &'a str) -> Self {
        Fields {
            rest: text,
            ascii: text.is_ascii() && memchr::memchr(0x0b, text.as_bytes()).is_none(),
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.ascii {
            let b = self.rest.as_bytes();
            let start = b.iter().position(|c| !c.is_ascii_whitespace())?;
            let end = b[start..]
                .iter()
                .position(u8::is_ascii_whitespace)
                .map_or(b.len(), |n| start + n);
            let field = &self.rest[start..end];
            self.rest = &self.rest[end..];
            Some(field)
        } else {
            let rest = self.rest.trim_start();
            if rest.is_empty() {
                self.rest = rest;
                return None;
            }
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            self.rest = &rest[end..];
            Some(&rest[..end])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Fields;

    #[test]
    fn fields_split_as_split_whitespace_does() {
        for text in [
            "",
            "   ",
            "a",
            "  8,0    1  2 0.1 [kworker/0:1H]  ",
            "a\tb\r\nc\x0cd",
            "a\x0bb c",
            "a\u{a0}b\u{2003}c d",
            "caf\u{e9} [x y]",
        ] {
            let ours: Vec<&str> = Fields::new(text).collect();
            let std: Vec<&str> = text.split_whitespace().collect();
            assert_eq!(ours, std, "{text:?}");
        }
    }
}
