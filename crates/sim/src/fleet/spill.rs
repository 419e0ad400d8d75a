//! A trace read once, each volume's requests written to a compact file of
//! its own in a temporary directory (removed when the [`Spilled`] is
//! dropped), so that a trace of thousands of volumes is split in bounded
//! memory: the buffers of all volumes together hold at most
//! [`SPILL_BUFFER`] bytes before they are appended to their files, one
//! file open at a time (no limit on open files is met however many volumes
//! there are).
//!
//! A record is [`RECORD`] bytes, little-endian: the issue (u64 ns), the
//! completion (u64 ns, `u64::MAX` for none), the bytes (u32), the pid (u32)
//! and one byte of flags (bit 0 write, 1 Urgent, 2 Barrier, 3 a pid, 4 a
//! completion).

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use policy::Marks;

use crate::replay::TraceIo;

/// Bytes of all volumes' buffers before they go to their files: 16 MiB,
/// our choice (assumed: small beside this VM's memory, large enough that
/// 1,000 volumes write each file a few times per 10 M requests).
pub const SPILL_BUFFER: usize = 16 << 20;

/// One request's bytes in a spill file.
pub const RECORD: usize = 25;

const WRITE: u8 = 1;
const URGENT: u8 = 2;
const BARRIER: u8 = 4;
const PID: u8 = 8;
const COMPLETE: u8 = 16;

fn encode(io: &TraceIo, out: &mut Vec<u8>) {
    out.extend_from_slice(&io.issue_ns.to_le_bytes());
    out.extend_from_slice(&io.complete_ns.unwrap_or(u64::MAX).to_le_bytes());
    out.extend_from_slice(&(io.bytes.min(u64::from(u32::MAX)) as u32).to_le_bytes());
    out.extend_from_slice(&io.pid.unwrap_or(0).to_le_bytes());
    let flags = [
        (io.write, WRITE),
        (io.marks.urgent, URGENT),
        (io.marks.barrier, BARRIER),
        (io.pid.is_some(), PID),
        (io.complete_ns.is_some(), COMPLETE),
    ]
    .iter()
    .filter(|f| f.0)
    .fold(0u8, |a, f| a | f.1);
    out.push(flags);
}

fn decode(b: &[u8]) -> TraceIo {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let flags = b[24];
    TraceIo {
        issue_ns: u64_at(0),
        complete_ns: (flags & COMPLETE != 0).then(|| u64_at(8)),
        bytes: u64::from(u32_at(16)),
        write: flags & WRITE != 0,
        marks: Marks {
            urgent: flags & URGENT != 0,
            barrier: flags & BARRIER != 0,
        },
        pid: (flags & PID != 0).then(|| u32_at(20)),
    }
}

/// One volume's file as it is being written.
struct Open {
    name: String,
    requests: u64,
    path: PathBuf,
    buf: Vec<u8>,
}

/// The volumes being written.
pub struct Spill {
    dir: tempfile::TempDir,
    volumes: Vec<Open>,
    index: HashMap<String, usize>,
    buffered: usize,
}

/// One volume's requests, spilled.
#[derive(Debug)]
pub struct VolumeFile {
    /// The volume as the trace names it (`-` for requests without one).
    pub name: String,
    pub requests: u64,
    path: PathBuf,
}

impl VolumeFile {
    /// Its requests, in trace order.
    pub fn load(&self) -> Result<Vec<TraceIo>, String> {
        let bytes = std::fs::read(&self.path)
            .map_err(|e| format!("{}: cannot read back: {e}", self.path.display()))?;
        if bytes.len() != self.requests as usize * RECORD {
            return Err(format!(
                "{}: {} bytes where {} requests were written",
                self.path.display(),
                bytes.len(),
                self.requests
            ));
        }
        Ok(bytes.chunks_exact(RECORD).map(decode).collect())
    }
}

/// Every volume spilled, in order of first appearance; the directory
/// goes with it.
#[derive(Debug)]
pub struct Spilled {
    _dir: tempfile::TempDir,
    pub volumes: Vec<VolumeFile>,
}

