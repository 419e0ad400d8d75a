//! The workspace's layers (issue 26 item 5), as `crates/emu/tests/layers.rs`
//! checks the emulator's modules:
//!
//! - each crate's dependencies on the others are the ones the README's
//!   architecture drawing shows, all pointing down (`CRATES`, read from
//!   every `crates/*/Cargo.toml`'s `[dependencies]`);
//! - no crate's modules import each other in a circle, except the circles
//!   already known (`KNOWN_CYCLES`); read from every `crate::`, `self::`,
//!   `super::` path and path into a child module, outside `#[cfg(test)]`
//!   code and comments, a root's re-export counting as its defining module;
//! - the preload library, loaded into every program `exec` runs, carries
//!   none of the emulator's or exec's code, and its build (`cargo tree`)
//!   none of io-uring, plotters, toml or tempfile (issue 38 item 1).
//!
//! It lives in the binary's crate because the binary is the one crate that
//! sees every other. `cargo test -p cinterrupts --test layers -- --nocapture`
//! prints the crate graph and every crate's module graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate of the workspace (its directory under `crates/`) and the
/// crates of ours it depends on, bottom first: a crate uses only crates
/// listed above it, so every arrow of the README's drawing points down.
/// This is the README's drawing ("Architecture"); change both together.
const CRATES: &[(&str, &[&str])] = &[
    // Foundations: pure models, no I/O of their own.
    ("policy", &[]),
    // The one marking engine (issue 39 item 1): Table 1's defaults, fio's
    // job-level marks, the rules and presets, for jobs, exec and traces.
    ("marks", &["policy"]),
    ("shm", &[]),
    // Trace readers: parsing only (issue 27).
    ("traces", &[]),
    ("jobs", &["marks", "policy"]),
    ("host", &["policy"]),
    // What exec and the preload library share (issue 38 item 1): the
    // configuration, marking rules, counters and record, the scheduling
    // and timer calls of the program's threads (emu's job threads too).
    ("wire", &["host", "marks", "policy", "shm"]),
    ("report", &["policy"]),
    // Results kept by key for the experiments (issue 28): canonical keys,
    // a directory of result files, shards.
    ("store", &["policy", "report"]),
    ("service", &["policy"]),
    ("apps", &["jobs", "policy"]),
    // Front ends: run a workload.
    (
        "sim",
        &[
            "apps", "host", "jobs", "marks", "policy", "report", "service", "traces",
        ],
    ),
    (
        "emu",
        &["host", "jobs", "policy", "report", "service", "wire"],
    ),
    (
        "exec",
        &["emu", "host", "jobs", "policy", "report", "shm", "wire"],
    ),
    // Records a live kernel's block events (tracefs), depends on none of ours.
    ("capture", &[]),
    // The preload library: a cdylib loaded into the program under `exec`.
    // It takes what it shares with exec from `wire`, never emu or exec
    // (issue 38 item 1; `the_preload_library_carries_no_emulator`).
    ("preload", &["host", "marks", "policy", "shm", "wire"]),
    // Experiments over the front ends.
    // One point (a front end, a device, a host, settings, a seed) run on
    // the simulator or the emulator: the runner that repro, sweep and
    // tune share (issue 39 item 2).
    (
        "point",
        &[
            "apps", "emu", "host", "jobs", "policy", "report", "service", "sim",
        ],
    ),
    (
        "repro",
        &[
            "apps", "emu", "exec", "host", "jobs", "point", "policy", "report", "service", "sim",
            "store",
        ],
    ),
    // Sweeps (issue 28): specs expanded into points, a resumable store,
    // shards, merged tables and fronts; job files, application files and
    // traces as workloads; simulator and emulator points.
    (
        "sweep",
        &[
            "apps", "emu", "jobs", "point", "policy", "report", "service", "sim", "store",
        ],
    ),
    // TOS 5.2's tuning; its candidates are a sweep's settings, their
    // fronts sweep's (issue 36 item 7).
    (
        "tune",
        &[
            "emu", "jobs", "point", "policy", "report", "sim", "store", "sweep",
        ],
    ),
    // `calibrate --host` (issue 37 item 4): the running machine's host
    // costs measured and written as a profile the simulator loads.
    ("hostcal", &["capture", "sim"]),
    // `validate` (issue 37 items 5 and 6): real fio runs under capture,
    // a device fitted from half of them, the rest predicted in sim and emu
    // on the host hostcal measures at the start.
    (
        "validate",
        &[
            "capture", "emu", "hostcal", "jobs", "policy", "report", "service", "sim", "traces",
        ],
    ),
    // Tools: the binary, and the fuzzer (not a default member).
    (
        "cli",
        &[
            "apps", "capture", "emu", "exec", "host", "hostcal", "jobs", "marks", "point",
            "policy", "preload", "repro", "report", "service", "sim", "store", "sweep", "traces",
            "tune", "validate",
        ],
    ),
    ("fuzz", &["jobs", "policy", "sim", "traces"]),
];

