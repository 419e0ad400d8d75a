//! What FastResponse's experiments share (Liu et al., ICS'22, Sec. 4.1):
//! its workloads as co-runs of the shipped job files
//! (`examples/fastresponse/`), its systems, and the provenance every one
//! of its experiments repeats.

use crate::experiment::{RunSpec, Workload};
use crate::provenance::{Origin, Provenance};

/// The latency-sensitive job (`ls-readrandom.fio`).
pub const LS: &str = "ls-readrandom";

/// FR's read-path systems (FR 4.1), in the paper's order; BSJ-Opt adds
/// fjournaling, which the read path does not use (FR 4.2).
pub const SYSTEMS: &[&str] = &["vanilla", "selectisr", "b-opt", "bs-opt"];

/// The latency-sensitive job of the write path (`ls-fillsync.fio`).
pub const LS_W: &str = "ls-fillsync";

/// FR's systems on the synchronous-write path (FR 4.1, 4.4), in the
/// paper's order: the read path's and BSJ-Opt (BS-Opt + fjournaling).
pub const SYSTEMS_W: &[&str] = &["vanilla", "selectisr", "b-opt", "bs-opt", "bsj-opt"];

/// The five throughput-oriented workloads of FR Table 1: (group, job name).
pub const TO: &[(&str, &str)] = &[
    ("terasort", "to-terasort"),
    ("bayes", "to-bayes"),
    ("kmeans", "to-kmeans"),
    ("pagerank", "to-pagerank"),
    ("index", "to-index"),
];

/// How long a co-run lasts at the least: at 2,000 gets/s, 2 s gives 4,000
/// gets per seed, 4 above the p99.9 (200 ms, the quick plan's, gives 400:
/// its p99.9 would be the maximum).
pub const CORUN_RUNTIME: u64 = 2 * policy::SEC;

/// Every job of a co-run on core 0 (`--cpus_allowed=0`).
pub const SHARED_CORE: &str = "--cpus_allowed=0";

macro_rules! fr {
    ($file:literal) => {
        include_str!(concat!("../../../../examples/fastresponse/", $file, ".fio"))
    };
}

macro_rules! corun {
    ($name:literal, $to:literal) => {
        Workload {
            name: $name,
            text: concat!(fr!("ls-readrandom"), "\n", fr!($to)),
            app: false,
        }
    };
}

macro_rules! corun_w {
    ($name:literal, $to:literal) => {
        Workload {
            name: $name,
            text: concat!(fr!("ls-fillsync"), "\n", fr!($to)),
            app: false,
        }
    };
}

/// fillsync alone.
pub fn alone_w() -> Workload {
    Workload {
        name: "fillsync",
        text: fr!("ls-fillsync"),
        app: false,
    }
}

/// fillsync co-run with each TO workload, named `fillsync+GROUP`.
pub fn coruns_w() -> Vec<Workload> {
    vec![
        corun_w!("fillsync+terasort", "to-terasort"),
        corun_w!("fillsync+bayes", "to-bayes"),
        corun_w!("fillsync+kmeans", "to-kmeans"),
        corun_w!("fillsync+pagerank", "to-pagerank"),
        corun_w!("fillsync+index", "to-index"),
    ]
}

/// The fillsync co-run's name for a TO group.
pub fn corun_name_w(group: &str) -> &'static str {
    match group {
        "terasort" => "fillsync+terasort",
        "bayes" => "fillsync+bayes",
        "kmeans" => "fillsync+kmeans",
        "pagerank" => "fillsync+pagerank",
        _ => "fillsync+index",
    }
}

/// Each FR system on fillsync beside each TO workload in `groups`, in a
/// group per TO workload (`bsj-opt/bayes`): the runs Figs 13, 14b and 15b
/// draw, simulated once.
pub fn runs_w(systems: &[&str], groups: &[&str]) -> Vec<RunSpec> {
    let mut out = Vec::new();
    for &(group, _) in TO.iter().filter(|(g, _)| groups.contains(g)) {
        for s in systems {
            out.push(
                RunSpec::fastresponse_fsync(s, corun_name_w(group), "default")
                    .with_fio(&[SHARED_CORE])
                    .at_least(CORUN_RUNTIME)
                    .in_group(group),
            );
        }
    }
    out
}

/// The provenance of the synchronous-write experiments: the read path's
/// with fillsync, the journal and FR's write-path systems.
pub fn provenance_w(figure: &'static str) -> Provenance {
    provenance(figure)
        .set(
            "workload (LS)",
            "examples/fastresponse/ls-fillsync.fio: a put is a buffered 4 KiB sequential write \
             (sync engine) then fsync, critical, Poisson at 2,000/s",
            Origin::Paper(
                "FR 4.1, Table 1; engine, sequential WAL appends, fsync (not fdatasync), \
                 arrivals are ours (the file's header)",
            ),
        )
        .with(
            "systems (write path)",
            "as the read path's, each with --journal ordered; selectisr, b-opt, bs-opt add \
             --jbd2-critical; selectisr adds --fsync-io-polls; bsj-opt: bs-opt with --journal \
             fjournal (and JBD2 critical)",
            Origin::Paper(
                "FR 4.1, 3.4, 4.4 (JBD2 critical in B-Opt, BS-Opt, SelectISR); JBD2 critical \
                 in BSJ-Opt is ours (FR does not say)",
            ),
        )
        .with(
            "fsync I/O under SelectISR",
            "polled (--fsync-io-polls): the critical caller's D1 and the critical JBD2's \
             D2, JD and JC go to the polled queue, raise no interrupt, and the waiting \
             thread spins for them instead of sleeping; fillsync's writes are buffered and \
             reach no device",
            Origin::Paper(
                "FR 4.4: SelectISR \"polls the I/O completions for those I/Os\" (T_D1, T_D2, \
                 T_JC); Linux itself waits for writeback and journal I/O by interrupt \
                 (wait_on_buffer), the simulator's default",
            ),
        )
        .with(
            "response time",
            "a put's mean response time = the write's mean (page cache) + the fsync's mean \
             (fio's sync latency); tails (p99, p99.9) are the fsync's",
            Origin::Ours(
                "FR plots db_bench's put latency; fio reports the write and the fsync \
                 separately, and the means add exactly; a put's percentile lies between the \
                 fsync's and the fsync's plus the write's maximum",
            ),
        )
        .with(
            "page cache",
            "the TO jobs' writes are buffered (direct=0 in their files): they dirty the running \
             transaction, written as D2 by the next commit",
            Origin::Paper("FR 2.2 Root Cause 2, 4.1 (HDFS writes through the page cache)"),
        )
        .with(
            "journal commit timer",
            "JBD2's 5 s commit timer never fires in a 2 s run: under fjournal the TO job's \
             dirty data stays in the page cache for the whole window (no D2 burst measured)",
            Origin::Ours(
                "the run length is the read path's 2 s, chosen for the p99.9 before these \
                 runs existed; FR gives none",
            ),
        )
}

