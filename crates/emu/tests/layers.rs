//! The emulator's modules form layers (the crate doc draws them): each
//! module uses only modules of its own layer or below, and the graph of
//! which module uses which has no cycle. Read from the source: every
//! `crate::` path, `super::` path and path into a child module, outside
//! `#[cfg(test)]` code. `cargo test -p cinterrupts-emu --test layers --
//! --nocapture` prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Bottom first. A module may use its own layer and the ones below.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "leaves",
        &[
            "backend", "buffers", "counters", "error", "irq", "latency", "mailbox", "ring", "sys",
            "verify",
        ],
    ),
    ("configuration", &["config"]),
    ("queue pair", &["queue"]),
    ("device", &["device", "device::controller", "device::gaps"]),
    (
        "host driver",
        &["driver", "driver::block", "driver::handler"],
    ),
    ("job workers", &["worker", "worker::sleep"]),
    (
        "run",
        &[
            "run",
            "run::audit",
            "run::claim",
            "run::place",
            "run::report",
            "run::shared",
            "run::spawn",
            "run::stall",
            "run::target",
            "run::window",
        ],
    ),
    ("experiments", &["direct", "bench", "bench::render"]),
];

/// Subtrees drawn as one node.
const COLLAPSED: &[&str] = &["backend"];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    if parts.is_empty() {
        "crate".into()
    } else {
        parts.join("::")
    }
}

fn node(module: &str) -> String {
    for c in COLLAPSED {
        if module == *c || module.starts_with(&format!("{c}::")) {
            return c.to_string();
        }
    }
    module.to_string()
}

fn sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.insert(module_of(path.strip_prefix(root).unwrap()), text);
        }
    }
}

/// The identifier paths that follow `prefix` in `code` (a `{...}` group
/// gives one path per item).
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix) {
        let at = from + i;
        from = at + prefix.len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| ident(c) || c == ':') {
            continue;
        }
        let rest = &code[from..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let segs: Vec<String> = item
                    .trim()
                    .split("::")
                    .map(|s| s.chars().take_while(|&c| ident(c)).collect())
                    .take_while(|s: &String| !s.is_empty())
                    .collect();
                if !segs.is_empty() {
                    out.push(segs);
                }
            }
        } else {
            let mut segs = Vec::new();
            let mut s = rest;
            loop {
                let name: String = s.chars().take_while(|&c| ident(c)).collect();
                if name.is_empty() {
                    break;
                }
                s = &s[name.len()..];
                segs.push(name);
                match s.strip_prefix("::") {
                    Some(t) if t.starts_with(|c: char| ident(c)) => s = t,
                    _ => break,
                }
            }
            out.push(segs);
        }
    }
    out
}

fn graph() -> Graph {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let resolve = |base: &[String], segs: &[String]| -> Option<String> {
        (1..=segs.len()).rev().find_map(|n| {
            let mut p = base.to_vec();
            p.extend_from_slice(&segs[..n]);
            let m = p.join("::");
            modules.contains(&m).then_some(m)
        })
    };
    let mut g = Graph::new();
    for (module, text) in &files {
        let from = node(module);
        let code = text.split("#[cfg(test)]").next().unwrap();
        let here: Vec<String> = if module == "crate" {
            vec![]
        } else {
            module.split("::").map(String::from).collect()
        };
        let mut targets = Vec::new();
        for segs in paths_after(code, "crate::") {
            // An item of the crate root (a re-export) counts as the root.
            targets.push(resolve(&[], &segs).unwrap_or_else(|| "crate".into()));
        }
        // The file's own children: `mod x;` then `x::...`.
        for line in code.lines() {
            let l = line.trim_start().trim_start_matches("pub ");
            if let Some(child) = l.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                for segs in paths_after(code, &format!("{child}::")) {
                    let mut full = vec![child.to_string()];
                    full.extend(segs);
                    targets.extend(resolve(&here, &full));
                }
            }
        }
        if !here.is_empty() {
            let parent = &here[..here.len() - 1];
            for segs in paths_after(code, "super::") {
                targets.push(resolve(parent, &segs).unwrap_or_else(|| parent.join("::")));
            }
        }
        let edges = g.entry(from.clone()).or_default();
        for t in targets {
            let t = if t.is_empty() {
                "crate".into()
            } else {
                node(&t)
            };
            if t != from {
                edges.insert(t);
            }
        }
    }
    g
}

fn print(g: &Graph) {
    for (m, to) in g {
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        eprintln!("{m:20} -> {}", to.join(", "));
    }
}

/// A cycle, if there is one, as the modules along it.
fn cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        m: &str,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut c = path[i..].to_vec();
            c.push(m.to_string());
            return Some(c);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for t in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, t, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|m| visit(g, m, &mut done, &mut Vec::new()))
}

fn layer_of(m: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&m))
}

#[test]
fn the_module_graph_has_no_cycle() {
    let g = graph();
    print(&g);
    if let Some(c) = cycle(&g) {
        panic!(
            "the modules import each other in a circle: {}",
            c.join(" -> ")
        );
    }
}

#[test]
fn each_module_uses_only_its_layer_and_below() {
    let g = graph();
    let mut wrong = Vec::new();
    for (m, to) in &g {
        if m == "crate" {
            continue;
        }
        let Some(lm) = layer_of(m) else {
            wrong.push(format!("{m} is in no layer of tests/layers.rs"));
            continue;
        };
        for t in to {
            match layer_of(t) {
                Some(lt) if lt <= lm => {}
                Some(lt) => wrong.push(format!(
                    "{m} ({}) uses {t} ({}), a layer above",
                    LAYERS[lm].0, LAYERS[lt].0
                )),
                None => wrong.push(format!(
                    "{m} uses {t}: name the defining module, not a re-export"
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The two sides of the queue pair meet only in it (as a controller and a
/// driver meet only in shared memory): neither uses the other.
#[test]
fn the_device_and_the_driver_do_not_use_each_other() {
    let g = graph();
    let side = |m: &str| m.split("::").next().unwrap().to_string();
    for (m, to) in &g {
        for t in to {
            let (a, b) = (side(m), side(t));
            assert!(
                !(a == "device" && b == "driver" || a == "driver" && b == "device"),
                "{m} uses {t}"
            );
        }
    }
}

#[test]
fn the_check_sees_a_cycle() {
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert_eq!(cycle(&g), None);
}

#[test]
fn paths_are_read_from_use_lines_and_groups() {
    let code = "use crate::run::place::{self, Placement};\nuse crate::{ring, irq::Taken};\nlet x = super::y::z();";
    let c = paths_after(code, "crate::");
    assert_eq!(c[0], ["run", "place"]);
    assert_eq!(c[1], ["ring"]);
    assert_eq!(c[2], ["irq", "Taken"]);
    assert_eq!(paths_after(code, "super::"), [["y", "z"]]);
}
