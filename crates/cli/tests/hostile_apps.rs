//! Issue 24 item 9: an application file asking for more than the models
//! can hold is refused when it is read, before anything is allocated, in
//! one line naming the file, the line, the key and the bound; quickly and
//! in little memory (`threads = 1000000000` took 11.7 GB).

mod common;

use common::{assert_one_line_error, hostile, write};
use std::time::Duration;

/// A run's memory when refused: the binary's own (a few MB), far below
/// the 200 MB.
const REFUSED_RSS_MIB: f64 = 50.0;

const ROCKS: &str =
    "[[instance]]\nname = \"r\"\nengine = \"rocksdb\"\nbenchmark = \"readrandom\"\n";
const WRITER: &str =
    "[[instance]]\nname = \"r\"\nengine = \"rocksdb\"\nbenchmark = \"readwhilewriting\"\n";
const KVELL: &str = "[[instance]]\nname = \"k\"\nengine = \"kvell\"\nworkload = \"e\"\n";
const DUMP: &str = "[[instance]]\nname = \"d\"\nengine = \"dump\"\n";

/// `cinterrupts sim` on `text` (as app.toml) fails in one line holding
/// `want`, in under a second and [`REFUSED_RSS_MIB`].
fn refused(text: &str, want: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "app.toml", text);
    let b = hostile(&["sim", &file, "--quiet"], b"", 10);
    assert_one_line_error(&b.output, want);
    let err = String::from_utf8_lossy(&b.output.stderr);
    assert!(err.contains(&format!("{file}:")), "names the file: {err}");
    assert!(
        b.elapsed < Duration::from_secs(1),
        "{want}: took {:?}",
        b.elapsed
    );
    assert!(
        b.max_rss_mib < REFUSED_RSS_MIB,
        "{want}: {:.1} MiB peak RSS",
        b.max_rss_mib
    );
    eprintln!(
        "{:.1} MiB, {:?}: {}",
        b.max_rss_mib,
        b.elapsed,
        err.trim_end()
    );
}

fn cores(n: usize) -> String {
    (0..n).map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
}

#[test]
fn a_billion_rocksdb_threads_are_refused_by_line_and_key() {
    refused(
        &format!("{ROCKS}threads = 1000000000\n"),
        "app.toml:5: option 'threads': 1000000000 is more than 256 (the most threads the simulator runs)",
    );
    refused(
        &format!("{ROCKS}threads = 257\n"),
        "app.toml:5: option 'threads': 257 is more than 256",
    );
}

#[test]
fn kvell_keys_past_their_bounds_are_refused_by_line_and_key() {
    for key in ["worker_cores", "client_cores"] {
        refused(
            &format!("{KVELL}{key} = [{}]\n", cores(257)),
            &format!("app.toml:5: option '{key}': 257 threads is more than 256"),
        );
    }
    refused(
        &format!("{KVELL}scan_length = 16385\n"),
        "app.toml:5: option 'scan_length': 16385 is more than 16384",
    );
    refused(
        &format!("{KVELL}queue_depth = 8193\n"),
        "app.toml:5: option 'queue_depth': 8193 is more than 8192",
    );
    refused(
        &format!("{KVELL}max_pending_callbacks = 32769\n"),
        "app.toml:5: option 'max_pending_callbacks': 32769 is more than 32768",
    );
    refused(
        &format!("{KVELL}page_cache_pages = 16777217\n"),
        "app.toml:5: option 'page_cache_pages': 16777217 is more than 16777216",
    );
}

#[test]
fn rocksdb_and_dump_keys_past_their_bounds_are_refused_by_line_and_key() {
    refused(
        &format!("{ROCKS}block_size = 67108865\n"),
        "app.toml:5: option 'block_size': 67108865 is more than 67108864 (64 MiB)",
    );
    refused(
        &format!("{DUMP}block_size = 67108865\n"),
        "app.toml:4: option 'block_size': 67108865 is more than 67108864 (64 MiB)",
    );
    refused(
        &format!(
            "{WRITER}writable_file_max_buffer_size = 1099511627776\nwrite_buffer_size = 1099511627777\n"
        ),
        "app.toml:6: option 'write_buffer_size': 1099511627777 is more than 1099511627776 (1 TiB)",
    );
    refused(
        &format!("{WRITER}writable_file_max_buffer_size = 15872\n"),
        "app.toml:5: option 'writable_file_max_buffer_size': a flush of ",
    );
    // Panicked on a multiplication's overflow.
    refused(
        &format!("{ROCKS}num = 9223372036854775807\n"),
        "app.toml:5: option 'num': 9223372036854775807 keys of 4221 bytes' blocks are ",
    );
    refused(
        &format!("{ROCKS}key_size = 8388609\n"),
        "app.toml:5: option 'key_size': 8388609 is more than 8388608",
    );
    refused(
        &format!("{DUMP}value_size = 3221225473\n"),
        "app.toml:4: option 'value_size': 3221225473 is more than 3221225472",
    );
    refused(
        &format!("{DUMP}target_file_size_base = 68719476737\n"),
        "app.toml:4: option 'target_file_size_base': 68719476737 is more than 68719476736",
    );
}

#[test]
fn too_many_instances_or_bytes_are_refused() {
    let instances: String = (0..257)
        .map(|i| format!("[[instance]]\nname = \"d{i}\"\nengine = \"dump\"\n"))
        .collect();
    refused(
        &instances,
        "app.toml:769: more than 256 [[instance]]s (each runs at least one thread; the most threads the simulator runs)",
    );
    let big = format!("{DUMP}{}\n", "#".repeat(1 << 20));
    refused(
        &big,
        "app.toml: larger than 1024 KiB, the most an application file may be",
    );
}
