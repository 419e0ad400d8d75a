//! What is fuzzed: each target's side-effect-free parse function (no file
//! opened, nothing simulated), its seed corpus (the repository's own inputs)
//! and its dictionary of hostile tokens.

use std::path::{Path, PathBuf};

/// One parser under test.
pub struct Target {
    pub name: &'static str,
    /// Starting inputs; the driver adds the inputs a parser accepts.
    pub seeds: Vec<Vec<u8>>,
    /// Tokens the mutator inserts.
    pub dict: Vec<Vec<u8>>,
    /// Parses one input, true if accepted; a panic, a hang or a large
    /// allocation is a finding, an `Err` is the parser doing its job.
    pub run: fn(&[u8]) -> bool,
}

/// The names `--target` accepts besides `all`.
pub const NAMES: &[&str] = &[
    "jobs",
    "stream",
    "profile-host",
    "profile-device",
    "trace-blkparse",
    "trace-blktrace",
    "trace-fio-v2",
    "trace-fio-v3",
    "trace-biosnoop",
    "trace-msr",
    "trace-alibaba",
    "trace-tencent",
    "trace-disksim",
    "trace-thesios",
    "trace-tectonic",
    "trace-vscsi",
    "trace-oracle-general",
    "trace-lcs",
];

/// The example traces (`examples/traces/`), every format's, seed every
/// trace target: a reader meets the others' rows too.
const TRACE_SEEDS: &[(&str, &str)] = &[
    ("examples/traces", "blkparse"),
    ("examples/traces", "iolog"),
    ("examples/traces", "biosnoop"),
    ("examples/traces", "csv"),
    ("examples/traces", "trace"),
    ("examples/traces", "0"),
    ("examples/traces", "1"),
    ("examples/traces", "vscsi"),
    ("examples/traces", "bin"),
    ("examples/traces", "lcs"),
];

/// The target called `name`, seeded from the repository at `root`.
pub fn by_name(name: &str, root: &Path) -> Option<Target> {
    Some(match name {
        "jobs" => Target {
            name: "jobs",
            seeds: seeds(
                root,
                &[
                    ("examples", "fio"),
                    ("crates/jobs/tests/data", "fio"),
                    ("crates/repro/jobs", "fio"),
                ],
            ),
            dict: jobs_dict(),
            run: run_jobs,
        },
        "stream" => Target {
            name: "stream",
            seeds: seeds(root, &[("examples/streams", "csv")]),
            dict: stream_dict(),
            run: run_stream,
        },
        "profile-host" => Target {
            name: "profile-host",
            seeds: seeds(root, &[("profiles/hosts", "toml")]),
            dict: profile_dict(&seeds(root, &[("profiles/hosts", "toml")])),
            run: run_host,
        },
        "profile-device" => {
            let mut s = seeds(root, &[("profiles/devices", "toml")]);
            s.push(sim::DeviceProfile::constant_service_toml("5500ns", 1, 1_000_000).into_bytes());
            Target {
                name: "profile-device",
                dict: profile_dict(&s),
                seeds: s,
                run: run_device,
            }
        }
        trace if trace.starts_with("trace-") => {
            let format = traces::Format::from_name(&trace["trace-".len()..])?;
            Target {
                name: NAMES.iter().find(|n| **n == trace)?,
                seeds: seeds(root, TRACE_SEEDS),
                dict: trace_dict(format),
                run: trace_runner(format),
            }
        }
        _ => return None,
    })
}

/// The workspace root this crate was built in (the seed files live there).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

// The parsers take `&str`; the CLI reads files with `read_to_string`, which
// refuses invalid UTF-8 before any parser runs. Lossy conversion keeps the
// fuzzer's invalid bytes as U+FFFD, the nearest text a parser can see.
fn text(input: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(input)
}

/// The longest error message a hostile input may produce: values are quoted
/// cut to 60 characters (jobs' `quote`), so a message past this echoes input
/// it should have cut (issue 12 item 14: "echo a 1 MB value").
pub const MAX_MESSAGE: usize = 1000;

