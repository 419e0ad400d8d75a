//! Plugged batches (blkparse's `P` / `U`, blktrace's `__BLK_TA_PLUG` /
//! `__BLK_TA_UNPLUG_IO`) carried into `Request::batch`, on hand-made
//! traces shaped as Linux 6.x prints them: a request's `Q`, then the plug
//! (`blk_add_rq_to_plug` fires `block_plug` after the first request's
//! queueing), the others' `Q`s, the unplug with its depth, the dispatches.

use traces::blktrace::Record;
use traces::{read, Batch, Format, Request, TraceError};

fn text(input: &str) -> Result<Vec<Request>, TraceError> {
    read(
        std::io::Cursor::new(input.to_string()),
        "t",
        Format::Blkparse,
    )
    .collect()
}

/// Process 100 submits three reads under one plug (an `io_submit` of
/// three); process 200 a single direct read under a plug of one (ext4's
/// direct I/O plugs around every read); process 300 two reads without
/// any plug event.
const TRACE: &str = "\
  8,0    0        1     0.000001000   100  Q   R 1000 + 8 [db]
  8,0    0        2     0.000001100   100  P   N [db]
  8,0    0        3     0.000001200   100  Q   R 2000 + 8 [db]
  8,0    0        4     0.000001300   100  Q   R 3000 + 8 [db]
  8,0    0        5     0.000001400   100  U   N [db] 3
  8,0    0        6     0.000001500   100  D   R 1000 + 8 [db]
  8,0    0        7     0.000001600   100  D   R 2000 + 8 [db]
  8,0    0        8     0.000001700   100  D   R 3000 + 8 [db]
  8,0    1        9     0.000002000   200  Q  RS 5000 + 8 [reader]
  8,0    1       10     0.000002100   200  P   N [reader]
  8,0    1       11     0.000002200   200  UT  N [reader] 1
  8,0    1       12     0.000002300   200  D  RS 5000 + 8 [reader]
  8,0    1       13     0.000002400   300  Q   R 7000 + 8 [other]
  8,0    1       14     0.000002500   300  Q   R 8000 + 8 [other]
  8,0    1       15     0.000002600   300  D   R 7000 + 8 [other]
  8,0    1       16     0.000002700   300  D   R 8000 + 8 [other]
  8,0    0       17     0.000010000     0  C   R 2000 + 8 [0]
  8,0    0       18     0.000011000     0  C   R 3000 + 8 [0]
  8,0    0       19     0.000012000     0  C   R 1000 + 8 [0]
  8,0    0       20     0.000013000     0  C  RS 5000 + 8 [0]
  8,0    0       21     0.000014000     0  C   R 7000 + 8 [0]
  8,0    0       22     0.000015000     0  C   R 8000 + 8 [0]
";

fn batch_of(r: &[Request], sector: u64) -> Option<Batch> {
    r.iter().find(|q| q.offset == sector * 512).unwrap().batch
}

#[test]
fn an_unplug_makes_its_requests_a_batch_whose_last_queued_is_last() {
    let r = text(TRACE).unwrap();
    assert_eq!(r.len(), 6, "{r:#?}");
    let b = |s| batch_of(&r, s);
    assert_eq!(
        b(1000),
        Some(Batch {
            id: 1,
            size: 3,
            last: false
        })
    );
    assert_eq!(b(2000).map(|b| (b.id, b.last)), Some((1, false)));
    assert_eq!(b(3000).map(|b| (b.id, b.last)), Some((1, true)));
    // A plug around one request batches nothing; no plug, no batch.
    assert_eq!((b(5000), b(7000), b(8000)), (None, None, None));
}

