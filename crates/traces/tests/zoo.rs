//! The public datasets' formats (issue 41 items 1 and 2, and item 0's
//! input half): Thesios, Tectonic, vscsi v1/v2, oracleGeneral and lcs read
//! from hand-made files to concrete values; their bad input refused naming
//! the file, the line or record and the field; every new format and an
//! old one read from gzip, zstd and xz streams; a named pipe read through
//! `open` as a file is.

use std::io::Write;
use std::path::{Path, PathBuf};

use traces::{lcs, open, oracle, read, vscsi, Format, Request, ServiceClass, TraceError};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/traces")
        .join(name)
}

fn all(path: &Path, format: Option<Format>) -> Vec<Request> {
    open(path, format)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn bytes(format: Format, input: &[u8]) -> Result<Vec<Request>, TraceError> {
    read(std::io::Cursor::new(input.to_vec()), "t", format).collect()
}

fn error(format: Format, input: &[u8]) -> String {
    bytes(format, input).unwrap_err().to_string()
}

const SECOND: u64 = 1_000_000_000;
const MIB: u64 = 1 << 20;

#[test]
fn thesios_keeps_its_class_and_cache_fields() {
    let r = all(&example("sample.thesios.csv"), None);
    assert_eq!(r.len(), 5);
    let start = 1_705_276_800 * SECOND;
    assert_eq!(r[0].issue_ns, start + 10_000);
    // Completion: arrival plus simulated_latency (4.35 ms).
    assert_eq!(r[0].complete_ns, Some(start + 10_000 + 4_350_000));
    assert_eq!(
        (r[0].offset, r[0].bytes, r[0].write),
        (1_048_576, 65_536, false)
    );
    assert_eq!(r[0].device.as_deref(), Some("a41f0c"));
    assert_eq!(r[0].class, Some(ServiceClass::LatencySensitive));
    let t = r[0].thesios.as_deref().unwrap();
    assert_eq!(t.application.as_deref(), Some("bigtable"));
    assert_eq!(
        (t.from_flash_cache, t.cache_hit),
        (Some(false), Some(false))
    );
    assert_eq!(
        (t.latency_ns, t.simulated_latency_ns),
        (None, Some(4_350_000))
    );
    assert_eq!(r[1].thesios.as_ref().unwrap().cache_hit, Some(true));
    // A write: cache_hit -1 is "n/a".
    assert!(r[2].write);
    assert_eq!(r[2].class, Some(ServiceClass::ThroughputOriented));
    assert_eq!(r[2].thesios.as_ref().unwrap().cache_hit, None);
    assert_eq!(r[3].class, Some(ServiceClass::Other));
    assert_eq!(r[3].thesios.as_ref().unwrap().from_flash_cache, Some(true));
}

#[test]
fn thesios_columns_are_found_by_name_and_a_repeated_header_is_skipped() {
    // cache_dataset's spelling: another order, a `latency` column, the
    // classes in lower case with dashes; two shards concatenated.
    let header =
        "start_time,op_type,filename,file_offset,request_io_size_bytes,service_class,latency";
    let csv = format!(
        "{header}\n1.5,WRITE,f,0,4096,latency-sensitive,2.5e-04\n{header}\n2,read,g,8,512,,\n"
    );
    let r = bytes(Format::Thesios, csv.as_bytes()).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].issue_ns, 1_500_000_000);
    // No simulated_latency column: completion is arrival plus latency.
    assert_eq!(r[0].complete_ns, Some(1_500_000_000 + 250_000));
    assert_eq!(r[0].class, Some(ServiceClass::LatencySensitive));
    assert!(r[0].write);
    assert_eq!(
        (r[1].class, r[1].complete_ns, r[1].write),
        (None, None, false)
    );
    assert_eq!(r[1].device.as_deref(), Some("g"));
}

#[test]
fn tectonic_blocks_are_spans_of_the_address_space() {
    let r = all(&example("sample.tectonic.csv"), None);
    assert_eq!(r.len(), 5);
    assert_eq!(r[0].issue_ns, 1_696_118_400 * SECOND);
    assert_eq!(r[0].offset, 310 * 40 * MIB + 262_144);
    assert_eq!((r[0].bytes, r[0].write), (131_072, false));
    assert_eq!(r[0].device.as_deref(), Some("h7"));
    assert!(r[2].write, "putChunk is a write");
    assert_eq!(r[3].offset, 42 * 40 * MIB + 1_048_576);
    assert!(r.iter().all(|r| r.complete_ns.is_none()));
}