/// The CLI prints each error's message: formatting it is part of parsing (a
/// message that slices a long value could panic). Bad input gets one line
/// (the README's error convention), so a message with a line break or an echo
/// of a long value is a finding, reported as a panic with the message.
fn accepted<T, E: std::fmt::Display>(result: Result<T, E>) -> bool {
    match result {
        Ok(_) => true,
        Err(e) => {
            let message = e.to_string();
            assert!(
                !message.contains('\n') && !message.contains('\r'),
                "an error message spans lines: {:?}",
                message.chars().take(300).collect::<String>()
            );
            assert!(
                message.chars().count() <= MAX_MESSAGE,
                "an error message of {} characters: {:?}",
                message.chars().count(),
                message.chars().take(300).collect::<String>()
            );
            false
        }
    }
}

fn run_jobs(input: &[u8]) -> bool {
    let env = |var: &str| match var {
        "FUZZ" => Some("4k".to_string()),
        // Substitution is single-pass (jobs/src/ini.rs); a self-reference
        // checks that it stays so.
        "SELF" => Some("${SELF}".to_string()),
        _ => None,
    };
    accepted(jobs::parse_str(&text(input), "fuzz.fio", &env))
}

fn run_stream(input: &[u8]) -> bool {
    accepted(policy::stream::parse(&text(input), "fuzz.csv"))
}

fn run_host(input: &[u8]) -> bool {
    accepted(sim::HostProfile::parse(&text(input), "fuzz-host.toml"))
}

fn run_device(input: &[u8]) -> bool {
    accepted(sim::DeviceProfile::parse(&text(input), "fuzz-device.toml"))
}

/// Reads the input as one trace format, every request to the end or the
/// first error. The readers take bytes (binary, or text they check for
/// UTF-8 themselves), so the input is given as it is.
fn run_trace(input: &[u8], format: traces::Format) -> bool {
    let input = std::io::Cursor::new(input.to_vec());
    let read = traces::read(input, "fuzz.trace", format).try_fold(0u64, |n, r| r.map(|_| n + 1));
    accepted(read)
}

fn trace_runner(format: traces::Format) -> fn(&[u8]) -> bool {
    use traces::Format::*;
    match format {
        Blkparse => |i| run_trace(i, Blkparse),
        Blktrace => |i| run_trace(i, Blktrace),
        FioV2 => |i| run_trace(i, FioV2),
        FioV3 => |i| run_trace(i, FioV3),
        Biosnoop => |i| run_trace(i, Biosnoop),
        Msr => |i| run_trace(i, Msr),
        Alibaba => |i| run_trace(i, Alibaba),
        Tencent => |i| run_trace(i, Tencent),
        Disksim => |i| run_trace(i, Disksim),
        Thesios => |i| run_trace(i, Thesios),
        Tectonic => |i| run_trace(i, Tectonic),
        Vscsi => |i| run_trace(i, Vscsi),
        OracleGeneral => |i| run_trace(i, OracleGeneral),
        Lcs => |i| run_trace(i, Lcs),
    }
}

