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

    fn header(&self) -> &'static str {
        match self.kind {
            Kind::Msr => msr::HEADER,
            Kind::Alibaba => alibaba::HEADER,
            Kind::Tencent => tencent::HEADER,
        }
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
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(());
        }
        let first = std::mem::replace(&mut self.first, false);
        let header = self.header();
        let columns = header.split(',').count();
        // The fields in place (no vector per row); `n` counts them all.
        let mut f = [""; MAX_COLUMNS];
        let mut n = 0;
        for field in trimmed.split(',') {
            if let Some(slot) = f.get_mut(n) {
                *slot = field.trim();
            }
            n += 1;
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