#[test]
fn tectonic_reads_baleens_space_separated_generations() {
    // 2019: 8 fields (with `pipeline`), the page's own example row.
    let r = bytes(
        Format::Tectonic,
        b"310 262144 4325376 1572074461.57806 1 24 3 5\n9 0 4096 1572074462 4 24 3 5\n",
    )
    .unwrap();
    assert_eq!(r[0].issue_ns, 1_572_074_461_578_060_000);
    assert_eq!(
        (r[0].offset, r[0].bytes),
        (310 * 40 * MIB + 262_144, 4_325_376)
    );
    assert!(!r[0].write && r[1].write, "GET_TEMP reads, PUT_PERM writes");
    // 2023: 10 fields, host last; UNKNOWN (100) read as a read.
    let r = bytes(Format::Tectonic, b"7 0 8 1.0 100 n u 3 1 hostA\n").unwrap();
    assert_eq!((r[0].write, r[0].device.as_deref()), (false, Some("hostA")));
    // A `#` header names the columns, in any order.
    let r = bytes(
        Format::Tectonic,
        b"# op_time op_name block_id io_size io_offset\n5 3 2 512 1024\n",
    )
    .unwrap();
    assert_eq!(
        (r[0].issue_ns, r[0].offset, r[0].bytes, r[0].write),
        (5 * SECOND, 2 * 40 * MIB + 1024, 512, true)
    );
}

#[test]
fn vscsi_reads_both_versions_by_their_ver_field() {
    let r = all(&example("sample.vscsi"), None);
    assert_eq!(r.len(), 5);
    assert_eq!(r[0].issue_ns, SECOND);
    assert_eq!(
        (r[0].offset, r[0].bytes, r[0].write),
        (2048 * 512, 4096, true)
    );
    assert_eq!(
        (r[1].write, r[1].bytes, r[1].offset),
        (false, 8192, 409_600 * 512)
    );
    assert!(r[4].flush && !r[4].write, "SYNCHRONIZE CACHE is a flush");
    let mut v2 = Vec::new();
    for (cmd, ts) in [(0x28, 5), (0x12, 6), (0x42, 7), (0x8a, 8)] {
        v2.extend(vscsi::encode(2, cmd, 512, 3, ts));
    }
    assert_eq!(Format::detect(&v2), Some(Format::Vscsi));
    let r = bytes(Format::Vscsi, &v2).unwrap();
    // INQUIRY (0x12) moves no block data: skipped.
    assert_eq!(r.len(), 3);
    assert_eq!((r[0].issue_ns, r[0].write), (5_000, false));
    assert!(r[1].discard, "UNMAP");
    assert!(r[2].write, "WRITE(16)");
}

#[test]
fn oracle_general_maps_objects_to_addresses_and_reads() {
    let r = all(&example("sample.oracleGeneral.bin"), None);
    assert_eq!(r.len(), 5);
    assert_eq!(
        (r[0].issue_ns, r[0].offset, r[0].bytes),
        (SECOND, 1_048_576, 4096)
    );
    assert_eq!(r[2].issue_ns, 2 * SECOND);
    assert_eq!(r[3].offset, r[0].offset, "one object, one address");
    assert!(r.iter().all(|r| !r.write && r.complete_ns.is_none()));
}

#[test]
fn lcs_reads_the_operation_and_tenant_of_version_2_and_later() {
    let r = all(&example("sample.lcs"), None);
    assert_eq!(r.len(), 4);
    assert_eq!(
        (r[0].issue_ns, r[0].offset, r[0].write),
        (SECOND, 1_048_576, false)
    );
    assert!(r[1].write, "op 13 is OP_WRITE");
    assert_eq!(r[0].device.as_deref(), Some("7"));
    assert_eq!((r[3].bytes, r[3].device.as_deref()), (16_384, Some("9")));
    // Version 1 is oracleGeneral's record after the header.
    let mut v1 = lcs::encode_header(1);
    v1.extend(oracle::encode(3, 99, 512, -1));
    let r = bytes(Format::Lcs, &v1).unwrap();
    assert_eq!(
        (r[0].issue_ns, r[0].offset, r[0].write),
        (3 * SECOND, 99, false)
    );
    assert_eq!(r[0].device, None);
    // Version 3: i64 size, op/tenant at 20, ttl, vtime; delete is a discard.
    let mut v3 = lcs::encode_header(3);
    v3.extend(2u32.to_le_bytes());
    v3.extend(77u64.to_le_bytes());
    v3.extend(8192i64.to_le_bytes());
    v3.extend((9u32 | 5 << 8).to_le_bytes());
    v3.extend(0u32.to_le_bytes());
    v3.extend((-1i64).to_le_bytes());
    let r = bytes(Format::Lcs, &v3).unwrap();
    assert_eq!((r[0].bytes, r[0].discard), (8192, true));
    assert_eq!(r[0].device.as_deref(), Some("5"));
}