/// Module cycles that exist today and are someone's work to remove: each
/// crate's set of modules that may still import each other in a circle.
/// A new cycle, or a module joining one of these, fails; so does an entry
/// that no longer matches (shrink it when the circle shrinks).
/// Empty since issue 39 item 6 (the last two, jobs' `job` <-> `marks`
/// and repro's `app` <-> `xval`, were broken there); a cycle found later
/// is listed here with why it is not yet anyone's work.
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

/// The preload library's layers, bottom first (issue 38 item 1; its
/// `lib.rs` says what each holds): a module uses only modules of lower
/// layers, so the global state and the classification never reach up
/// into an interface, nor an interface into the interposed symbols.
const PRELOAD_LAYERS: &[&[&str]] = &[
    &["kernel", "state", "facts"],
    &["classify"],
    &["fd"],
    &["route"],
    &["blocking", "aio", "uring"],
    &["report"],
    &["intercept"],
];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The crates of ours that `manifest` lists under `[dependencies]`
/// (normal dependencies: what is linked; not dev- or build-dependencies).
/// `ours` maps a dependency's key to its directory under `crates/`.
fn dependencies(manifest: &str, ours: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut section = String::new();
    for line in manifest.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            section = l.trim_matches(|c| c == '[' || c == ']').to_string();
            assert!(
                !section.starts_with("dependencies."),
                "[{section}]: a form of dependency this test does not read; teach it"
            );
            // A platform- or cfg-specific table (`[target.'cfg(loom)'.dependencies]`,
            // shm's model-checking build) is linked when its cfg holds: read it
            // as dependencies.
            if section.starts_with("target.") && section.ends_with(".dependencies") {
                section = "dependencies".to_string();
            }
            continue;
        }
        if section != "dependencies" || l.is_empty() || l.starts_with('#') {
            continue;
        }
        let key: String = l
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        let by_path = l
            .split_once("path = \"../")
            .map(|(_, rest)| rest.split('"').next().unwrap().to_string());
        if let Some(dir) = by_path.or_else(|| ours.get(&key).cloned()) {
            out.insert(dir);
        }
    }
    out
}

/// The workspace's crate graph, from the manifests.
fn crate_graph() -> Graph {
    let root = workspace();
    let top = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    // `name = { package = "...", path = "crates/DIR" }` in
    // [workspace.dependencies], and each crate's own package name.
    let mut ours = BTreeMap::new();
    for line in top.lines() {
        if let Some((key, rest)) = line.split_once(" = {") {
            if let Some((_, p)) = rest.split_once("path = \"crates/") {
                ours.insert(key.trim().to_string(), p.split('"').next().unwrap().into());
            }
        }
    }
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let path = entry.unwrap().path();
        if path.join("Cargo.toml").is_file() {
            dirs.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    for dir in &dirs {
        let m = std::fs::read_to_string(root.join("crates").join(dir).join("Cargo.toml")).unwrap();
        let name = m
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .map(|n| n.trim_end_matches('"').to_string())
            .unwrap();
        ours.insert(name, dir.clone());
    }
    let mut g = Graph::new();
    for dir in dirs {
        let m = std::fs::read_to_string(root.join("crates").join(&dir).join("Cargo.toml")).unwrap();
        let deps = dependencies(&m, &ours);
        g.insert(dir, deps);
    }
    g
}

fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    if parts.is_empty() {
        "crate".into()
    } else {
        parts.join("::")
    }
}

