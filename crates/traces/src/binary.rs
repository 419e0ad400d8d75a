//! The reading half of the fixed-size binary formats (vscsi,
//! oracleGeneral, lcs): an optional header, then records of one size,
//! numbered from 1; a file cut inside a record is an error naming it.
//! All three are little-endian, as the x86 machines that wrote them
//! (libCacheSim reads them by casting the mapped bytes to its structs).

use std::collections::VecDeque;
use std::io::{self, Read};

use crate::error::TraceError;
use crate::num::Bad;
use crate::Request;

/// One binary format: its header, then what each record holds.
pub(crate) trait RecordFormat {
    /// Reads what comes before the first record through `input` and
    /// returns the size of a record; called once, first.
    fn start<R: Read>(&mut self, input: &mut Records<R>) -> Result<usize, TraceError>;

    /// One record's bytes (exactly the size [`RecordFormat::start`] gave);
    /// the request it holds, if it is one.
    fn record(&mut self, bytes: &[u8], out: &mut VecDeque<Request>) -> Result<(), Bad>;
}

/// A binary input read record by record.
pub(crate) struct Records<R> {
    input: R,
    pub origin: String,
    /// Bytes read ahead (a peek), handed out before the input's.
    carry: Vec<u8>,
    /// Where the next record starts.
    pub offset: u64,
    /// The number of the last record read (0: the header).
    pub number: u64,
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

impl<R: Read> Records<R> {
    pub fn new(input: R, origin: &str) -> Self {
        Records {
            input,
            origin: origin.to_string(),
            carry: Vec::new(),
            offset: 0,
            number: 0,
        }
    }

    /// An error in record `number` (0: the header) starting at `offset`.
    pub fn bad(&self, number: u64, offset: u64, bad: Bad) -> TraceError {
        TraceError::Entry {
            origin: self.origin.clone(),
            record: number,
            offset,
            field: bad.field,
            why: bad.why,
        }
    }

    /// Fills `buf` as far as the input goes; how many bytes it got.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, TraceError> {
        let from_carry = self.carry.len().min(buf.len());
        buf[..from_carry].copy_from_slice(&self.carry[..from_carry]);
        self.carry.drain(..from_carry);
        let mut got = from_carry;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(TraceError::Read {
                        origin: self.origin.clone(),
                        at: self.offset + got as u64,
                        reason: e.to_string(),
                    })
                }
            }
        }
        Ok(got)
    }

    /// Up to `n` of the next bytes, left to be read again.
    pub fn peek(&mut self, n: usize) -> Result<&[u8], TraceError> {
        if self.carry.len() < n {
            let had = self.carry.len();
            let mut more = vec![0u8; n - had];
            let carry = std::mem::take(&mut self.carry);
            let got = self.fill(&mut more)?;
            self.carry = carry;
            self.carry.extend_from_slice(&more[..got]);
        }
        Ok(&self.carry[..n.min(self.carry.len())])
    }

    /// The header: exactly `buf.len()` bytes, or an error naming `field`.
    pub fn header(&mut self, buf: &mut [u8], field: &'static str) -> Result<(), TraceError> {
        let got = self.fill(buf)?;
        if got < buf.len() {
            return Err(self.bad(
                0,
                0,
                Bad::new(
                    field,
                    format!(
                        "the file ends {got} bytes into its {}-byte header",
                        buf.len()
                    ),
                ),
            ));
        }
        self.offset = buf.len() as u64;
        Ok(())
    }

    /// The next record into `buf`: false at a clean end, an error when
    /// the input ends inside it.
    pub fn next(&mut self, buf: &mut [u8]) -> Result<bool, TraceError> {
        let got = self.fill(buf)?;
        if got == 0 {
            return Ok(false);
        }
        self.number += 1;
        if got < buf.len() {
            return Err(self.bad(
                self.number,
                self.offset,
                Bad::new(
                    "record",
                    format!(
                        "the file ends {got} bytes into this {}-byte record (cut short)",
                        buf.len()
                    ),
                ),
            ));
        }
        self.offset += buf.len() as u64;
        Ok(true)
    }
}

/// Reads a binary input through a [`RecordFormat`].
pub(crate) struct Binary<R, F> {
    records: Records<R>,
    format: F,
    size: Option<usize>,
    buf: Vec<u8>,
    ready: VecDeque<Request>,
    ended: bool,
}

impl<R: Read, F: RecordFormat> Binary<R, F> {
    pub fn new(input: R, origin: &str, format: F) -> Self {
        Binary {
            records: Records::new(input, origin),
            format,
            size: None,
            buf: Vec::new(),
            ready: VecDeque::new(),
            ended: false,
        }
    }

    fn step(&mut self) -> Result<bool, TraceError> {
        if self.size.is_none() {
            let size = self.format.start(&mut self.records)?;
            self.size = Some(size);
            self.buf = vec![0u8; size];
        }
        let at = self.records.offset;
        if !self.records.next(&mut self.buf)? {
            return Ok(false);
        }
        self.format
            .record(&self.buf, &mut self.ready)
            .map_err(|bad| self.records.bad(self.records.number, at, bad))?;
        Ok(true)
    }
}

impl<R: Read, F: RecordFormat> Iterator for Binary<R, F> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                return Some(Ok(r));
            }
            if self.ended {
                return None;
            }
            match self.step() {
                Ok(true) => {}
                Ok(false) => self.ended = true,
                Err(e) => {
                    self.ended = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
