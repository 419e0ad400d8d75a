//! Every key that sizes something the models allocate is bounded when the
//! file is read, before any thread's state exists: the value at its bound
//! is accepted, one more is refused in one line naming the file, the line,
//! the key and the bound (issue 24 item 9).

use apps::file::{AppFile, MAX_FILE_BYTES};
use apps::kvell::{MAX_PAGE_CACHE_PAGES, MAX_PENDING_CALLBACKS, MAX_QUEUE_DEPTH, MAX_SCAN_LENGTH};
use apps::rocks::config::{
    MAX_BLOCK_SIZE, MAX_DATABASE_BYTES, MAX_FLUSH_WRITES, MAX_KEY_SIZE, MAX_TARGET_FILE_SIZE_BASE,
    MAX_VALUE_SIZE, MAX_WRITE_BUFFER_SIZE,
};
use apps::MAX_THREADS;

const ROCKS: &str =
    "[[instance]]\nname = \"r\"\nengine = \"rocksdb\"\nbenchmark = \"readrandom\"\n";
const WRITER: &str =
    "[[instance]]\nname = \"r\"\nengine = \"rocksdb\"\nbenchmark = \"readwhilewriting\"\n";
const KVELL: &str = "[[instance]]\nname = \"k\"\nengine = \"kvell\"\nworkload = \"e\"\n";
const DUMP: &str = "[[instance]]\nname = \"d\"\nengine = \"dump\"\n";

/// `head` with `line` added as its line 5.
fn file(head: &str, line: &str) -> String {
    format!("{head}{line}\n")
}

fn refused(head: &str, line: &str) -> String {
    AppFile::parse(&file(head, line), "app.toml")
        .unwrap_err()
        .to_string()
}

fn accepted(head: &str, line: &str) {
    let text = file(head, line);
    let f = AppFile::parse(&text, "app.toml").unwrap_or_else(|e| panic!("{line}: {e}"));
    // And its threads are placed (small: every bound is checked first).
    f.threads(1).unwrap_or_else(|e| panic!("{line}: {e}"));
}

#[test]
fn thread_counts_stop_at_the_simulators_bound() {
    assert_eq!(MAX_THREADS, 256);
    accepted(ROCKS, "threads = 256");
    assert_eq!(
        refused(ROCKS, "threads = 1000000000"),
        "app.toml:5: option 'threads': 1000000000 is more than 256 (the most threads the simulator runs)"
    );
    assert!(refused(ROCKS, "threads = 257").starts_with("app.toml:5: option 'threads': 257 "));
    let cores = |n: usize| (0..n).map(|c| c.to_string()).collect::<Vec<_>>().join(", ");
    for key in ["worker_cores", "client_cores"] {
        accepted(KVELL, &format!("{key} = [{}]", cores(256)));
        assert_eq!(
            refused(KVELL, &format!("{key} = [{}]", cores(257))),
            format!(
                "app.toml:5: option '{key}': 257 threads is more than 256 (the most threads the simulator runs)"
            )
        );
    }
}

#[test]
fn kvell_queues_scans_and_cache_are_bounded() {
    assert_eq!(MAX_SCAN_LENGTH, 16_384);
    accepted(KVELL, "scan_length = 16384");
    assert_eq!(
        refused(KVELL, "scan_length = 16385"),
        "app.toml:5: option 'scan_length': 16385 is more than 16384 (a scan's requests are queued at once)"
    );
    assert_eq!(MAX_QUEUE_DEPTH, 8192);
    accepted(KVELL, "queue_depth = 8192");
    assert_eq!(
        refused(KVELL, "queue_depth = 8193"),
        "app.toml:5: option 'queue_depth': 8193 is more than 8192 (8 times it, the AIO context, must fit NVMe's 65536-entry queue)"
    );
    assert_eq!(
        refused(KVELL, "queue_depth = 4294967295"),
        "app.toml:5: option 'queue_depth': 4294967295 is more than 8192 (8 times it, the AIO context, must fit NVMe's 65536-entry queue)"
    );
    assert_eq!(MAX_PENDING_CALLBACKS, 32_768);
    accepted(KVELL, "max_pending_callbacks = 32768");
    assert_eq!(
        refused(KVELL, "max_pending_callbacks = 32769"),
        "app.toml:5: option 'max_pending_callbacks': 32769 is more than 32768 (twice it, the AIO context, must fit NVMe's 65536-entry queue)"
    );
    assert_eq!(MAX_PAGE_CACHE_PAGES, 16_777_216);
    accepted(KVELL, "page_cache_pages = 16777216");
    assert_eq!(
        refused(KVELL, "page_cache_pages = 16777217"),
        "app.toml:5: option 'page_cache_pages': 16777217 is more than 16777216 (64 GiB of 4 KiB pages; about 64 bytes of model state each)"
    );
}