#[test]
fn an_unplug_takes_only_its_process_s_undispatched_requests_on_its_device() {
    // Process 100 had a request dispatched before its plug, and another
    // process queued one on the same device in between: neither is in
    // the batch of two.
    let t = "\
  8,0    0        1     0.000001000   100  Q   R 10 + 8 [db]
  8,0    0        2     0.000001050   100  D   R 10 + 8 [db]
  8,0    0        3     0.000001100   100  Q   R 20 + 8 [db]
  8,0    0        4     0.000001150   100  P   N [db]
  8,0    0        5     0.000001200   400  Q   R 30 + 8 [x]
  8,16   0        6     0.000001250   100  Q   R 35 + 8 [db]
  8,0    0        7     0.000001300   100  Q   R 40 + 8 [db]
  8,0    0        8     0.000001400   100  U   N [db] 2
  8,0    0        9     0.000002000     0  C   R 10 + 8 [0]
  8,0    0       10     0.000002100     0  C   R 20 + 8 [0]
  8,0    0       11     0.000002200     0  C   R 30 + 8 [0]
  8,16   0       12     0.000002250     0  C   R 35 + 8 [0]
  8,0    0       13     0.000002300     0  C   R 40 + 8 [0]
";
    let r = text(t).unwrap();
    let b = |s| batch_of(&r, s).map(|b| (b.id, b.size, b.last));
    assert_eq!(
        (b(10), b(20), b(30), b(35), b(40)),
        (None, Some((1, 2, false)), None, None, Some((1, 2, true)))
    );
}

#[test]
fn an_unplug_without_its_depth_is_refused_naming_the_field() {
    let e = text("  8,0    0        1     0.000001000   100  U   N [db]\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "t:1: depth: missing (an unplug line ends with its depth)"
    );
    let e = text("  8,0    0        1     0.000001000   100  U   N [db] x\n").unwrap_err();
    assert_eq!(e.to_string(), "t:1: depth: 'x' is not a whole number");
}

fn record(time: u64, sector: u64, action: u32, pid: u32, payload: Vec<u8>) -> Record {
    Record {
        sequence: 0,
        time,
        sector,
        bytes: if payload.is_empty() { 4096 } else { 0 },
        action,
        pid,
        device: 8 << 20,
        cpu: 0,
        error: 0,
        payload,
    }
}

#[test]
fn blktrace_s_unplug_carries_a_big_endian_depth() {
    // blktrace_api.h: __BLK_TA_QUEUE 1, ISSUE 7, COMPLETE 8, PLUG 9,
    // UNPLUG_IO 10; BLK_TC_QUEUE 1 << 4, BLK_TC_READ 1 << 0.
    let (q, d, c) = (1 | (17 << 16), 7 | (17 << 16), 8 | (17 << 16));
    let plug = 9 | (16 << 16);
    let unplug = 10 | (16 << 16);
    let mut bytes = Vec::new();
    for r in [
        record(10, 8, q, 5, vec![]),
        record(11, 0, plug, 5, vec![]),
        record(12, 16, q, 5, vec![]),
        record(13, 0, unplug, 5, 2u64.to_be_bytes().to_vec()),
        record(14, 8, d, 5, vec![]),
        record(15, 16, d, 5, vec![]),
        record(20, 8, c, 0, vec![]),
        record(21, 16, c, 0, vec![]),
    ] {
        bytes.extend(r.encode());
    }
    let r: Vec<Request> = read(
        std::io::Cursor::new(bytes),
        "t.blktrace.0",
        Format::Blktrace,
    )
    .collect::<Result<_, _>>()
    .unwrap();
    let got: Vec<_> = r
        .iter()
        .map(|q| (q.offset / 512, q.batch.map(|b| (b.id, b.size, b.last))))
        .collect();
    assert_eq!(got, [(8, Some((1, 2, false))), (16, Some((1, 2, true)))]);
    // An unplug without its depth is refused at its byte offset.
    let bad = record(13, 0, unplug, 5, vec![0, 1]).encode();
    let e: Vec<_> = read(std::io::Cursor::new(bad), "t.blktrace.0", Format::Blktrace).collect();
    assert_eq!(
        e[0].as_ref().unwrap_err().to_string(),
        "t.blktrace.0: byte 0: pdu_len: an unplug carries its 8-byte depth; this one 2 bytes"
    );
}