fn sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap();
            // A library's `main.rs` is a second crate (the library's own
            // binary, which reaches the library by its name).
            if rel == Path::new("main.rs") && root.join("lib.rs").is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            out.insert(module_of(rel), code_of(&text));
        }
    }
}

/// A file's code as the graph reads it: up to its first `#[cfg(test)]`,
/// without comment lines (doc links are not uses).
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap();
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier path at the start of `s`.
fn path_at(s: &str) -> Vec<String> {
    s.split("::")
        .map(|seg| seg.trim().chars().take_while(|&c| ident(c)).collect())
        .take_while(|seg: &String| !seg.is_empty())
        .collect()
}

/// The identifier paths that follow `prefix` in `code` (a `{...}` group
/// gives one path per item), where `prefix` starts a path.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
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
                let segs = path_at(item.trim());
                if !segs.is_empty() {
                    out.push(segs);
                }
            }
        } else {
            out.push(path_at(rest));
        }
    }
    out
}

/// The crate root's re-exports: each name `pub use` makes an item of the
/// root, with the path it names (`pub use run::{simulate, Run};` gives
/// `simulate -> [run, simulate]` and `Run -> [run, Run]`).
fn reexports(root: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for stmt in root.split(';') {
        let Some((_, body)) = stmt.split_once("pub use ") else {
            continue;
        };
        let body: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
        let body = body
            .trim_start_matches("crate::")
            .trim_start_matches("self::");
        let (base, items): (Vec<String>, Vec<&str>) = match body.split_once("::{") {
            Some((base, group)) => (
                path_at(base),
                group.trim_end_matches('}').split(',').collect(),
            ),
            None => (vec![], vec![body]),
        };
        for item in items {
            let item = item.trim();
            let (path, alias) = match item.split_once(" as ") {
                Some((p, a)) => (p, Some(a.trim())),
                None => (item, None),
            };
            let mut full = base.clone();
            full.extend(path_at(path));
            if let Some(name) = alias.map(String::from).or_else(|| full.last().cloned()) {
                out.insert(name, full);
            }
        }
    }
    out
}

/// A crate's module graph: which module uses which.
fn module_graph(src: &Path) -> Graph {
    let mut files = BTreeMap::new();
    sources(src, src, &mut files);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let resolve = |base: &[String], segs: &[String]| -> Option<String> {
        (1..=segs.len()).rev().find_map(|n| {
            let mut p = base.to_vec();
            p.extend_from_slice(&segs[..n]);
            let m = p.join("::");
            modules.contains(&m).then_some(m)
        })
    };
    let reexported = reexports(files.get("crate").map(String::as_str).unwrap_or(""));
    let from_root = |segs: &[String]| -> String {
        resolve(&[], segs)
            .or_else(|| {
                let path = reexported.get(segs.first()?)?;
                resolve(&[], path)
            })
            .unwrap_or_else(|| "crate".into())
    };
    let mut g = Graph::new();
    for (module, code) in &files {
        let here: Vec<String> = if module == "crate" {
            vec![]
        } else {
            module.split("::").map(String::from).collect()
        };
        let mut targets = Vec::new();
        for segs in paths_after(code, "crate::") {
            targets.push(from_root(&segs));
        }
        for segs in paths_after(code, "self::") {
            targets.extend(resolve(&here, &segs));
        }
        // The file's own children: `mod x;` then `x::...`.
        for line in code.lines() {
            let l = line.trim_start().trim_start_matches("pub(crate) ");
            let l = l.trim_start_matches("pub ");
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
                let t = if parent.is_empty() {
                    from_root(&segs)
                } else {
                    resolve(parent, &segs).unwrap_or_else(|| parent.join("::"))
                };
                targets.push(t);
            }
        }
        g.entry(module.clone()).or_default();
        for t in targets {
            if let Some((a, b)) = between_siblings(module, &t) {
                g.entry(a).or_default().insert(b);
            }
        }
    }
    g
}

