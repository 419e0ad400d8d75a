//! Ten million rows streamed from a generator through a reader (no file
//! written): the reader's peak heap stays under a fixed bound, whatever the
//! trace's length. A counting allocator measures the live heap.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use traces::{read, Format};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A trace of `rows` lines, each written by `row` when the reader asks.
struct Generator {
    header: &'static str,
    rows: u64,
    next: u64,
    row: fn(u64, &mut Vec<u8>),
    buf: Vec<u8>,
    at: usize,
}

impl Generator {
    fn new(header: &'static str, rows: u64, row: fn(u64, &mut Vec<u8>)) -> Self {
        Generator {
            header,
            rows,
            next: 0,
            row,
            buf: header.as_bytes().to_vec(),
            at: 0,
        }
    }
}

impl Read for Generator {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.buf.len() {
            if self.next == self.rows {
                return Ok(0);
            }
            self.buf.clear();
            self.at = 0;
            // A few hundred rows at a time.
            while self.buf.len() < 16 << 10 && self.next < self.rows {
                (self.row)(self.next, &mut self.buf);
                self.next += 1;
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        let _ = self.header;
        Ok(n)
    }
}

const ROWS: u64 = 10_000_000;
/// What a reader may hold at its peak, beyond what was live before it
/// started: its line, the generator's 16 KiB, a `BufReader`'s 8 KiB, and
/// for the pairing formats the requests in flight. A reader that kept
/// the trace would pass this within the first few thousand rows.
const BOUND: usize = 1 << 20;

fn measure(format: Format, header: &'static str, row: fn(u64, &mut Vec<u8>)) -> (u64, usize) {
    let input = std::io::BufReader::new(Generator::new(header, ROWS, row));
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let mut n = 0u64;
    for r in read(input, "generated", format) {
        r.unwrap();
        n += 1;
    }
    (n, PEAK.load(Relaxed) - before)
}

#[test]
fn ten_million_rows_are_read_in_bounded_memory() {
    use std::io::Write;
    // MSR Cambridge: every row a request with both times.
    let (n, peak) = measure(Format::Msr, "", |i, b| {
        let _ = writeln!(
            b,
            "{},src1,0,Write,{},4096,1436",
            128_166_372_003_061_629 + i * 37,
            i * 4096
        );
    });
    assert_eq!(n, ROWS);
    assert!(peak < BOUND, "MSR: peak heap {peak} bytes over {ROWS} rows");
    eprintln!("msr: {n} requests, peak heap {peak} bytes");

    // blkparse: a Q, a D and a C per request, 64 requests in flight, so
    // the pairing holds requests between their issue and completion.
    let (n, peak) = measure(Format::Blkparse, "", |i, b| {
        let req = i / 3;
        let (t, action, sector) = match i % 3 {
            0 => (req * 1_000, "Q", req),
            1 => (req * 1_000 + 300, "D", req),
            // Completions lag 64 requests behind.
            _ => (req * 1_000 + 500, "C", req.saturating_sub(64)),
        };
        let _ = writeln!(
            b,
            "259,0    1 {:8} {:5}.{:09} 4172  {}  WS {} + 8 [db_bench]",
            i,
            t / 1_000_000_000,
            t % 1_000_000_000,
            action,
            sector * 8
        );
    });
    // Each request queued comes out once: completed, or at the end (the
    // last 64, and the first 64's repeated completions at sector 0 skipped).
    assert_eq!(n, ROWS / 3 + 1);
    assert!(
        peak < BOUND,
        "blkparse: peak heap {peak} bytes over {ROWS} rows"
    );
    eprintln!("blkparse: {n} requests, peak heap {peak} bytes");
}