#[test]
fn each_new_example_is_detected_as_its_format() {
    for (name, format) in [
        ("sample.thesios.csv", Format::Thesios),
        ("sample.tectonic.csv", Format::Tectonic),
        ("sample.vscsi", Format::Vscsi),
        ("sample.oracleGeneral.bin", Format::OracleGeneral),
        ("sample.lcs", Format::Lcs),
    ] {
        let head = std::fs::read(example(name)).unwrap();
        assert_eq!(Format::detect(&head), Some(format), "{name}");
        assert_eq!(Format::from_name(format.name()), Some(format));
    }
    assert_eq!(
        Format::detect(b"# block_id io_offset io_size op_time op_name\n1 2 3 4.5 1\n"),
        Some(Format::Tectonic)
    );
    // The old formats' examples keep their formats.
    for (name, format) in [
        ("sample.blkparse", Format::Blkparse),
        ("sample.disksim.trace", Format::Disksim),
        ("sample.alibaba.csv", Format::Alibaba),
        ("sample.blktrace.0", Format::Blktrace),
    ] {
        let head = std::fs::read(example(name)).unwrap();
        assert_eq!(Format::detect(&head), Some(format), "{name}");
    }
}

#[test]
fn bad_rows_and_records_name_file_line_or_record_and_field() {
    let h = "filename,file_offset,op_type,request_io_size_bytes,start_time,service_class";
    let text = [
        (Format::Thesios, format!("{h}\nf,0,READ,1,2,URGENT\n"), "t:2: service_class: 'URGENT' is not LATENCY_SENSITIVE, THROUGHPUT_ORIENTED or OTHER"),
        (Format::Thesios, format!("{h}\nf,0,TRIM,1,2,OTHER\n"), "t:2: op_type: 'TRIM' is not READ or WRITE"),
        (Format::Thesios, format!("{h}\nf,0,READ,1,yesterday,OTHER\n"), "t:2: start_time: 'yesterday' is not a non-negative number of seconds"),
        (Format::Thesios, format!("{h}\nf,0,READ,1,2\n"), "t:2: line: expected 6 columns (as the header names), found 5"),
        (Format::Thesios, format!("{h}\n,0,READ,1,2,OTHER\n"), "t:2: filename: empty"),
        (Format::Thesios, "f,0,READ,1,2,OTHER\n".to_string(), "t:1: header: the first line must name the columns (filename,file_offset,op_type,request_io_size_bytes,start_time,service_class,...); found 'f,0,READ,1,2,OTHER'"),
        (Format::Thesios, "filename,file_offset,op_type,start_time,service_class\n".to_string(), "t:1: header: names no 'request_io_size_bytes' column (the header read: 'filename,file_offset,op_type,start_time,...')"),
        (Format::Tectonic, "1 2 3 4.5 9 a b c\n".to_string(), "t:1: op_name: '9' is neither a GET (1, 2, 5, getChunkData.*) nor a PUT (3, 4, 6, putChunk.*)"),
        (Format::Tectonic, "1 2 3 4.5 1 a b\n".to_string(), "t:1: line: no header naming the columns, and 7 space-separated fields are neither Baleen's 8 or 10 (space separated) nor cache_dataset's 11 (op_time,block_id,block_id_size,io_size,io_offset,user_name,user_namespace,op_name,op_count,host_name,rs_shard_id)"),
        (Format::Tectonic, "x 2 3 4.5 1 a b c\n".to_string(), "t:1: block_id: 'x' is not a whole number"),
        (Format::Tectonic, "# op_time block_id io_offset io_size\n".to_string(), "t:1: header: names no 'op_name' column (the header read: 'op_time,block_id,io_offset,io_size')"),
        (Format::Tectonic, "1 2 3 4.5 1 a b c\n1 2 3 4.5 1 a b\n".to_string(), "t:2: line: expected 8 columns (as the header names), found 7"),
        (Format::Tectonic, "18446744073709551615 0 1 1.0 1 a b c\n".to_string(), "t:1: block_id: 18446744073709551615 blocks is past 2^64 in the unit read"),
    ];
    for (format, input, want) in text {
        assert_eq!(error(format, input.as_bytes()), want, "{format}: {input:?}");
    }

    // Binary: the record's number (from 1; 0 the header), its byte offset
    // and the field.
    let two = [oracle::encode(1, 1, 1, -1), oracle::encode(1, 2, 1, -1)].concat();
    assert_eq!(
        error(Format::OracleGeneral, &two[..34]),
        "t: record 2 (byte 24): record: the file ends 10 bytes into this 24-byte record (cut short)"
    );
    let mut v1 = vscsi::encode(1, 0x28, 512, 1, 1);
    v1.extend(vscsi::encode(2, 0x28, 512, 1, 2));
    assert_eq!(
        error(Format::Vscsi, &v1),
        "t: record 2 (byte 32): ver: this record is not version 1 as the trace's first is"
    );
    assert_eq!(
        error(Format::Vscsi, &[0u8; 40]),
        "t: record 1 (byte 0): ver: neither version 1 (ver 0x0000) nor 2 (ver 0x0000): not a vscsi trace"
    );
    let mut cut = vscsi::encode(2, 0x28, 512, 1, 1);
    cut.extend(&vscsi::encode(2, 0x28, 512, 1, 1)[..39]);
    assert_eq!(
        error(Format::Vscsi, &cut),
        "t: record 2 (byte 40): record: the file ends 39 bytes into this 40-byte record (cut short)"
    );
    assert_eq!(
        error(Format::Lcs, &lcs::encode_header(2)[..100]),
        "t: record 0 (byte 0): header: the file ends 100 bytes into its 8192-byte header"
    );
    assert_eq!(
        error(Format::Lcs, &lcs::encode_header(9)),
        "t: record 0 (byte 8): version: 9 is not an lcs version read (1 to 8)"
    );
    let mut old = lcs::encode_header(2);
    old[8184..].fill(0);
    assert_eq!(
        error(Format::Lcs, &old),
        "t: record 0 (byte 8184): end_magic: 0x0000000000000000 is not 0x123456789abcdef0 (an lcs header of another generation, or a damaged one)"
    );
    let mut bad_op = lcs::encode_header(2);
    bad_op.extend(lcs::encode_v2(1, 1, 1, 13, 0));
    bad_op.extend(lcs::encode_v2(1, 1, 1, 200, 0));
    assert_eq!(
        error(Format::Lcs, &bad_op),
        "t: record 2 (byte 8220): op: 200 is not one of libCacheSim's operations (0 to 14)"
    );
    let mut v3 = lcs::encode_header(3);
    v3.extend([0u8; 4]);
    v3.extend([0u8; 8]);
    v3.extend((-5i64).to_le_bytes());
    v3.extend([0u8; 16]);
    assert_eq!(
        error(Format::Lcs, &v3),
        "t: record 1 (byte 8192): obj_size: -5 is not a size in 0..2^32 bytes"
    );
}