/// A use of module `to` by module `from`, drawn where their paths part:
/// between the two children of their deepest common module that hold
/// them. A use of one's own ancestor or descendant (a child using its
/// parent's items, a parent re-exporting its child's) is inside one module
/// and draws nothing.
fn between_siblings(from: &str, to: &str) -> Option<(String, String)> {
    let split = |m: &str| -> Vec<String> {
        if m == "crate" {
            vec![]
        } else {
            m.split("::").map(String::from).collect()
        }
    };
    let (f, t) = (split(from), split(to));
    let k = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    if k == f.len() || k == t.len() {
        return None;
    }
    Some((f[..=k].join("::"), t[..=k].join("::")))
}

fn print(title: &str, g: &Graph) {
    eprintln!("{title}:");
    for (m, to) in g {
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        eprintln!("  {m:20} -> {}", to.join(", "));
    }
}

/// The graph's strongly connected components of more than one node: the
/// sets of modules that import each other in a circle (Tarjan's).
fn cycles(g: &Graph) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, m: &'a str) {
        let i = s.index.len();
        s.index.insert(m, i);
        s.low.insert(m, i);
        s.stack.push(m);
        s.on.insert(m);
        let g = s.g;
        for t in g.get(m).into_iter().flatten() {
            let t = t.as_str();
            if !s.index.contains_key(t) {
                visit(s, t);
                let lt = s.low[t];
                let lm = s.low.get_mut(m).unwrap();
                *lm = (*lm).min(lt);
            } else if s.on.contains(t) {
                let it = s.index[t];
                let lm = s.low.get_mut(m).unwrap();
                *lm = (*lm).min(it);
            }
        }
        if s.low[m] == s.index[m] {
            let mut c = BTreeSet::new();
            while let Some(t) = s.stack.pop() {
                s.on.remove(t);
                c.insert(t.to_string());
                if t == m {
                    break;
                }
            }
            if c.len() > 1 {
                s.out.push(c);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for m in g.keys() {
        if !s.index.contains_key(m.as_str()) {
            visit(&mut s, m);
        }
    }
    s.out
}

/// What is wrong with `crates`' module graphs against the allowed cycles.
fn cycle_faults(graphs: &BTreeMap<String, Graph>, known: &[(&str, &[&str])]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (krate, g) in graphs {
        let allowed: Vec<BTreeSet<String>> = known
            .iter()
            .filter(|(k, _)| k == krate)
            .map(|(_, ms)| ms.iter().map(|m| m.to_string()).collect())
            .collect();
        let found = cycles(g);
        for c in &found {
            if !allowed.iter().any(|a| c.is_subset(a)) {
                let names: Vec<&str> = c.iter().map(String::as_str).collect();
                wrong.push(format!(
                    "{krate}: these modules import each other in a circle: {}",
                    names.join(", ")
                ));
            }
        }
        for a in &allowed {
            if !found.contains(a) {
                wrong.push(format!(
                    "{krate}: the known cycle {a:?} is no longer one (today: {found:?}); \
                     update KNOWN_CYCLES"
                ));
            }
        }
    }
    wrong
}

fn all_module_graphs() -> BTreeMap<String, Graph> {
    let root = workspace();
    CRATES
        .iter()
        .map(|(c, _)| {
            let src = root.join("crates").join(c).join("src");
            (c.to_string(), module_graph(&src))
        })
        .collect()
}

/// What is wrong with the crate graph `real` against the drawing `drawn`
/// (bottom first, as `CRATES`).
fn crate_faults(real: &Graph, drawn_list: &[(&str, &[&str])]) -> Vec<String> {
    let drawn: Graph = drawn_list
        .iter()
        .map(|(c, deps)| (c.to_string(), deps.iter().map(|d| d.to_string()).collect()))
        .collect();
    let mut wrong = Vec::new();
    for (i, (c, deps)) in drawn_list.iter().enumerate() {
        for d in *deps {
            if !drawn_list[..i].iter().any(|(b, _)| b == d) {
                wrong.push(format!(
                    "{c} uses {d}, which is not listed below it in CRATES"
                ));
            }
        }
    }
    for c in real.keys() {
        if !drawn.contains_key(c) {
            wrong.push(format!(
                "crates/{c} is not in CRATES (nor, then, in the README's drawing)"
            ));
        }
    }
    for (c, deps) in &drawn {
        let Some(have) = real.get(c) else {
            wrong.push(format!(
                "CRATES lists {c}, which has no crates/{c}/Cargo.toml"
            ));
            continue;
        };
        for d in have.difference(deps) {
            wrong.push(format!(
                "{c} depends on {d}: not drawn (add it to CRATES and the README's drawing, pointing down)"
            ));
        }
        for d in deps.difference(have) {
            wrong.push(format!(
                "{c} no longer depends on {d}: take it out of CRATES and the README's drawing"
            ));
        }
    }
    wrong
}

#[test]
fn the_crates_depend_on_each_other_as_the_readme_draws() {
    let real = crate_graph();
    print("crates", &real);
    let wrong = crate_faults(&real, CRATES);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_crate_has_a_module_cycle_but_the_known_ones() {
    let graphs = all_module_graphs();
    for (c, g) in &graphs {
        print(c, g);
    }
    let wrong = cycle_faults(&graphs, KNOWN_CYCLES);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What is wrong with a crate's module graph `g` against `layers` (bottom
/// first): a use of a module of the same or a higher layer, or a top
/// module not in any layer.
fn layer_faults(g: &Graph, layers: &[&[&str]]) -> Vec<String> {
    let layer_of = |m: &str| layers.iter().position(|l| l.contains(&m));
    let mut wrong = Vec::new();
    for (m, uses) in g {
        if m == "crate" || m.contains("::") {
            continue;
        }
        let Some(lm) = layer_of(m) else {
            wrong.push(format!("module {m} is in no layer: place it"));
            continue;
        };
        for u in uses {
            match layer_of(u) {
                Some(lu) if lu < lm => {}
                _ => wrong.push(format!("{m} uses {u}, which is not in a lower layer")),
            }
        }
    }
    wrong
}

#[test]
fn the_preload_library_is_in_layers() {
    let g = module_graph(&workspace().join("crates/preload/src"));
    let wrong = layer_faults(&g, PRELOAD_LAYERS);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The check sees a use pointing up, and a module left out.
    let mut bad = g.clone();
    bad.entry("state".into())
        .or_default()
        .insert("route".into());
    bad.entry("new".into()).or_default();
    assert_eq!(layer_faults(&bad, PRELOAD_LAYERS).len(), 2);
}

/// The shared object `cargo` built beside the binary (the newer of its two
/// places, as `exec::find_preload` takes it).
fn preload_library() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_cinterrupts"));
    let built = exe.parent().unwrap();
    [
        built.join(exec::PRELOAD_NAME),
        built.join("deps").join(exec::PRELOAD_NAME),
    ]
    .into_iter()
    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max_by_key(|(t, _)| *t)
    .map(|(_, p)| p)
    .expect("the preload library beside the binary (cargo build --workspace)")
}

/// The names of the symbols an ELF64 (little-endian) object defines, from
/// its symbol tables: the code the linker kept. (Its debug information
/// still names the code it dropped, so the bytes as a whole would not do.)
fn defined_symbols(elf: &[u8]) -> Vec<String> {
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap()) as usize;
    assert!(
        elf.starts_with(b"\x7fELF\x02\x01"),
        "not a little-endian ELF64 object"
    );
    let (shoff, shentsize, shnum) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c));
    let section = |i: usize| shoff + i * shentsize;
    let mut out = Vec::new();
    for i in 0..shnum {
        let sh = section(i);
        // SHT_SYMTAB and SHT_DYNSYM.
        if !matches!(u32_at(sh + 4), 2 | 11) {
            continue;
        }
        let (off, size, entsize) = (u64_at(sh + 0x18), u64_at(sh + 0x20), u64_at(sh + 0x38));
        let strtab = u64_at(section(u32_at(sh + 0x28)) + 0x18);
        for sym in (off..off + size).step_by(entsize) {
            // st_shndx 0: undefined here, someone else's code.
            if u16_at(sym + 6) == 0 {
                continue;
            }
            let name = &elf[strtab + u32_at(sym)..];
            let end = name.iter().position(|&b| b == 0).unwrap_or(0);
            out.push(String::from_utf8_lossy(&name[..end]).into_owned());
        }
    }
    out
}

