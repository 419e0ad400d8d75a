//! Each format's example file (`examples/traces/`) read to concrete values,
//! detected from its first bytes, and its bad rows refused naming the
//! file, line (or byte) and field.

use std::path::{Path, PathBuf};

use traces::blktrace::Record;
use traces::{open, read, Format, Request, TraceError};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/traces")
        .join(name)
}

fn all(name: &str, format: Option<Format>) -> Vec<Request> {
    open(&example(name), format)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn text(format: Format, input: &str) -> Result<Vec<Request>, TraceError> {
    read(std::io::Cursor::new(input.to_string()), "t", format).collect()
}

fn error(format: Format, input: &str) -> String {
    text(format, input).unwrap_err().to_string()
}

#[test]
fn blkparse_pairs_issue_and_completion_by_sector_through_merges() {
    let r = all("sample.blkparse", None);
    assert_eq!(r.len(), 4, "{r:#?}");
    assert_eq!(
        r[0],
        Request {
            issue_ns: 4_102,
            complete_ns: Some(19_640),
            offset: 2048 * 512,
            bytes: 4096,
            write: true,
            sync: true,
            pid: Some(4172),
            comm: Some("db_bench".into()),
            device: Some("259,0".into()),
            // Dispatched (`D`) on CPU 1.
            cpu: Some(1),
            ..Request::default()
        }
    );
    // The back-merged bio completes with the request it joined: 64 sectors.
    assert_eq!((r[1].issue_ns, r[1].complete_ns), (13_377, Some(41_006)));
    assert_eq!(
        (r[1].offset, r[1].bytes, r[1].write),
        (409_600 * 512, 32_768, false)
    );
    assert_eq!(r[1].pid, Some(4173));
    // A flush without data: printed without a sector, paired by device.
    assert_eq!(
        (r[2].bytes, r[2].offset, r[2].flush, r[2].sync),
        (0, 0, true, true)
    );
    assert_eq!((r[2].issue_ns, r[2].complete_ns), (52_911, Some(61_444)));
    assert_eq!(r[2].comm.as_deref(), Some("jbd2/nvme0n1p1-8"));
    // Issued and never completed before the trace ended: last, no completion.
    assert_eq!((r[3].issue_ns, r[3].complete_ns), (70_800, None));
}

#[test]
fn blktrace_binary_merges_per_cpu_files_and_pairs_by_sector() {
    let want = [
        (4_200, 19_700, 2048 * 512, 4096, true),
        (31_000, 52_000, 409_600 * 512, 16_384, false),
    ];
    // By one per-CPU file, by the prefix, and detected.
    for (path, format) in [
        ("sample.blktrace.0", Some(Format::Blktrace)),
        ("sample.blktrace.1", None),
        ("sample", Some(Format::Blktrace)),
    ] {
        let r = all(path, format);
        assert_eq!(r.len(), 2, "{path}: {r:#?}");
        for (got, want) in r.iter().zip(want) {
            assert_eq!(
                (
                    got.issue_ns,
                    got.complete_ns.unwrap(),
                    got.offset,
                    got.bytes,
                    got.write
                ),
                want
            );
            assert_eq!(
                got.comm.as_deref(),
                Some("db_bench"),
                "from the notify record"
            );
            assert_eq!(got.pid, Some(4172));
            assert_eq!(got.device.as_deref(), Some("259,0"));
        }
        assert!(r[0].sync && !r[1].sync);
    }
}

#[test]
fn fio_v2_times_are_the_sum_of_waits() {
    let r = all("sample.fio-v2.iolog", None);
    let got: Vec<_> = r
        .iter()
        .map(|r| (r.issue_ns, r.offset, r.bytes, r.write, r.flush, r.discard))
        .collect();
    assert_eq!(
        got,
        [
            (0, 0, 4096, true, false, false),
            (0, 4096, 4096, true, false, false),
            (250_000, 1_048_576, 16_384, false, false, false),
            (250_000, 0, 0, false, true, false),
            (250_000, 8_388_608, 65_536, false, false, true),
        ]
    );
    assert!(r.iter().all(|r| r.complete_ns.is_none()));
    assert_eq!(r[0].device.as_deref(), Some("/dev/nvme0n1"));
}

#[test]
fn fio_v3_times_are_microsecond_timestamps() {
    let r = all("sample.fio-v3.iolog", None);
    let got: Vec<_> = r
        .iter()
        .map(|r| (r.issue_ns, r.offset, r.bytes, r.write, r.flush))
        .collect();
    assert_eq!(
        got,
        [
            (14_000, 536_870_912, 4096, false, false),
            (31_000, 12_288, 4096, false, false),
            (45_000, 268_435_456, 131_072, true, false),
            (60_000, 0, 0, false, true),
        ]
    );
}

#[test]
fn biosnoop_issue_is_completion_minus_latency() {
    let r = all("sample.biosnoop", None);
    assert_eq!(r.len(), 5);
    // Issued before the first completion, the clock's origin: at 0.
    assert_eq!((r[0].issue_ns, r[0].complete_ns), (0, Some(0)));
    assert_eq!((r[2].issue_ns, r[2].complete_ns), (96_000, Some(146_000)));
    assert_eq!(r[2].comm.as_deref(), Some("jbd2/nvme0n1p1"));
    assert_eq!(
        (r[2].offset, r[2].bytes, r[2].write),
        (1_050_624 * 512, 8192, true)
    );
    assert_eq!(
        (r[3].issue_ns, r[3].complete_ns),
        (663_000, Some(1_873_000))
    );
    // A command name with a space.
    assert_eq!(r[4].comm.as_deref(), Some("my app"));
    assert_eq!((r[4].pid, r[4].issue_ns), (Some(5120), 2_120_000));
    assert_eq!(r[4].device.as_deref(), Some("nvme0n1"));
}

#[test]
fn biosnoop_reads_the_queue_and_pattern_columns_when_present() {
    let t = "Tracing block I/O... Hit Ctrl-C to end.\nTIME(s)     COMM           PID     DISK      T SECTOR     BYTES   P QUE(ms) LAT(ms)\n1.500000    fio            77      sda       R 8          4096    S    0.01    0.25\n";
    let r = text(Format::Biosnoop, t).unwrap();
    assert_eq!(
        (r[0].issue_ns, r[0].complete_ns),
        (1_499_750_000, Some(1_500_000_000))
    );
}

#[test]
fn msr_times_are_filetime_ticks() {
    let r = all("sample.msr.csv", None);
    assert_eq!(r.len(), 4);
    assert_eq!(r[0].issue_ns, 128_166_372_003_061_629 * 100);
    assert_eq!(
        r[0].complete_ns,
        Some(128_166_372_003_061_629 * 100 + 143_600)
    );
    assert_eq!(
        (r[0].offset, r[0].bytes, r[0].write),
        (6_020_464_640, 4096, true)
    );
    assert_eq!(r[3].device.as_deref(), Some("src1/1"));
    assert!(!r[1].write);
}

#[test]
fn alibaba_times_are_unix_microseconds() {
    let r = all("sample.alibaba.csv", None);
    assert_eq!(r.len(), 4);
    assert_eq!(r[1].issue_ns, 1_577_808_000_000_714_000);
    assert_eq!(
        (r[1].offset, r[1].bytes, r[1].write),
        (126_703_648_768, 16_384, true)
    );
    assert_eq!(r[2].device.as_deref(), Some("17"));
    assert!(r.iter().all(|r| r.complete_ns.is_none()));
}

#[test]
fn tencent_offsets_are_sectors_and_times_seconds() {
    let r = all("sample.tencent.csv", None);
    assert_eq!(r.len(), 4, "the header is skipped");
    assert_eq!(r[0].issue_ns, 1_538_323_200_000_000_000);
    assert_eq!(
        (r[0].offset, r[0].bytes, r[0].write),
        (40_960 * 512, 4096, true)
    );
    assert_eq!((r[2].bytes, r[2].write), (131_072, false));
    assert_eq!(r[3].device.as_deref(), Some("1063"));
}

#[test]
fn disksim_type_zero_is_a_write() {
    let r = all("sample.disksim.trace", None);
    assert_eq!(r.len(), 4);
    assert_eq!(r[0].issue_ns, 938_513_000);
    assert_eq!(
        (r[0].offset, r[0].bytes, r[0].write),
        (264_719_034 * 512, 8192, true)
    );
    assert!(!r[1].write);
    assert_eq!(r[2].device.as_deref(), Some("13"));
}

#[test]
fn the_shared_disksim_traces_are_read_whole() {
    // A copy of the shared DiskSim traces (examples/traces/disksim/README.md).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces/disksim");
    // The README counts newlines: wsrch's last request has none (24,782 + 1).
    for (name, n) in [("tpcc-small.trace", 6_999), ("wsrch-small.trace", 24_783)] {
        let path = dir.join(name);
        if !path.exists() {
            eprintln!("{}: not here; skipped", path.display());
            continue;
        }
        let count = open(&path, None)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .len();
        assert_eq!(count, n, "{name}");
    }
}

#[test]
fn every_example_is_detected_as_its_format() {
    for (name, format) in [
        ("sample.blkparse", Format::Blkparse),
        ("sample.blktrace.0", Format::Blktrace),
        ("sample.fio-v2.iolog", Format::FioV2),
        ("sample.fio-v3.iolog", Format::FioV3),
        ("sample.biosnoop", Format::Biosnoop),
        ("sample.msr.csv", Format::Msr),
        ("sample.alibaba.csv", Format::Alibaba),
        ("sample.tencent.csv", Format::Tencent),
        ("sample.disksim.trace", Format::Disksim),
    ] {
        let head = std::fs::read(example(name)).unwrap();
        assert_eq!(Format::detect(&head), Some(format), "{name}");
        assert_eq!(Format::from_name(format.name()), Some(format));
    }
    assert_eq!(Format::detect(b"hello world\n"), None);
    let e = open(&example("../../README.md"), None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("cannot tell the trace's format"), "{e}");
}

#[test]
fn bad_rows_name_file_line_and_field() {
    let cases = [
        (Format::Alibaba, "0,R,1,2,3\n0,X,1,2,3\n", "t:2: opcode: 'X' is not R or W"),
        (Format::Alibaba, "0,R,1,2\n", "t:1: line: expected 5 columns (device_id,opcode,offset,length,timestamp), found 4"),
        (Format::Alibaba, "0,R,1,4294967296,3\n", "t:1: length: 4294967296 is past 2^32"),
        (Format::Alibaba, "0,R,1,2,18446744073709551615\n", "t:1: timestamp: 18446744073709551615 us is past 2^64 in the unit read"),
        (Format::Msr, "1,h,0,Write,4k,4096,1\n", "t:1: Offset: '4k' is not a whole number"),
        (Format::Msr, "1,h,0,Trim,4,4096,1\n", "t:1: Type: 'Trim' is not Read or Write"),
        (Format::Tencent, "1,2,3,2,5\n", "t:1: IOType: '2' is not 0 (read) or 1 (write)"),
        (Format::Tencent, "1,2,-3,1,5\n", "t:1: Size: '-3' is not a whole number"),
        (Format::Disksim, "1 2 3 4 7\n", "t:1: type: '7' is not 0 (write) or 1 (read)"),
        (Format::Disksim, "1 2 3 4\n", "t:1: line: expected 5 fields (arrival_time_ns device_number start_lba size_in_sectors type), found 4"),
        (Format::FioV2, "fio version 2 iolog\nf read x 1\n", "t:2: offset: 'x' is not a whole number"),
        (Format::FioV2, "fio version 2 iolog\nf erase 0 1\n", "t:2: action: 'erase' is not an I/O action (read, write, sync, datasync, trim, wait)"),
        (Format::FioV3, "fio version 2 iolog\n", "t:1: header: expected 'fio version 3 iolog', found 'fio version 2 iolog'"),
        (Format::FioV3, "fio version 3 iolog\nsoon f read 0 1\n", "t:2: timestamp: 'soon' is not a whole number"),
        (Format::FioV3, "", "t:1: header: empty log: expected 'fio version 3 iolog'"),
        (Format::Biosnoop, "TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms)\nx db 1 nvme0n1 R 1 4096 0.1\n", "t:2: TIME(s): 'x' is not a non-negative decimal number"),
        (Format::Biosnoop, "TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms)\n0.1 db 1 nvme0n1 D 1 4096 0.1\n", "t:2: T: 'D' is not R or W"),
        (Format::Biosnoop, "PID COMM\n", "t:1: header: expected biosnoop's 'TIME(s) COMM PID DISK T SECTOR BYTES ... LAT(ms)', found 'PID COMM'"),
        (Format::Blkparse, "8,0 0 1 0.1 12 Q XYZ 1 + 8 [a]\n", "t:1: rwbs: 'XYZ' is not an RWBS string"),
        (Format::Blkparse, "8,0 0 1 zz 12 Q R 1 + 8 [a]\n", "t:1: time: 'zz' is not a non-negative decimal number"),
        (Format::Blkparse, "8:0 0 1 0.1 12 Q R 1 + 8 [a]\n", "t:1: device: '8:0' is not major,minor"),
        (Format::Blkparse, "8,0 0 1 0.1 12 Q R x + 8 [a]\n", "t:1: sector: 'x' is not a whole number"),
        (Format::Blkparse, "8,0 0 1 0.1\n", "t:1: pid: missing (a blkparse event line has at least 7 fields)"),
    ];
    for (format, input, want) in cases {
        assert_eq!(error(format, input), want, "{format}: {input:?}");
    }
}

#[test]
fn a_binary_line_or_a_huge_one_is_refused_not_held() {
    let bytes = b"0,R,1,2,3\n\xff\xfe,R\n".to_vec();
    let e = read(std::io::Cursor::new(bytes), "t", Format::Alibaba)
        .collect::<Result<Vec<_>, _>>()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "t:2: line: not valid UTF-8 (a trace is text)"
    );
    let long = format!("0,R,1,2,{}\n", "9".repeat(10_000));
    assert_eq!(
        error(Format::Alibaba, &long),
        "t:1: line: longer than 4096 bytes (a trace row is one short line of text)"
    );
}

