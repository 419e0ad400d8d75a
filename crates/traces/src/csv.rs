//! The public block-trace collections' CSV: MSR Cambridge (SNIA IOTTA),
//! Alibaba and Tencent CBS. One request a line, comma separated; blank
//! lines skipped; a header line naming the columns (as some copies carry)
//! skipped when it is the first.

use std::collections::VecDeque;

use crate::num::{quoted, sectors_to_bytes, times, uint, uint32, Bad};
use crate::text::LineFormat;
use crate::Request;

pub mod msr {
    //! MSR Cambridge traces (Narayanan, Donnelly, Rowstron, "Write
    //! Off-Loading", FAST '08), as SNIA IOTTA distributes them.
    //!
    //! Layout (the collection's README.txt, "I/O trace file format"):
    //! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`:
    //! the time the I/O was issued in Windows filetime (100 ns ticks since
    //! 1601-01-01 UTC); the host's name; the logical disk number; `Read` or
    //! `Write`; offset and size in bytes; the time taken to complete, in
    //! filetime units (100 ns).
    //!
    //! Times: `issue_ns` is the timestamp in nanoseconds since 1601
    //! (fits `u64` until 2185); `complete_ns` the issue plus the response
    //! time. `device` is `Hostname/DiskNumber`.
    pub const HEADER: &str = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";
}

pub mod alibaba {
    //! The Alibaba Cloud block traces (alibaba/block-traces, 2020).
    //!
    //! Layout (the repository's README, "Schema", `io_traces.csv`):
    //! `device_id,opcode,offset,length,timestamp`: the virtual disk's id
    //! (0-999); `R` or `W`; offset and length in bytes; the time the
    //! server received the operation, in microseconds since the Unix epoch.
    //!
    //! Times: only the arrival: `issue_ns` is it in nanoseconds since the
    //! Unix epoch; `complete_ns` is `None`. `device` is the disk's id.
    pub const HEADER: &str = "device_id,opcode,offset,length,timestamp";
}

pub mod tencent {
    //! The Tencent Cloud Block Storage traces (Zhang et al., "OSCA", ATC
    //! '20; SNIA IOTTA).
    //!
    //! Layout (the collection's README, "I/O trace file format"):
    //! `Timestamp,Offset,Size,IOType,VolumeID`: the time the I/O was
    //! issued in seconds since the Unix epoch; offset and size in 512-byte
    //! sectors; `0` read, `1` write; the cloud volume's id.
    //!
    //! Times: only the issue, to the second: `issue_ns` is it in
    //! nanoseconds since the Unix epoch (many requests share one second);
    //! `complete_ns` is `None`. `device` is the volume id.
    pub const HEADER: &str = "Timestamp,Offset,Size,IOType,VolumeID";
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Msr,
    Alibaba,
    Tencent,
}

pub(crate) struct Csv {
    kind: Kind,
    first: bool,
}

impl Csv {
    pub fn msr() -> Self {
        Csv {
            kind: Kind::Msr,
            first: true,
        }
    }
    pub fn alibaba() -> Self {
        Csv {
            kind: Kind::Alibaba,
            first: true,
        }
    }
    pub fn tencent() -> Self {
        Csv {
            kind: Kind::Tencent,
            first: true,
        }
    }

    /// The columns of [`Csv::header`] (counted here, not per row).
    fn columns(&self) -> usize {
        match self.kind {
            Kind::Msr => 7,
            Kind::Alibaba | Kind::Tencent => 5,
        }
    }

    fn header(&self) -> &'static str {
        match self.kind {
            Kind::Msr => msr::HEADER,
            Kind::Alibaba => alibaba::HEADER,
            Kind::Tencent => tencent::HEADER,
        }
    }
}

/// `s` trimmed as `str::trim` does; `ascii`: the line is ASCII without a
/// vertical tab, where trimming ASCII whitespace is the same.
fn trim(s: &str, ascii: bool) -> &str {
    if ascii {
        s.trim_ascii()
    } else {
        s.trim()
    }
}

/// The most columns a format here has (MSR's seven).
const MAX_COLUMNS: usize = 7;

/// A whole number's text as a `String`, read back as `value`: the text
/// itself when it is already the number's canonical form (no leading
/// zero), saving the formatting of a number per row (issue 41 item 7).
fn canonical(text: &str, value: u64) -> String {
    if text.len() == 1 || !text.starts_with('0') {
        text.to_string()
    } else {
        value.to_string()
    }
}

