//! The bundle's scripts and its README: `kick-the-tires.sh` (the
//! Functional badge: the offline build and every figure rerun against its
//! stored verdicts), `full.sh` (the Reproduced badge: the whole evaluation,
//! each step's measured time beside it) and `README-AE.md`.

use super::archive;
use super::map::Figure;

/// Time measured while the bundle was made, with the load average
/// (`/proc/loadavg`'s first three fields) at its start and end.
#[derive(Clone, Debug)]
pub struct Measured {
    pub secs: f64,
    pub load_start: String,
    pub load_end: String,
}

impl Measured {
    pub fn describe(&self) -> String {
        format!(
            "{:.0} s, measured when this bundle was made (load average {} at the start, {} at the end)",
            self.secs, self.load_start, self.load_end
        )
    }
}

/// `/proc/loadavg`'s 1, 5 and 15 minute averages, or `unknown`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// What both scripts do first: unpack the archive into `src/` beside
/// them (once), build it offline in its own target directory, and name
/// the binary `$bin`.
fn preamble() -> String {
    format!(
        r#"here=$(cd "$(dirname "$0")" && pwd)
load() {{ cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }}
started=$(date +%s); load_start=$(load)
src="$here/src"
if [ ! -f "$src/CODE-VERSION" ]; then
  rm -rf "$src.part" && mkdir -p "$src.part"
  tar -xzf "$here/{archive}" -C "$src.part"
  mv "$src.part" "$src"
fi
# The archive's own target directory: a shared one would not be a build
# from the archive.
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR
build_started=$(date +%s)
if [ "$profile" = debug ]; then
  (cd "$src" && cargo build --offline --locked -p cinterrupts)
else
  (cd "$src" && cargo build --release --offline --locked)
fi
build_secs=$(( $(date +%s) - build_started ))
bin="$src/target/$profile/cinterrupts"
echo "$(basename "$0"): built $(cat "$src/CODE-VERSION" | tr '\n' ' ')in $build_secs s ($profile)"
cd "$here"
"#,
        archive = archive::NAME
    )
}

/// `kick-the-tires.sh [--debug] [--first | EXPERIMENT...]`.
pub fn kick_the_tires(figures: &[Figure]) -> String {
    let ids: Vec<&str> = figures.iter().map(|f| f.experiment.as_str()).collect();
    format!(
        r#"#!/usr/bin/env bash
# Kick the tires (the Functional badge): build the source archive offline
# and rerun each figure's command (FIGURES.md), comparing its verdicts with
# the stored ones (figures.json): `F<n> <experiment>: OK` or `FAIL (claim,
# stored, now)` per figure; exits 1 on any FAIL. Within 30 minutes on
# 2 cores: the wall time is printed at the end.
#   kick-the-tires.sh            every figure, release build
#   kick-the-tires.sh --first    the first figure only
#   kick-the-tires.sh fig8 fig10 these experiments only
#   --debug                      a debug build (quicker to build, slower to run)
set -euo pipefail
profile=release
figures=({ids})
chosen=()
for a in "$@"; do
  case "$a" in
    --debug) profile=debug ;;
    --first) chosen=("${{figures[0]}}") ;;
    -*) echo "kick-the-tires.sh: unknown option $a (--debug, --first, or experiments)" >&2; exit 2 ;;
    *) chosen+=("$a") ;;
  esac