/// readrandom alone.
pub fn alone() -> Workload {
    Workload {
        name: "readrandom",
        text: fr!("ls-readrandom"),
        app: false,
    }
}

/// readrandom co-run with each TO workload, named `readrandom+GROUP`.
pub fn coruns() -> Vec<Workload> {
    vec![
        corun!("readrandom+terasort", "to-terasort"),
        corun!("readrandom+bayes", "to-bayes"),
        corun!("readrandom+kmeans", "to-kmeans"),
        corun!("readrandom+pagerank", "to-pagerank"),
        corun!("readrandom+index", "to-index"),
    ]
}

/// The co-run workload's name for a TO group.
pub fn corun_name(group: &str) -> &'static str {
    match group {
        "terasort" => "readrandom+terasort",
        "bayes" => "readrandom+bayes",
        "kmeans" => "readrandom+kmeans",
        "pagerank" => "readrandom+pagerank",
        _ => "readrandom+index",
    }
}

/// The provenance every FastResponse experiment shares.
pub fn provenance(figure: &'static str) -> Provenance {
    Provenance::new(Origin::Paper(figure))
        .with(
            "host",
            "xeon-e5-2630v3: 16 cores, 2.4 GHz, CFS wake-up granularity 4 ms; costs carried over from the calibrated xeon-e5-2660v4",
            Origin::Paper("FR 4.1 (machine), 2.2 (4 ms); the costs are ours: FR measures none"),
        )
        .with(
            "device",
            "optane-900p (2.5 GB/s read ceiling, 8 units)",
            Origin::Paper("FR 4.1, 2.2 Fig 6"),
        )
        .with(
            "device policy",
            "default: an interrupt per completion",
            Origin::Paper("FR 4.1: a stock NVMe driver"),
        )
        .with(
            "systems",
            "vanilla: --wakeup vanilla; selectisr: + --completion select-isr; b-opt: --block-scheduler ld (8 tokens, 32k pieces) --wakeup vanilla; bs-opt: ld + --wakeup boost-code (the authors' patch of Algorithm 1)",
            Origin::Paper("FR 4.1, 3.3, 3.5; 8 tokens: FR 2.2's QD <= 8 (digest A.6); boost-code: the authors' kernel, CGCL-codes/FastResponse e78438aa7 kernel/sched/fair.c (digest A.2.3)"),
        )
        .with(
            "workload (LS)",
            "examples/fastresponse/ls-readrandom.fio: psync 4 KiB random reads, critical, Poisson at 2,000/s",
            Origin::Paper("FR 4.1, Table 1; engine, arrivals and misses are ours (the file's header)"),
        )
        .with(
            "workload (TO)",
            "examples/fastresponse/to-*.fio: 128 KiB random reads at Table 1's read rate (libaio iodepth 32, Poisson); the writes as Hadoop map-side spills, 640 x 128 KiB submitted at once (io_uring, 16 a call, iodepth 640), one spill per 640 of Table 1's write intervals",
            Origin::Paper(
                "FR Table 1, 4.1, 2.2 Root Cause 1 (bursts); the 80 MiB spill from Hadoop's \
                 defaults (io.sort.mb 100 x spill.percent 0.80); engines, depths and arrivals \
                 are ours (each file's header)",
            ),
        )
        .with(
            "placement",
            "every job on core 0 (--cpus_allowed=0)",
            Origin::Ours(
                "FR states no pinning; its TO applications run many threads over every core, so \
                 the LS thread's core is shared with them; one shared core is the smallest such \
                 machine",
            ),
        )
        .with(
            "TO CPU work",
            "Bayes and Kmeans: a fio cpuio job at cpuload=100 (fio's 50 ms chunks) beside their I/O; TeraSort, PageRank, Index: fio's per-I/O costs only",
            Origin::Ours(
                "FR 4.2 and 4.4 call Bayes and Kmeans CPU-intensive and give no load: a \
                 CPU-bound map task's thread is always runnable (not a fit); PageRank is not \
                 classified, so it gets none",
            ),
        )
        .with(
            "runtime, runs",
            "at least 2 s of virtual time per co-run (4,000 gets per seed), the plan's seeds",
            Origin::Ours(
                "FR gives no run length; a p99.9 needs thousands of gets, 200 ms at 2,000/s \
                 gives 400",
            ),
        )
}