/// Each format's own words (headers, actions, RWBS, separators), numbers
/// at the edges of the widths they are read into, and blktrace's magic.
fn trace_dict(format: traces::Format) -> Vec<Vec<u8>> {
    let mut d = common_tokens();
    let words: &[&str] = match format {
        traces::Format::Blkparse => &[
            "259,0    1        1     0.000000000  4172  Q  WS 2048 + 8 [db_bench]\n",
            "259,0    1        9     0.000061444     0  C FWS 0 [0]\n",
            "8,0 0 1 0.1 1 D R 0 + 0 (cdb) [x]\n",
            "CPU0 (8,0):\n",
            "Total (8,0):\n",
            " Q ",
            " D ",
            " C ",
            " M ",
            " F ",
            " G ",
            " UT ",
            " m ",
            "WS",
            "FWS",
            "RM",
            "N",
            "DE",
            "WFS",
            "RA",
            " + ",
            "[",
            "]",
            "(",
            ")",
            "8,0",
            "4294967295,1048575",
        ],
        traces::Format::Blktrace => &["\x07tae", "\x00tae", "eat\x07"],
        traces::Format::FioV2 | traces::Format::FioV3 => &[
            traces::fio::HEADER_V2,
            traces::fio::HEADER_V3,
            "fio version 2 iolog\n",
            "fio version 3 iolog\n",
            "/dev/nvme0n1 read 0 4096\n",
            "14 /dev/nvme0n1 write 0 4096\n",
            " add",
            " open",
            " close",
            " read ",
            " write ",
            " sync ",
            " datasync ",
            " trim ",
            " wait ",
        ],
        traces::Format::Biosnoop => &[
            "TIME(s)     COMM           PID     DISK      T SECTOR     BYTES   LAT(ms)\n",
            "TIME(s) COMM PID DISK T SECTOR BYTES P QUE(ms) LAT(ms)\n",
            "0.000021    db_bench       4173    nvme0n1   R 409600     32768      0.03\n",
            "Tracing block I/O... Hit Ctrl-C to end.\n",
            "Possibly lost 3 samples\n",
            " R ",
            " W ",
            "-1",
            "0.",
            ".5",
        ],
        traces::Format::Msr => &[
            traces::csv::msr::HEADER,
            "128166372003061629,src1,0,Write,6020464640,4096,1436\n",
            "Read",
            "Write",
            "read",
        ],
        traces::Format::Alibaba => &[
            traces::csv::alibaba::HEADER,
            "0,R,126703644672,4096,1577808000000626\n",
            ",R,",
            ",W,",
        ],
        traces::Format::Tencent => &[
            traces::csv::tencent::HEADER,
            "1538323200,40960,8,1,1063\n",
            ",0,",
            ",1,",
        ],
        traces::Format::Disksim => &["938513000 4 264719034 16 0\n", " 0\n", " 1\n"],
        traces::Format::Thesios => &[
            "filename,file_offset,application,c_time,io_zone,redundancy_type,op_type,service_class,from_flash_cache,cache_hit,request_io_size_bytes,disk_io_size_bytes,response_io_size_bytes,start_time,disk_time,simulated_disk_start_time,simulated_latency\n",
            "f1,4096,app,1705276000,WARM,REPLICATED,READ,LATENCY_SENSITIVE,0,1,4096,0,4096,1705276800.000001,0,0,0.0005\n",
            "READ",
            "WRITE",
            "LATENCY_SENSITIVE",
            "THROUGHPUT_ORIENTED",
            "OTHER",
            ",-1,",
            "1.5e-05",
            "E9",
        ],
        traces::Format::Tectonic => &[
            traces::tectonic::CSV_HEADER,
            "1696118400,310,40,131072,262144,u1,ns1,getChunkData.Permanent,1,h7,3\n",
            "310 262144 4325376 1572074461.57806 1 24 3 5\n",
            "# block_id io_offset io_size op_time op_name user_namespace user_name\n",
            "putChunk.NotInitialized",
            " 100 ",
        ],
        traces::Format::Vscsi | traces::Format::OracleGeneral | traces::Format::Lcs => &[],
    };
    for w in words {
        d.push(w.as_bytes().to_vec());
    }
    if format == traces::Format::Blktrace {
        // One whole record of each action the reader pairs, as seeds for
        // the mutator to splice.
        for action in [1u32 | 16 << 16, 7 | 64 << 16, 8 | 128 << 16, 2, 3, 1 << 26] {
            let r = traces::blktrace::Record {
                sequence: 0,
                time: 1_000,
                sector: 8,
                bytes: 4096,
                action,
                pid: 1,
                device: 8 << 20,
                cpu: 0,
                error: 0,
                payload: b"fuzz\0".to_vec(),
            };
            d.push(r.encode());
        }
        d.push(vec![0xff; 48]);
    }
    // Whole records of each binary cache/vscsi format, to splice.
    match format {
        traces::Format::Vscsi => {
            for v in [1, 2] {
                for cmd in [0x28, 0x2a, 0x35, 0x42, 0x12] {
                    d.push(traces::vscsi::encode(v, cmd, 4096, 8, 1_000));
                }
            }
        }
        traces::Format::OracleGeneral => {
            d.push(traces::oracle::encode(1, 42, 4096, 3));
            d.push(traces::oracle::encode(u32::MAX, u64::MAX, u32::MAX, -1));
        }
        traces::Format::Lcs => {
            for v in [1, 2, 3, 8, 9] {
                d.push(traces::lcs::encode_header(v));
            }
            d.push(traces::lcs::encode_v2(1, 42, 4096, 13, 7));
            d.push(traces::lcs::encode_v2(1, 42, 4096, 200, 7));
        }
        _ => {}
    }
    d
}

