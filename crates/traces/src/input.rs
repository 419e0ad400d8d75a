//! A trace's bytes as one stream, opened once: a file, a pipe or standard
//! input (`-`), decompressed on the fly when its first bytes are a
//! compressor's magic, and its first decoded bytes peeked for format
//! detection and handed back in front of the rest. Nothing is reopened
//! or seeked, so a pipe or `/dev/stdin` reads as a file does; nothing is
//! unpacked to disk.
//!
//! Magic numbers: gzip `1f 8b` (RFC 1952, section 2.3.1, ID1 ID2); zstd
//! `28 b5 2f fd` (RFC 8878, section 3.1.1, Magic_Number 0xFD2FB528
//! little-endian), or a skippable frame first, `5? 2a 4d 18` (section
//! 3.1.2, 0x184D2A50 to 0x184D2A5F, as `pzstd` writes); xz `fd 37 7a 58 5a 00` (The .xz File Format 1.2.1,
//! section 2.1.1.1, Header Magic Bytes). The cache_dataset collections ship
//! as zstd (its README: "All datasets are compressed with zstd"), the SNIA
//! ones as gzip. Concatenated members or frames (pigz, `zstd` on several
//! files, `xz` streams) are read through to the end, as the command-line
//! tools read them.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use crate::error::TraceError;

/// The name standard input goes by in errors.
pub const STDIN: &str = "<stdin>";

/// How many bytes are read at once: whole lines of every text format and
/// whole records of every binary one at a time, and large enough that a
/// decoder is called rarely.
const BUFFER: usize = 1 << 16;

/// A compressed stream's kind, by its magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
    Xz,
}

impl Compression {
    /// The longest magic looked for.
    pub const MAGIC_BYTES: usize = 6;

    /// The compression `head` (a stream's first bytes) starts with.
    pub fn of(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
            || head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18]
        {
            Some(Compression::Zstd)
        } else if head.starts_with(&[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]) {
            Some(Compression::Xz)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
        }
    }
}

/// A trace's decoded bytes, ready to read, with their first bytes.
pub(crate) struct Opened {
    pub input: Box<dyn BufRead + Send>,
    /// The first decoded bytes (up to the `head` asked for), also still
    /// at the front of `input`.
    pub head: Vec<u8>,
}

/// Up to `n` bytes from `r`: fewer only at its end.
fn peek(r: &mut dyn Read, n: usize) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Opens `path` (`-`: standard input) once.
pub(crate) fn open_raw(path: &Path) -> Result<(Box<dyn Read + Send>, String), TraceError> {
    if path.as_os_str() == "-" {
        return Ok((Box::new(io::stdin()), STDIN.to_string()));
    }
    let shown = path.display().to_string();
    let f = File::open(path).map_err(|e| TraceError::Open {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    Ok((Box::new(f), shown))
}

/// `raw` decompressed if its magic says so, with its first `head` decoded
/// bytes peeked; `origin` names it in errors.
pub(crate) fn decode(
    mut raw: Box<dyn Read + Send>,
    origin: &str,
    head: usize,
) -> Result<Opened, TraceError> {
    let unreadable = |what: &str, e: io::Error| TraceError::Format {
        origin: origin.to_string(),
        why: format!("cannot read {what}: {e}"),
    };
    let magic = peek(&mut raw, Compression::MAGIC_BYTES).map_err(|e| unreadable("it", e))?;
    let compression = Compression::of(&magic);
    let raw = Cursor::new(magic).chain(raw);
    let mut plain: Box<dyn Read + Send> = match compression {
        None => Box::new(raw),
        Some(Compression::Gzip) => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        Some(Compression::Zstd) => Box::new(
            zstd::stream::read::Decoder::new(raw).map_err(|e| unreadable("its zstd stream", e))?,
        ),
        Some(Compression::Xz) => Box::new(xz2::read::XzDecoder::new_multi_decoder(raw)),
    };
    let first = peek(&mut plain, head).map_err(|e| match compression {
        Some(c) => unreadable(&format!("its {} stream", c.name()), e),
        None => unreadable("it", e),
    })?;
    Ok(Opened {
        input: Box::new(BufReader::with_capacity(
            BUFFER,
            Cursor::new(first.clone()).chain(plain),
        )),
        head: first,
    })
}