/// The modules of crate `krate` that have code among `symbols` (Rust's
/// legacy mangling: `_ZN3emu3sys11HybridTimer...`, or `emu..config..Boost`
/// inside a generic's name).
fn modules_in(symbols: &[String], krate: &str) -> BTreeSet<String> {
    let text = symbols.join("\n");
    let mut out = BTreeSet::new();
    let mangled = format!("_ZN{}{krate}", krate.len());
    for (at, _) in text.match_indices(&mangled) {
        let rest = &text[at + mangled.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse::<usize>() {
            if let Some(name) = rest.get(digits.len()..digits.len() + n) {
                out.insert(name.to_string());
            }
        }
    }
    let generic = format!("{krate}..");
    for (at, _) in text.match_indices(&generic) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| ident(c) || c == '.') {
            continue;
        }
        let name: String = text[at + generic.len()..]
            .chars()
            .take_while(|&c| ident(c))
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

#[test]
fn the_preload_library_carries_no_emulator() {
    let lib = preload_library();
    let symbols = defined_symbols(&std::fs::read(&lib).unwrap());
    // None of emu's modules (issue 38 item 1: what the library shared with
    // emu, the boost and the hybrid timer, is `wire`'s), nor exec's.
    for krate in ["emu", "exec"] {
        let found = modules_in(&symbols, krate);
        assert!(
            found.is_empty(),
            "{} carries {krate}'s {found:?}: the preload library must link neither the emulator nor exec",
            lib.display()
        );
    }
    // Nor the io_uring crate the emulator's file backend runs on.
    assert!(
        modules_in(&symbols, "io_uring").is_empty(),
        "{} carries the io_uring crate",
        lib.display()
    );
    // The check reads symbols: a library with none would pass anything.
    assert!(
        modules_in(&symbols, "shm").contains("Slot"),
        "no symbol of shm::Slot in {}: is it stripped?",
        lib.display()
    );
}

/// The package names `cargo tree` prints for `package` (its default
/// edges: normal, build, and the package's own dev-dependencies).
fn tree_names(package: &str) -> BTreeSet<String> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--prefix", "none", "-p", package])
        .current_dir(workspace())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

/// Issue 38 item 1: `cargo tree -p cinterrupts-preload` lists neither emu
/// nor exec, nor what they build (the emulator's io-uring, the reports'
/// plotters, the configuration files' toml, exec's tempfile).
#[test]
fn the_preload_library_builds_neither_the_emulator_nor_exec() {
    let needs = tree_names("cinterrupts-preload");
    assert!(
        needs.contains("cinterrupts-wire") && needs.contains("libc"),
        "cargo tree -p cinterrupts-preload misread: {needs:?}"
    );
    let heavy = [
        "cinterrupts-emu",
        "cinterrupts-exec",
        "cinterrupts-report",
        "io-uring",
        "plotters",
        "toml",
        "tempfile",
    ];
    let found: Vec<&str> = heavy.into_iter().filter(|h| needs.contains(*h)).collect();
    assert!(
        found.is_empty(),
        "cinterrupts-preload builds {found:?} (cargo tree); it must take what it shares with exec from wire"
    );
    // The check reads names: exec's own tree has what preload's must not.
    assert!(tree_names("cinterrupts-exec").contains("tempfile"));
}

#[test]
fn the_checks_see_a_cycle_and_an_undrawn_dependency() {
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    g.entry("d".into()).or_default().insert("a".into());
    let abc: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(cycles(&g), vec![abc]);
    let graphs = BTreeMap::from([("k".to_string(), g.clone())]);
    assert_eq!(cycle_faults(&graphs, &[]).len(), 1);
    assert!(cycle_faults(&graphs, &[("k", &["a", "b", "c"])]).is_empty());
    // A known cycle a module joins, or one that is gone, fails too.
    g.get_mut("a").unwrap().insert("d".into());
    let graphs = BTreeMap::from([("k".to_string(), g.clone())]);
    assert_eq!(cycle_faults(&graphs, &[("k", &["a", "b", "c"])]).len(), 2);
    g.get_mut("c").unwrap().clear();
    g.get_mut("a").unwrap().remove("d");
    assert!(cycles(&g).is_empty());

    // A dependency not drawn, one drawn but gone, one pointing up.
    let real = Graph::from([
        ("a".to_string(), BTreeSet::new()),
        ("b".to_string(), BTreeSet::from(["a".to_string()])),
    ]);
    assert!(crate_faults(&real, &[("a", &[]), ("b", &["a"])]).is_empty());
    assert_eq!(crate_faults(&real, &[("a", &[]), ("b", &[])]).len(), 1);
    assert_eq!(
        crate_faults(&real, &[("a", &["b"]), ("b", &["a"])]).len(),
        2
    );
    assert_eq!(crate_faults(&real, &[("b", &["a"]), ("a", &[])]).len(), 1);

    let ours = BTreeMap::from([("policy".to_string(), "policy".to_string())]);
    let manifest = "[dependencies]\npolicy.workspace = true\nx = { path = \"../emu\" }\nlibc = \"1\"\n[dev-dependencies]\njobs = { path = \"../jobs\" }\n";
    assert_eq!(
        dependencies(manifest, &ours),
        BTreeSet::from(["emu".to_string(), "policy".to_string()])
    );
}

#[test]
fn paths_and_reexports_are_read_as_rust_writes_them() {
    let code = "use crate::run::place::{self, Placement};\nuse crate::{ring, irq::Taken};\nlet x = super::y::z();";
    let c = paths_after(code, "crate::");
    assert_eq!(c[0], ["run", "place"]);
    assert_eq!(c[1], ["ring"]);
    assert_eq!(c[2], ["irq", "Taken"]);
    assert_eq!(paths_after(code, "super::"), [["y", "z"]]);
    let r = reexports(
        "mod run;\npub use run::{\n    simulate,\n    Run as R,\n};\npub use world::Audit;",
    );
    assert_eq!(r["simulate"], ["run", "simulate"]);
    assert_eq!(r["R"], ["run", "Run"]);
    assert_eq!(r["Audit"], ["world", "Audit"]);
    let syms = [
        "_ZN3emu3sys11HybridTimer3new17h0123456789abcdefE",
        "_ZN4core3ptr43drop_in_place$LT$emu..device..Device$GT$17h0E",
        "_ZN6myemu5other1fE",
    ]
    .map(String::from);
    assert_eq!(
        modules_in(&syms, "emu"),
        BTreeSet::from(["device".to_string(), "sys".to_string()])
    );
}