#[test]
fn rocksdb_blocks_memtables_and_tables_are_bounded() {
    assert_eq!(MAX_BLOCK_SIZE, 64 << 20);
    accepted(ROCKS, "block_size = 67108864");
    assert_eq!(
        refused(ROCKS, "block_size = 67108865"),
        "app.toml:5: option 'block_size': 67108865 is more than 67108864 (64 MiB)"
    );
    assert_eq!(
        refused(DUMP, "block_size = 67108865"),
        "app.toml:4: option 'block_size': 67108865 is more than 67108864 (64 MiB)"
    );
    assert_eq!(MAX_WRITE_BUFFER_SIZE, 1 << 40);
    let big = "writable_file_max_buffer_size = 1099511627776";
    accepted(WRITER, &format!("{big}\nwrite_buffer_size = 1099511627776"));
    let e = refused(WRITER, &format!("{big}\nwrite_buffer_size = 1099511627777"));
    assert_eq!(
        e,
        "app.toml:6: option 'write_buffer_size': 1099511627777 is more than 1099511627776 (1 TiB)"
    );
    // A flush in at most 4096 writes: db_bench's 64 MiB memtable in
    // writes of 16 KiB passes, in 16 KiB less 512 bytes it does not.
    assert_eq!(MAX_FLUSH_WRITES, 4096);
    accepted(WRITER, "writable_file_max_buffer_size = 16384");
    let e = refused(WRITER, "writable_file_max_buffer_size = 15872");
    assert!(
        e.starts_with("app.toml:5: option 'writable_file_max_buffer_size': a flush of "),
        "{e}"
    );
    assert!(e.contains("writes: more than 4096"), "{e}");
    let e = refused(WRITER, "write_buffer_size = 1099511627776");
    assert!(
        e.starts_with("app.toml:5: option 'write_buffer_size': a flush of "),
        "{e}"
    );
    assert_eq!(MAX_TARGET_FILE_SIZE_BASE, 64 << 30);
    accepted(DUMP, "target_file_size_base = 68719476736");
    assert_eq!(
        refused(DUMP, "target_file_size_base = 68719476737"),
        "app.toml:4: option 'target_file_size_base': 68719476737 is more than 68719476736 (64 GiB; the dump plans each table's reads at once)"
    );
}

#[test]
fn rocksdb_keys_values_and_databases_are_bounded() {
    assert_eq!((MAX_KEY_SIZE, MAX_VALUE_SIZE), (8 << 20, 3 << 30));
    for head in [ROCKS, DUMP] {
        let line = head.lines().count() + 1;
        accepted(
            head,
            "key_size = 8388608\nvalue_size = 3221225472\nnum = 1000",
        );
        assert_eq!(
            refused(head, "key_size = 8388609"),
            format!("app.toml:{line}: option 'key_size': 8388609 is more than 8388608 (8 MiB, RocksDB's recommended maximum)")
        );
        assert_eq!(
            refused(head, "value_size = 3221225473"),
            format!("app.toml:{line}: option 'value_size': 3221225473 is more than 3221225472 (3 GiB, RocksDB's recommended maximum)")
        );
        // 1 PiB of 4221-byte blocks of 4 keys (16 + 1024 bytes each).
        assert_eq!(MAX_DATABASE_BYTES, 1 << 50);
        let most = (MAX_DATABASE_BYTES / 4221) * 4;
        accepted(head, &format!("num = {most}"));
        let e = refused(head, &format!("num = {}", most + 1));
        assert_eq!(
            e,
            format!("app.toml:{line}: option 'num': {} keys of 4221 bytes' blocks are 1125899906846463 bytes: more than 1125899906842624 (1 PiB)", most + 1)
        );
        assert!(refused(head, "num = 9223372036854775807").contains("option 'num': "));
    }
}

#[test]
fn a_file_holds_at_most_256_instances_and_1_mib() {
    let instances = |n: usize| {
        (0..n)
            .map(|i| format!("[[instance]]\nname = \"d{i}\"\nengine = \"dump\"\n"))
            .collect::<String>()
    };
    AppFile::parse(&instances(256), "app.toml").unwrap();
    assert_eq!(
        AppFile::parse(&instances(257), "app.toml")
            .unwrap_err()
            .to_string(),
        "app.toml:769: more than 256 [[instance]]s (each runs at least one thread; the most threads the simulator runs)"
    );
    let dir = std::env::temp_dir().join(format!("apps-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.toml");
    let mut text = instances(1);
    text.push_str(&"#".repeat(MAX_FILE_BYTES as usize - text.len()));
    std::fs::write(&path, &text).unwrap();
    AppFile::load(&path).unwrap();
    text.push('#');
    std::fs::write(&path, &text).unwrap();
    assert_eq!(
        AppFile::load(&path).unwrap_err().to_string(),
        format!(
            "{}: larger than 1024 KiB, the most an application file may be (the shipped ones are under 2 KB)",
            path.display()
        )
    );
    let e = AppFile::load(std::path::Path::new("/dev/zero")).unwrap_err();
    assert_eq!(e.to_string(), "/dev/zero: cannot read: not a regular file");
    std::fs::remove_dir_all(&dir).unwrap();
}