type Compressor = fn(&[u8]) -> Vec<u8>;

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}
fn zstd(b: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(b, 3).unwrap()
}
fn xz(b: &[u8]) -> Vec<u8> {
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(b).unwrap();
    e.finish().unwrap()
}
const COMPRESSORS: [(&str, Compressor); 3] = [("gz", gzip), ("zst", zstd), ("xz", xz)];

#[test]
fn every_new_format_and_an_old_one_read_compressed_as_plain() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "sample.thesios.csv",
        "sample.tectonic.csv",
        "sample.vscsi",
        "sample.oracleGeneral.bin",
        "sample.lcs",
        "sample.alibaba.csv",
        "sample.blkparse",
    ] {
        let plain = std::fs::read(example(name)).unwrap();
        let want = all(&example(name), None);
        assert!(!want.is_empty(), "{name}");
        for (ext, compress) in COMPRESSORS {
            let packed = compress(&plain);
            assert_ne!(packed, plain);
            let path = dir.path().join(format!("{name}.{ext}"));
            std::fs::write(&path, &packed).unwrap();
            assert_eq!(all(&path, None), want, "{name}.{ext}, detected");
            let named = Format::detect(&plain).unwrap();
            assert_eq!(all(&path, Some(named)), want, "{name}.{ext}, named");
            assert_eq!(
                traces::Compression::of(&packed).map(|c| c.name()),
                Some(match ext {
                    "gz" => "gzip",
                    "zst" => "zstd",
                    _ => "xz",
                })
            );
        }
    }
    // A zstd skippable frame first (RFC 8878, 3.1.2), as pzstd writes one.
    let csv = std::fs::read(example("sample.alibaba.csv")).unwrap();
    let mut skippable = vec![0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4];
    skippable.extend(zstd(&csv));
    let path = dir.path().join("skippable.csv.zst");
    std::fs::write(&path, skippable).unwrap();
    assert_eq!(all(&path, None), all(&example("sample.alibaba.csv"), None));
    // Two gzip members, as pigz or `cat a.gz b.gz` make them: read through.
    // The second member is a later hour of the same volume (its times one
    // hour on), so that the joined trace is still in time order.
    let later: String = String::from_utf8(csv.clone())
        .unwrap()
        .lines()
        .map(|row| {
            let (head, ts) = row.rsplit_once(',').unwrap();
            format!("{head},{}\n", ts.parse::<u64>().unwrap() + 3_600_000_000)
        })
        .collect();
    let path = dir.path().join("twice.csv.gz");
    std::fs::write(&path, [gzip(&csv), gzip(later.as_bytes())].concat()).unwrap();
    let first = all(&example("sample.alibaba.csv"), None);
    let joined = all(&path, None);
    assert_eq!(joined.len(), 2 * first.len());
    assert_eq!(
        joined[first.len()].issue_ns,
        first[0].issue_ns + 3_600_000_000_000
    );
}

