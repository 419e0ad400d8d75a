//! fio's iolog, versions 2 and 3 (`write_iolog`, `read_iolog`).
//!
//! Layout (fio's HOWTO, "Trace file format"; `iolog.c`: `read_iolog`,
//! `log_io_u`, `log_file`): the first line is `fio version 2 iolog` or
//! `fio version 3 iolog`. Then one action per line, space separated:
//!
//! - version 2: `filename action` for file management (`add`, `open`,
//!   `close`), `filename action offset length` for I/O, action one of
//!   `read`, `write`, `sync`, `datasync`, `trim`, `wait`; offset and length
//!   in bytes; `wait` waits `offset` microseconds after the previous wait;
//! - version 3: each line starts with a timestamp, `timestamp filename
//!   action` or `timestamp filename action offset length`: microseconds
//!   from the start of the run (`log_io_u` prints `utime_since_now` of the
//!   log's start); `wait` is not allowed, and fio skips it (so does this
//!   reader).
//!
//! Times: an iolog records when fio issued each I/O, never when it
//! completed: `complete_ns` is `None`. In version 2, `issue_ns` is the sum
//! of the waits before the line (a log without waits has every request at
//! 0, as fio replays it: as fast as it can); in version 3, the timestamp.
//! `sync` and `datasync` are flushes; `trim` a discard; `device` is the
//! file name. fio's `sscanf` reads the length as `%u` (a `u32`).

use std::collections::VecDeque;

use crate::num::{quoted, times, uint, uint32, Bad};
use crate::text::LineFormat;
use crate::Request;

pub const HEADER_V2: &str = "fio version 2 iolog";
pub const HEADER_V3: &str = "fio version 3 iolog";

pub(crate) struct Iolog {
    version: u8,
    header_seen: bool,
    /// Version 2: the sum of the waits so far, in nanoseconds.
    clock: u64,
}

impl Iolog {
    pub fn v2() -> Self {
        Iolog {
            version: 2,
            header_seen: false,
            clock: 0,
        }
    }

    pub fn v3() -> Self {
        Iolog {
            version: 3,
            header_seen: false,
            clock: 0,
        }
    }
}

impl LineFormat for Iolog {
    fn line(&mut self, text: &str, out: &mut VecDeque<Request>) -> Result<(), Bad> {
        let trimmed = text.trim();
        if !self.header_seen {
            let want = if self.version == 2 {
                HEADER_V2
            } else {
                HEADER_V3
            };
            if trimmed != want {
                return Err(Bad::new(
                    "header",
                    format!("expected '{want}', found {}", quoted(trimmed)),
                ));
            }
            self.header_seen = true;
            return Ok(());
        }
        if trimmed.is_empty() {
            return Ok(());
        }
        let mut t: Vec<&str> = trimmed.split_whitespace().collect();
        let stamp = if self.version == 3 {
            let ts = uint(t[0], "timestamp")?;
            t.remove(0);
            Some(times(ts, 1_000, "timestamp", "us")?)
        } else {
            None
        };
        match t.len() {
            2 => {
                return match t[1] {
                    "add" | "open" | "close" => Ok(()),
                    a => Err(Bad::new(
                        "action",
                        format!("{} is not a file action (add, open, close)", quoted(a)),
                    )),
                }
            }
            4 => {}
            n => {
                return Err(Bad::new(
                    "line",
                    format!(
                        "expected {} fields, found {}",
                        if self.version == 2 {
                            "2 or 4"
                        } else {
                            "3 or 5"
                        },
                        n + usize::from(self.version == 3)
                    ),
                ))
            }
        }
        let (file, action) = (t[0], t[1]);
        let offset = uint(t[2], "offset")?;
        let length = uint32(t[3], "length")?;
        let (write, discard, flush) = match action {
            "read" => (false, false, false),
            "write" => (true, false, false),
            "sync" | "datasync" => (false, false, true),
            "trim" => (false, true, false),
            "wait" if self.version == 2 => {
                self.clock = self
                    .clock
                    .saturating_add(times(offset, 1_000, "offset", "us")?);
                return Ok(());
            }
            "wait" => return Ok(()),
            a => {
                return Err(Bad::new(
                    "action",
                    format!(
                        "{} is not an I/O action (read, write, sync, datasync, trim, wait)",
                        quoted(a)
                    ),
                ))
            }
        };
        out.push_back(Request {
            issue_ns: stamp.unwrap_or(self.clock),
            complete_ns: None,
            offset,
            bytes: length,
            write,
            discard,
            sync: false,
            flush,
            pid: None,
            comm: None,
            device: Some(file.to_string()),
            cpu: None,
            ..Default::default()
        });
        Ok(())
    }

    fn end(&mut self, _out: &mut VecDeque<Request>) -> Result<(), Bad> {
        if !self.header_seen {
            let want = if self.version == 2 {
                HEADER_V2
            } else {
                HEADER_V3
            };
            return Err(Bad::new("header", format!("empty log: expected '{want}'")));
        }
        Ok(())
    }
}