/// Largest seed kept whole: the shipped streams run to 180 KB and would slow
/// every execution; their first 8 KiB (cut at a line) hold every row shape.
const MAX_SEED: usize = 8 << 10;

/// Every file with extension `ext` in each directory, read once.
fn seeds(root: &Path, dirs: &[(&str, &str)]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (dir, ext) in dirs {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == *ext))
            .collect();
        // Sorted, so a seed names the same run on every machine.
        paths.sort();
        for p in paths {
            if let Ok(mut bytes) = std::fs::read(&p) {
                if bytes.len() > MAX_SEED {
                    let cut = bytes[..MAX_SEED]
                        .iter()
                        .rposition(|&c| c == b'\n')
                        .map_or(MAX_SEED, |i| i + 1);
                    bytes.truncate(cut);
                }
                out.push(bytes);
            }
        }
    }
    if out.is_empty() {
        // Outside the repository the dictionary still builds inputs.
        out.push(Vec::new());
    }
    out
}

/// Hostile bytes for every text format: NUL, invalid UTF-8, a BOM, line
/// endings, a right-to-left override, a 100 KB run and a 1 MB one.
fn common_tokens() -> Vec<Vec<u8>> {
    let mut d: Vec<Vec<u8>> = [
        &b"\0"[..],
        b"\xff\xfe",
        b"\xc3\x28",
        b"\xed\xa0\x80",
        b"\xef\xbb\xbf",
        b"\r\n",
        b"\r",
        b"\n",
        b"\t",
        "\u{202e}".as_bytes(),
        "é".as_bytes(),
        b"=",
        b",",
        b"#",
        b";",
        b" ",
        b"-",
        b"0",
        b"-1",
        b"-0",
        b"18446744073709551615",
        b"18446744073709551616",
        b"9223372036854775807",
        b"9223372036854775808",
        b"4294967295",
        b"4294967296",
        b"99999999999999999999999999999999999999",
        b"0x",
        b"0xffffffffffffffff",
        b"1e308",
        b"1e-308",
        b"nan",
        b"NaN",
        b"inf",
        b"-inf",
    ]
    .iter()
    .map(|t| t.to_vec())
    .collect();
    d.push(vec![b'A'; 100_000]);
    d.push(vec![b'9'; 1 << 20]);
    d
}

fn jobs_dict() -> Vec<Vec<u8>> {
    let mut d = common_tokens();
    for o in jobs::known_options() {
        for name in std::iter::once(&o.name).chain(o.aliases) {
            d.push(name.as_bytes().to_vec());
            d.push(format!("{name}=").into_bytes());
            d.push(format!("\n{name}=").into_bytes());
        }
    }
    for t in [
        // Units and forms fio accepts (fio's parse.c: check_str_bytes,
        // str_to_decimal, check_str_time), at and past their ends.
        "1t",
        "100p",
        "1p",
        "1e",
        "1z",
        "4k",
        "4K",
        "4kib",
        "4KiB",
        "1m",
        "1g",
        "1pib",
        "1ei",
        "0k",
        "-4k",
        "4k-1m",
        "1m-4k",
        "4k:8k",
        "4k,8k",
        "4k/50:8k/50",
        "4k,",
        ",4k",
        "1:2",
        "a:b",
        "10%",
        "0%",
        "100%",
        "101%",
        "-1%",
        "1ns",
        "1us",
        "1ms",
        "1s",
        "1m",
        "1h",
        "1d",
        "100h",
        "1000000h",
        "0s",
        "1.5",
        "0.1",
        ".5",
        "5.",
        "1e3",
        "1_000",
        "+1",
        "0b1",
        "0o7",
        "0x10",
        "0X10",
        "0x1p",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "1,2,3",
        "0-3",
        "0-1000000",
        "3-0",
        "0,",
        ",",
        "randrw",
        "randread",
        "trim",
        "libaio",
        "psync",
        "pvsync2",
        "io_uring",
        "null",
        "sync",
        "/dev/nvme0n1",
        "/dev/null",
        "/dev/zero",
        "/tmp/x",
        "a:b:c",
        "\\:",
        "${FUZZ}",
        "${SELF}",
        "${NOPE}",
        "${",
        "$FUZZ",
        "${}",
        // Sections, comments, directives.
        "[global]\n",
        "[job]\n",
        "[j]\n",
        "[]\n",
        "[ ]\n",
        "[\n",
        "]\n",
        "[global",
        "[a]b\n",
        "; comment\n",
        "# comment\n",
        "include x.fio\n",
        "include ",
        "$include",
        "=\n",
        "numjobs=1000000\n",
        "iodepth=100000\n",
        "bs=1\n",
        "bs=1t\n",
        "size=0\n",
        "size=100p\n",
        "runtime=1ns\n",
        "time_based\n",
        "time_based=1\n",
        "direct=1\n",
        "thinktime=11s\n",
        "startdelay=11\n",
        "loops=4294967295\n",
        "number_ios=0\n",
        "rate_iops=1\n",
        "cint_flags=",
        "barrier=",
    ] {
        d.push(t.as_bytes().to_vec());
    }
    // Thousands of sections (issue 12 item 14: 5,000 sections).
    d.push("[s]\nrw=randread\n".repeat(5_000).into_bytes());
    d.push(format!("bs={}\n", "9".repeat(1_000_000)).into_bytes());
    d
}