done
[ ${{#chosen[@]}} -gt 0 ] || chosen=("${{figures[@]}}")
{preamble}fail=0
for e in "${{chosen[@]}}"; do
  "$bin" reproduce --quick --quiet --only "$e" --out "out/$e" --ae-check figures.json || fail=$((fail + 1))
done
echo "kick-the-tires.sh: ${{#chosen[@]}} figure(s), $fail not OK; build $build_secs s, wall time $(( $(date +%s) - started )) s (load average $load_start at the start, $(load) at the end)"
[ "$fail" -eq 0 ]
"#,
        ids = ids.join(" "),
        preamble = preamble()
    )
}

/// One step of the whole evaluation.
pub struct Step {
    pub args: &'static str,
    pub what: &'static str,
    /// Measured when the bundle was made, if it was.
    pub measured: Option<Measured>,
}

/// The whole evaluation's steps: `reproduce --quick` (the run the bundle
/// is made from, so measured), then the longer modes (the repro README's
/// "What `reproduce` does" and "`reproduce --mode app`").
pub fn steps(quick: Measured) -> Vec<Step> {
    vec![
        Step {
            args: "reproduce --quick --out out/quick",
            what: "every experiment in the simulator, 200 ms x 3 seeds per run",
            measured: Some(quick),
        },
        Step {
            args: "reproduce --out out/full",
            what: "every experiment in the simulator, 1 s x 10 seeds per run (the papers' 10 runs)",
            measured: None,
        },
        Step {
            args: "reproduce --mode emu --out out/emu",
            what: "the microbenchmarks on the emulator, this machine's real threads, 2 s x 3 repetitions",
            measured: None,
        },
        Step {
            args: "reproduce --mode app --out out/app",
            what: "TOS Table 3, Fig 22 and Table 6 on Debian's RocksDB under exec (rocksdb-tools, from scripts/setup)",
            measured: None,
        },
    ]
}

/// `full.sh`: every step, its time when the bundle was made beside it;
/// it prints and records (`full-times.txt`) each step's time as it runs.
pub fn full(steps: &[Step]) -> String {
    let mut s = format!(
        "#!/usr/bin/env bash\n\
         # The whole evaluation (the Reproduced badge): each step's report in out/, each\n\
         # step's wall time printed and written to full-times.txt as it runs.\n\
         set -euo pipefail\nprofile=release\n{}: > full-times.txt\n\
         step() {{\n  local t0; t0=$(date +%s)\n  \"$bin\" \"$@\"\n  \
         echo \"full.sh: cinterrupts $* took $(( $(date +%s) - t0 )) s (load average $(load))\" | tee -a full-times.txt\n}}\n",
        preamble()
    );
    for step in steps {
        let when = step.measured.as_ref().map_or_else(
            || "not measured when this bundle was made (full-times.txt has it after a run)".into(),
            Measured::describe,
        );
        s += &format!(
            "# {}: {when}\nstep {}\n",
            step.what,
            step.args.replace("reproduce ", "reproduce --quiet ")
        );
    }
    s
}

/// `README-AE.md`.
pub fn readme(
    version: &archive::CodeVersion,
    figures: &[Figure],
    steps: &[Step],
    headline: &str,
    rustc: &str,
) -> String {
    let mut s = format!(
        "# cinterrupts: artifact evaluation\n\n\
         Made by `cinterrupts reproduce --ae` from commit `{}` (dirty: {}).\n\n\
         ## Badges\n\n\
         - **Available**: this bundle, deposited on Zenodo (`.zenodo.json` holds its metadata; \
         `CITATION.cff` how to cite it; `LICENSE-MIT`, `LICENSE-APACHE`).\n\
         - **Functional**: `./kick-the-tires.sh` unpacks `{}` into `src/`, builds it offline \
         (`cargo build --release --offline --locked`: every crate is vendored, no registry is \
         needed) and reruns each of the {} figures and tables of `FIGURES.md`, printing \
         `F<n> <experiment>: OK` when its verdicts are the stored ones, `FAIL (claim, stored, \
         now)` when not, and its wall time. It is meant to finish within 30 minutes on 2 cores. \
         `--first` runs the first figure only; `--debug` builds unoptimised.\n\
         - **Reproduced**: `./full.sh` runs the whole evaluation, each step's measured time \
         beside it (below).\n\n\
         `sha256sum -c SHA256SUMS` checks every file of the bundle.\n\n\
         ## Requirements\n\n\
         Debian 12 (x86-64); Rust's stable toolchain, as rustup installs it (Debian 12's own \
         rustc 1.63 is too old for the vendored crates; this bundle was made with \
         `{rustc}`: an older one may refuse a crate, and cargo names it); `tar`, \
         `gzip`; no network. For the steps beyond the simulator, the Debian packages `src/scripts/setup` \
         installs (fio, rocksdb-tools, ...: the list is at its top; it needs root for apt-get). \
         The simulator's steps (kick-the-tires, `reproduce --quick`, `reproduce`) need nothing else.\n\n\
         ## Expected times\n\n\
         | step | what | time |\n|---|---|---|\n\
         | `./kick-the-tires.sh` | the release build, then each figure | the build dominates; the \
         script prints both |\n",
        version.commit,
        version.dirty,
        archive::NAME,
        figures.len()
    );
    for step in steps {
        s += &format!(
            "| `cinterrupts {}` | {} | {} |\n",
            step.args,
            step.what,
            step.measured.as_ref().map_or(
                "not measured when this bundle was made".into(),
                Measured::describe
            )
        );
    }
    s += &format!(
        "\n## What the bundle holds\n\n\
         - `{}`: the source (the workspace's tracked files), `vendor/`, `.cargo/config.toml` \
         pointing crates-io at it, `CODE-VERSION`;\n\
         - `results/`: the `reproduce --quick` run the verdicts come from (report.html, \
         summary.json, every run's JSON); its headline: {headline};\n\
         - `FIGURES.md`, `figures.json`: the figure map;\n\
         - `kick-the-tires.sh`, `full.sh`, `SHA256SUMS`.\n",
        archive::NAME
    );
    s
}