#[test]
fn nothing_is_read_after_a_bad_row() {
    let mut it = read(
        std::io::Cursor::new("0,R,1,2,3\nbad\n0,R,1,2,3\n"),
        "t",
        Format::Alibaba,
    );
    assert!(it.next().unwrap().is_ok());
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
}

fn record(time: u64, sector: u64, action: u32) -> Record {
    Record {
        sequence: 0,
        time,
        sector,
        bytes: 4096,
        action,
        pid: 1,
        device: 8 << 20,
        cpu: 0,
        error: 0,
        payload: vec![],
    }
}

#[test]
fn bad_binary_records_name_the_byte_offset() {
    // Queue (1) | BLK_TC_QUEUE, then garbage where the second record starts.
    let mut bytes = record(10, 8, 1 | (16 << 16)).encode();
    bytes.extend([0xde, 0xad, 0xbe, 0xef]);
    bytes.extend([0u8; 44]);
    let e: Vec<_> = read(
        std::io::Cursor::new(bytes),
        "t.blktrace.0",
        Format::Blktrace,
    )
    .collect();
    assert_eq!(
        e.last().unwrap().as_ref().unwrap_err().to_string(),
        "t.blktrace.0: byte 48: magic: 0xefbeadde is not blktrace's (0x65617400 | version)"
    );
    // A file cut inside a record.
    let mut bytes = record(10, 8, 1 | (16 << 16)).encode();
    bytes.truncate(30);
    let e: Vec<_> = read(
        std::io::Cursor::new(bytes),
        "t.blktrace.0",
        Format::Blktrace,
    )
    .collect();
    assert_eq!(
        e[0].as_ref().unwrap_err().to_string(),
        "t.blktrace.0: byte 0: magic: the file ends 30 bytes into a 48-byte record"
    );
    // Another version of the record.
    let mut bytes = record(10, 8, 1).encode();
    bytes[0] = 0x08;
    let e: Vec<_> = read(
        std::io::Cursor::new(bytes),
        "t.blktrace.0",
        Format::Blktrace,
    )
    .collect();
    assert_eq!(
        e[0].as_ref().unwrap_err().to_string(),
        "t.blktrace.0: byte 0: magic: version 0x08 is not the one read (0x07)"
    );
}