fn stream_dict() -> Vec<Vec<u8>> {
    let mut d = common_tokens();
    for t in [
        policy::stream::HEADER,
        "time_ns,id,flags,event\n",
        "0,0,-,complete\n",
        "18446744073709551615,18446744073709551615,UB,complete\n",
        "1,1,U,error\n",
        "2,2,B,submit\n",
        "complete",
        "error",
        "submit",
        "U",
        "B",
        "UB",
        "BU",
        "UU",
        ",,,",
        ",,,,,,,,,,",
        "+1",
        "1e9",
        "1.0",
        "0x10",
        " 1",
    ] {
        d.push(t.as_bytes().to_vec());
    }
    d.push(",".repeat(100_000).into_bytes());
    d
}

/// Hostile TOML: the seeds' own keys, floats the spec allows (NaN, inf,
/// -0.0), integers at i64's ends, durations that overflow `u64` nanoseconds,
/// table forms and nesting deep enough to find a recursive descent.
fn profile_dict(seeds: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut d = common_tokens();
    for s in seeds {
        for line in String::from_utf8_lossy(s).lines() {
            if let Some((key, _)) = line.split_once('=') {
                let key = key.trim();
                if !key.is_empty() && !key.starts_with('#') {
                    d.push(key.as_bytes().to_vec());
                    d.push(format!("\n{key} = ").into_bytes());
                }
            }
            if line.starts_with('[') {
                d.push(format!("{line}\n").into_bytes());
            }
        }
    }
    for t in [
        "nan",
        "+nan",
        "-nan",
        "inf",
        "+inf",
        "-inf",
        "-0.0",
        "0.0",
        "1e308",
        "1e309",
        "-1e308",
        "5e-324",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "0x7fffffffffffffff",
        "0o777",
        "0b1",
        "1_000",
        "100000000",
        "4294967296",
        "\"\"",
        "\" \"",
        "\"normal\"",
        "\"lognormal\"",
        "\"uniform\"",
        "\"0ns\"",
        "\"1ns\"",
        "\"-1us\"",
        "\"1000h\"",
        "\"1e30us\"",
        "\"18446744073709551615ns\"",
        "\"18446744073709551616ns\"",
        "\"NaNus\"",
        "\"infms\"",
        "\"1.5us\"",
        "\"1 us\"",
        "\"us\"",
        "\"5\"",
        "\"\\u0000\"",
        "\"\\uD800\"",
        "'''",
        "\"\"\"",
        "true",
        "1979-05-27T07:32:00Z",
        "[]",
        "{}",
        "[read]\n",
        "[write]\n",
        "[[read]]\n",
        "[a.b.c]\n",
        "a.b.c = 1\n",
        "name = \"x\"\n",
        "cores = 100000000\n",
        "ghz = nan\n",
        "mean = \"1000h\"\n",
    ] {
        d.push(t.as_bytes().to_vec());
    }
    d.push(format!("x = {}1{}\n", "[".repeat(10_000), "]".repeat(10_000)).into_bytes());
    d.push(format!("x = {}1{}\n", "{a=".repeat(10_000), "}".repeat(10_000)).into_bytes());
    d.push(format!("[{}]\n", vec!["a"; 10_000].join(".")).into_bytes());
    d
}