impl LineFormat for Csv {
    fn line(&mut self, text: &str, out: &mut VecDeque<Request>) -> Result<(), Bad> {
        // On an ASCII line without a vertical tab, trimming ASCII
        // whitespace is `str::trim` (the one ASCII byte Unicode calls
        // whitespace and `u8::is_ascii_whitespace` does not is 0x0b),
        // without decoding characters (issue 41 item 7).
        let ascii = text.is_ascii() && !text.as_bytes().contains(&0x0b);
        let trimmed = trim(text, ascii);
        if trimmed.is_empty() {
            return Ok(());
        }
        let first = std::mem::replace(&mut self.first, false);
        let header = self.header();
        let columns = self.columns();
        // The fields in place (no vector per row); `n` counts them all.
        let mut f = [""; MAX_COLUMNS];
        let mut n = 0;
        let mut rest = trimmed;
        loop {
            // A comma is one byte in UTF-8 and inside no other character:
            // splitting the bytes splits the text.
            let comma = rest.bytes().position(|b| b == b',');
            let field = comma.map_or(rest, |i| &rest[..i]);
            if let Some(slot) = f.get_mut(n) {
                *slot = trim(field, ascii);
            }
            n += 1;
            match comma {
                Some(i) => rest = &rest[i + 1..],
                None => break,
            }
        }
        if first
            && n == columns
            && f[..n]
                .iter()
                .zip(header.split(','))
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
        {
            return Ok(());
        }
        if n != columns {
            return Err(Bad::new(
                "line",
                format!("expected {columns} columns ({header}), found {n}"),
            ));
        }
        let r = match self.kind {
            Kind::Msr => {
                let ticks = uint(f[0], "Timestamp")?;
                let issue = times(ticks, 100, "Timestamp", "filetime ticks")?;
                let disk = uint32(f[2], "DiskNumber")?;
                let write = match f[3] {
                    t if t.eq_ignore_ascii_case("read") => false,
                    t if t.eq_ignore_ascii_case("write") => true,
                    t => {
                        return Err(Bad::new(
                            "Type",
                            format!("{} is not Read or Write", quoted(t)),
                        ))
                    }
                };
                let offset = uint(f[4], "Offset")?;
                let bytes = uint32(f[5], "Size")?;
                let response = times(
                    uint(f[6], "ResponseTime")?,
                    100,
                    "ResponseTime",
                    "filetime ticks",
                )?;
                let complete = issue
                    .checked_add(response)
                    .ok_or_else(|| Bad::new("ResponseTime", "completion is past 2^64 ns"))?;
                if f[1].is_empty() {
                    return Err(Bad::new("Hostname", "empty"));
                }
                Request {
                    issue_ns: issue,
                    complete_ns: Some(complete),
                    offset,
                    bytes,
                    write,
                    device: Some(format!("{}/{disk}", f[1])),
                    ..Request::default()
                }
            }
            Kind::Alibaba => {
                let device = uint32(f[0], "device_id")?;
                let device = canonical(f[0], u64::from(device));
                let write = match f[1] {
                    "R" => false,
                    "W" => true,
                    t => return Err(Bad::new("opcode", format!("{} is not R or W", quoted(t)))),
                };
                let offset = uint(f[2], "offset")?;
                let bytes = uint32(f[3], "length")?;
                let issue = times(uint(f[4], "timestamp")?, 1_000, "timestamp", "us")?;
                Request {
                    issue_ns: issue,
                    offset,
                    bytes,
                    write,
                    device: Some(device),
                    ..Request::default()
                }
            }
            Kind::Tencent => {
                let issue = times(uint(f[0], "Timestamp")?, 1_000_000_000, "Timestamp", "s")?;
                let sector = uint(f[1], "Offset")?;
                let offset = times(sector, 512, "Offset", "sectors")?;
                let bytes = sectors_to_bytes(uint(f[2], "Size")?, "Size")?;
                let write = match f[3] {
                    "0" => false,
                    "1" => true,
                    t => {
                        return Err(Bad::new(
                            "IOType",
                            format!("{} is not 0 (read) or 1 (write)", quoted(t)),
                        ))
                    }
                };
                let volume = uint(f[4], "VolumeID")?;
                Request {
                    issue_ns: issue,
                    offset,
                    bytes,
                    write,
                    device: Some(canonical(f[4], volume)),
                    ..Request::default()
                }
            }
        };
        out.push_back(r);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Result<Request, Bad> {
        let mut out = VecDeque::new();
        Csv::alibaba().line(line, &mut out)?;
        Ok(out.pop_front().expect("a request"))
    }

    #[test]
    fn the_column_counts_are_the_headers() {
        for c in [Csv::msr(), Csv::alibaba(), Csv::tencent()] {
            assert_eq!(c.columns(), c.header().split(',').count());
            assert!(c.columns() <= MAX_COLUMNS);
        }
    }

    #[test]
    fn fields_are_trimmed_as_str_trim_does_on_any_line() {
        let plain = one("7,W,4096,8192,1").unwrap();
        // ASCII spaces and tabs, a vertical tab (ASCII, but whitespace
        // only to Unicode) and a no-break space (not ASCII).
        for line in [
            " 7 ,\tW, 4096 ,8192 ,1\t",
            "7\u{0b},W,4096,8192,1",
            "\u{a0}7,W,4096,8192,1\u{2003}",
        ] {
            assert_eq!(one(line).unwrap(), plain, "{line:?}");
        }
        assert_eq!(
            one("007,W,4096,8192,1").unwrap().device.as_deref(),
            Some("7")
        );
        assert_eq!(one("0,W,4096,8192,1").unwrap().device.as_deref(), Some("0"));
        let e = one("7,W,4096,8192,1,9").unwrap_err();
        assert!(e.why.contains("expected 5 columns"), "{}", e.why);
        assert!(e.why.ends_with("found 6"), "{}", e.why);
        let e = one("1,2,3,4,5,6,7,8,9").unwrap_err();
        assert!(e.why.ends_with("found 9"), "{}", e.why);
    }
}