impl Spilled {
    /// The requests spilled, over every volume.
    pub fn requests(&self) -> u64 {
        self.volumes.iter().map(|v| v.requests).sum()
    }
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> String {
    format!("{}: cannot write: {e}", path.display())
}

impl Spill {
    pub fn new() -> Result<Spill, String> {
        let dir = tempfile::Builder::new()
            .prefix("cinterrupts-volumes-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary directory for the volumes: {e}"))?;
        Ok(Spill {
            dir,
            volumes: Vec::new(),
            index: HashMap::new(),
            buffered: 0,
        })
    }

    /// Adds `io` to `volume`'s file.
    pub fn push(&mut self, volume: &str, io: &TraceIo) -> Result<(), String> {
        let i = match self.index.get(volume) {
            Some(&i) => i,
            None => {
                let i = self.volumes.len();
                self.volumes.push(Open {
                    name: volume.to_string(),
                    requests: 0,
                    // By index: a volume's name may hold any character.
                    path: self.dir.path().join(format!("{i}.vol")),
                    buf: Vec::new(),
                });
                self.index.insert(volume.to_string(), i);
                i
            }
        };
        let v = &mut self.volumes[i];
        encode(io, &mut v.buf);
        v.requests += 1;
        self.buffered += RECORD;
        if self.buffered >= SPILL_BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends every buffer to its file.
    fn flush(&mut self) -> Result<(), String> {
        for v in self.volumes.iter_mut().filter(|v| !v.buf.is_empty()) {
            let mut f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&v.path)
                .map_err(|e| io_error(&v.path, e))?;
            f.write_all(&v.buf).map_err(|e| io_error(&v.path, e))?;
            v.buf.clear();
            v.buf.shrink_to(RECORD * 64);
        }
        self.buffered = 0;
        Ok(())
    }

    pub fn finish(mut self) -> Result<Spilled, String> {
        self.flush()?;
        Ok(Spilled {
            volumes: self
                .volumes
                .into_iter()
                .map(|v| VolumeFile {
                    name: v.name,
                    requests: v.requests,
                    path: v.path,
                })
                .collect(),
            _dir: self.dir,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written() {
        let ios = [
            TraceIo {
                issue_ns: 1 << 60,
                complete_ns: Some((1 << 60) + 12_345),
                bytes: 131_072,
                write: true,
                marks: Marks::BARRIER,
                pid: Some(4_194_303),
            },
            TraceIo {
                issue_ns: 7,
                complete_ns: None,
                bytes: 0,
                write: false,
                marks: Marks::URGENT,
                pid: None,
            },
        ];
        let mut buf = Vec::new();
        for io in &ios {
            encode(io, &mut buf);
        }
        assert_eq!(buf.len(), 2 * RECORD);
        let back: Vec<TraceIo> = buf.chunks_exact(RECORD).map(decode).collect();
        assert_eq!(back, ios);
    }

    #[test]
    fn volumes_are_split_in_order_and_the_directory_goes_with_them() {
        let mut s = Spill::new().unwrap();
        let io = |t: u64| TraceIo {
            issue_ns: t,
            complete_ns: None,
            bytes: 4096,
            write: false,
            marks: Marks::NONE,
            pid: None,
        };
        for t in 0..100u64 {
            let v = ["b/1", "a", "c"][(t % 3) as usize];
            s.push(v, &io(t)).unwrap();
        }
        let dir = s.dir.path().to_path_buf();
        let spilled = s.finish().unwrap();
        let names: Vec<&str> = spilled.volumes.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["b/1", "a", "c"]);
        assert_eq!(spilled.requests(), 100);
        let a = spilled.volumes[1].load().unwrap();
        assert_eq!(a.len(), 33);
        assert!(a.iter().all(|r| r.issue_ns % 3 == 1));
        drop(spilled);
        assert!(!dir.exists(), "removed with the volumes");
    }
}