#[test]
fn a_damaged_compressed_stream_is_one_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let plain = "0,R,1,4096,3\n".repeat(20_000);
    for (ext, compress) in COMPRESSORS {
        let mut packed = compress(plain.as_bytes());
        let cut = packed.len() / 2;
        packed.truncate(cut);
        let path = dir.path().join(format!("cut.csv.{ext}"));
        std::fs::write(&path, &packed).unwrap();
        let shown = path.display().to_string();
        let e = match open(&path, Some(Format::Alibaba)) {
            Err(e) => e,
            Ok(it) => it.collect::<Result<Vec<_>, _>>().unwrap_err(),
        }
        .to_string();
        assert!(e.starts_with(&shown), "{ext}: {e}");
        assert!(!e.contains('\n'), "{ext}: {e}");
    }
}

/// A named pipe in `dir`, written from a thread with `content`.
fn fifo(dir: &Path, name: &str, content: Vec<u8>) -> (PathBuf, std::thread::JoinHandle<()>) {
    let path = dir.join(name);
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let p = path.clone();
    let writer = std::thread::spawn(move || {
        // Opening a FIFO for writing waits for its reader.
        let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        // The reader may stop early (an error); a closed pipe is no failure here.
        let _ = f.write_all(&content);
    });
    (path, writer)
}

#[test]
fn a_pipe_is_read_once_with_its_format_detected() {
    let dir = tempfile::tempdir().unwrap();
    for (name, compress) in [
        ("sample.msr.csv", None),
        ("sample.thesios.csv", None),
        ("sample.vscsi", None),
        ("sample.tectonic.csv", Some(zstd as Compressor)),
        ("sample.lcs", Some(gzip as Compressor)),
    ] {
        let plain = std::fs::read(example(name)).unwrap();
        let content = compress.map_or(plain.clone(), |c| c(&plain));
        let (path, writer) = fifo(dir.path(), &format!("{name}.fifo"), content);
        assert_eq!(all(&path, None), all(&example(name), None), "{name}");
        writer.join().unwrap();
    }
}

#[test]
fn a_trace_longer_than_the_detection_head_streams_through_a_pipe() {
    // Past DETECT_BYTES, so that the peeked head and the rest must join.
    let rows: String = (0..5_000)
        .map(|i| format!("{i},R,{},4096,{}\n", i * 4096, 1_000 + i))
        .collect();
    assert!(rows.len() > 8 * traces::DETECT_BYTES);
    let dir = tempfile::tempdir().unwrap();
    let (path, writer) = fifo(dir.path(), "long.fifo", xz(rows.as_bytes()));
    let r = all(&path, None);
    writer.join().unwrap();
    assert_eq!(r.len(), 5_000);
    assert!(r
        .iter()
        .enumerate()
        .all(|(i, r)| r.offset == i as u64 * 4096));
}