#[test]
fn big_endian_blktrace_is_read_too() {
    let le = record(5, 16, 8 | (128 << 16)).encode();
    // Swap every field of the 48-byte header to big-endian.
    let mut be = Vec::new();
    for (off, size) in [
        (0, 4),
        (4, 4),
        (8, 8),
        (16, 8),
        (24, 4),
        (28, 4),
        (32, 4),
        (36, 4),
        (40, 4),
        (44, 2),
        (46, 2),
    ] {
        let mut f = le[off..off + size].to_vec();
        f.reverse();
        be.extend(f);
    }
    let mut q = record(1, 16, 1 | (16 << 16)).encode();
    let mut qbe = Vec::new();
    for (off, size) in [
        (0, 4),
        (4, 4),
        (8, 8),
        (16, 8),
        (24, 4),
        (28, 4),
        (32, 4),
        (36, 4),
        (40, 4),
        (44, 2),
        (46, 2),
    ] {
        let mut f = q[off..off + size].to_vec();
        f.reverse();
        qbe.extend(f);
    }
    q.clear();
    qbe.extend(be);
    let r: Vec<_> = read(std::io::Cursor::new(qbe), "t", Format::Blktrace)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].issue_ns, r[0].complete_ns, r[0].offset),
        (0, Some(4), 16 * 512)
    );
    assert_eq!(r[0].device.as_deref(), Some("8,0"));
}

#[test]
fn a_missing_file_or_a_format_that_does_not_fit_is_one_line() {
    let e = open(&example("nope.csv"), Some(Format::Msr))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with(&format!("{}: cannot open: ", example("nope.csv").display())),
        "{e}"
    );
    // The blkparse example read as MSR: its first line is not MSR's.
    let e = open(&example("sample.blkparse"), Some(Format::Msr))
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("sample.blkparse:1: line: expected 7 columns (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found 2"), "{e}");
}
