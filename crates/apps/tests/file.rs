//! The application file: parsing, placing, and errors that name the file,
//! the line and the option.

mod common;

use std::path::Path;

use apps::file::{AppFile, EngineConfig};
use apps::kvell::{Config, RequestDistribution};

const GOOD: &str = r#"
# two instances
[[instance]]
name = "kv"
engine = "kvell"
worker_cores = [0, 1]
client_cores = [2, 3]
workload = "b"
items = 1000
ops = 200

[[instance]]
name = "kv2"
engine = "kvell"
worker_cores = [4]
client_cores = [5]
workload = "e"
items = 500
scan_length = 8
ops = 10
request_distribution = "uniform"
"#;

fn error(text: &str) -> String {
    AppFile::parse(text, "kvell.toml").unwrap_err().to_string()
}

#[test]
fn parses_instances_with_defaults() {
    let f = AppFile::parse(GOOD, "good.toml").unwrap();
    assert_eq!(f.instances.len(), 2);
    assert_eq!(f.instances[0].name, "kv");
    assert_eq!(f.instances[0].line, 4);
    let EngineConfig::Kvell(c) = &f.instances[0].engine else {
        panic!("not kvell")
    };
    assert_eq!(c.workload, "b");
    assert_eq!(c.items, 1000);
    assert_eq!(c.item_bytes, 1024);
    assert_eq!(c.queue_depth, 48);
    assert_eq!(c.request_distribution, RequestDistribution::Zipfian);
    let EngineConfig::Kvell(c) = &f.instances[1].engine else {
        panic!("not kvell")
    };
    assert_eq!(c.scan_length, 8);
}

#[test]
fn places_every_instance_with_indices_within_it() {
    let f = AppFile::parse(GOOD, "good.toml").unwrap();
    let t = f.threads(1).unwrap();
    let got: Vec<_> = t
        .iter()
        .map(|t| (t.name.as_str(), t.instance, t.index, t.core))
        .collect();
    assert_eq!(
        got,
        [
            ("kv/worker0", 0, 0, 0),
            ("kv/worker1", 0, 1, 1),
            ("kv/client0", 0, 2, 2),
            ("kv/client1", 0, 3, 3),
            ("kv2/worker0", 1, 0, 4),
            ("kv2/client0", 1, 1, 5),
        ]
    );
    // Each instance runs on its own, to the end.
    let mut threads = t;
    let second = threads.split_off(4);
    let trace = common::Run::default().run(threads);
    assert_eq!(trace.ops.len(), 200);
    let second: Vec<_> = second
        .into_iter()
        .enumerate()
        .map(|(i, mut t)| {
            t.index = i;
            t
        })
        .collect();
    let trace = common::Run::default().run(second);
    assert_eq!(trace.ops.len(), 10);
}

#[test]
fn errors_name_file_line_and_option() {
    let bad = GOOD.replace("workload = \"b\"", "workload = \"g\"");
    assert_eq!(
        error(&bad),
        "kvell.toml:8: option 'workload': unknown YCSB workload 'g' (a-f)"
    );
    let bad = GOOD.replace("items = 1000", "itemz = 1000");
    let e = error(&bad);
    assert!(
        e.starts_with("kvell.toml:9: option 'itemz': unknown option for engine 'kvell'"),
        "{e}"
    );
    let bad = GOOD.replace("ops = 200", "ops = \"many\"");
    let e = error(&bad);
    assert!(e.starts_with("kvell.toml:10: option 'ops': "), "{e}");
    let bad = GOOD.replace(
        "engine = \"kvell\"\nworker_cores = [0, 1]",
        "engine = \"leveldb\"\nworker_cores = [0, 1]",
    );
    assert_eq!(
        error(&bad),
        "kvell.toml:5: option 'engine': unknown engine 'leveldb' (kvell, rocksdb, dump)"
    );
    let bad = GOOD.replace(
        "request_distribution = \"uniform\"",
        "request_distribution = \"pareto\"",
    );
    let e = error(&bad);
    assert!(
        e.starts_with("kvell.toml:21: option 'request_distribution': "),
        "{e}"
    );
    let bad = GOOD.replace("worker_cores = [4]", "worker_cores = []");
    let e = error(&bad);
    assert!(
        e.starts_with("kvell.toml:15: option 'worker_cores': "),
        "{e}"
    );
    let bad = GOOD.replace("name = \"kv2\"", "name = \"kv\"");
    assert_eq!(
        error(&bad),
        "kvell.toml:13: option 'name': instance 'kv' is already defined at line 4"
    );
    let bad = GOOD.replace("workload = \"e\"\n", "");
    assert_eq!(error(&bad), "kvell.toml:13: option 'workload': required");
    let bad = GOOD.replace("name = \"kv2\"\n", "");
    assert_eq!(error(&bad), "kvell.toml:13: option 'name': required");
    let bad = GOOD
        .replace("default_marks", "x")
        .replace("ops = 10\n", "ops = 10\ndefault_marks = \"linux\"\n");
    let e = error(&bad);
    assert!(
        e.starts_with("kvell.toml:21: option 'default_marks': invalid default_marks 'linux'"),
        "{e}"
    );
}

#[test]
fn syntax_and_layout_errors_are_one_line_with_a_line() {
    let e = error("[[instance]]\nname = \"a\"\nengine = \n");
    assert!(e.starts_with("kvell.toml:3: "), "{e}");
    assert!(!e.contains('\n'), "{e:?}");
    let e = error("[server]\nport = 1\n");
    assert!(
        e.starts_with("kvell.toml:1: unknown table or key `server`"),
        "{e}"
    );
    assert_eq!(
        error("# nothing\n"),
        "kvell.toml: no [[instance]]: an application file runs at least one"
    );
    let e = AppFile::load(Path::new("/nonexistent/kvell.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/kvell.toml: cannot read: "),
        "{e}"
    );
}

#[test]
fn the_examples_parse_with_the_papers_parameters() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/apps");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let f = AppFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        seen += 1;
        for inst in &f.instances {
            // The rocksdb and dump examples: tests/rocks.rs.
            let EngineConfig::Kvell(c) = &inst.engine else {
                continue;
            };
            // TOS 5.4.2: 80 M items of 1 KB; 2 worker and 4 client cores.
            assert_eq!(c.items, 80_000_000, "{}", path.display());
            assert_eq!(c.item_bytes, 1024);
            assert_eq!(c.worker_cores.len(), 2);
            assert_eq!(c.client_cores.len(), 4);
            if c.workload == "e" {
                assert!([16, 256].contains(&c.scan_length));
            } else {
                assert_eq!(c.ops, 20_000_000);
            }
        }
    }
    assert!(seen >= 7, "{seen} examples");
}

#[test]
fn a_config_from_a_file_equals_the_struct() {
    let f = AppFile::parse(GOOD, "good.toml").unwrap();
    let want = Config {
        worker_cores: vec![0, 1],
        client_cores: vec![2, 3],
        workload: "b".into(),
        items: 1000,
        ops: 200,
        ..Config::default()
    };
    assert_eq!(f.instances[0].engine, EngineConfig::Kvell(want));
}
