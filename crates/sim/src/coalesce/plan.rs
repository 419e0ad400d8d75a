//! `cinterrupts coalesce --trace FILE --plan feature09` (issue 40): a
//! Feature 09h plan derived from a captured block trace, printed as the
//! `nvme set-feature` commands that would apply it
//! ([`policy::feature09`]).
//!
//! **Vector of a request.** The CPU that dispatched it (blktrace's `D`,
//! else its `Q`; [`traces::Request::cpu`]): blk-mq runs a hardware queue
//! only on a CPU of that queue's mask, so the CPU names the queue. With
//! one I/O queue per CPU (Linux's nvme-pci asks for as many as there are
//! CPUs, and blk-mq maps each CPU to its own when the drive has enough),
//! CPU `c` submits on I/O queue `c + 1`, whose vector is `c + 1`
//! (drivers/nvme/host/pci.c, `nvme_create_queue`: a queue's vector is its
//! qid; vector 0 is the admin queue's). A drive with fewer queues than
//! CPUs shares them by topology (blk-mq's `group_cpus_evenly`), which a
//! trace does not record: the plan says it assumes one queue per CPU.
//! Only blkparse and blktrace record the CPU; any other format is refused.
//!
//! **Decision per vector.** Two facts from the trace:
//! - the Urgent share: the marks engine's verdict on each request (the
//!   `--mark` rules, else Table 1's logic on what a block trace records,
//!   [`super::marks_of`]);
//! - the depth: how many requests of the vector are in flight when one is
//!   dispatched, itself included, averaged over its requests (from the
//!   trace's dispatch and completion times).
//!
//! A vector gets Coalescing Disable when its requests are mostly Urgent
//! (at least half: "assumed", a majority; the marks say the submitter
//! waits) and it is shallow (mean depth under 2: a request mostly finds no
//! other in flight, so no second completion could share its interrupt and
//! 08h would only delay it by up to its time; TOS Fig. 7's c9). Any other
//! vector is aggregated: a majority the marks let wait, or a batcher
//! (depth 2 or more: completions that can share an interrupt). This is
//! "Urgent by queue" (uGDS PR #39: no coalescing on the synchronous
//! vectors, coalescing on the batch vector).
//!
//! **The one 08h value.** Feature 08h is the controller's, shared by every
//! aggregated vector. Its time is `--aggr-time`, else 100 us, the smallest
//! NVMe encodes (TOS 3.2). Its threshold is `--thr`, else the shallowest
//! aggregated vector's mean depth rounded down (at least 1, at most 256):
//! a threshold deeper than a batcher keeps in flight is never reached and
//! every interrupt of that vector would wait out the time.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use marks::Rule;
use policy::feature09::{self, Plan};
use policy::nvme::{Aggregation, TIME_UNIT};
use policy::{format_nanos, Nanos};

/// The least Urgent share of a CD vector: a majority (assumed).
pub const CD_URGENT_SHARE: f64 = 0.5;
/// The depth from which a vector is a batcher: a second completion in
/// flight to share an interrupt with.
pub const BATCH_DEPTH: f64 = 2.0;
/// The 08h time when `--aggr-time` is not given: the smallest NVMe
/// encodes (TOS 3.2).
pub const DEFAULT_TIME: Nanos = TIME_UNIT;

/// What `--plan feature09` takes.
pub struct PlanJob<'a> {
    pub trace: &'a Path,
    pub format: Option<traces::Format>,
    pub rules: Vec<Rule>,
    /// The controller the commands name (`/dev/nvme0`).
    pub controller: String,
    /// `--aggr-time`, `--thr` (entries per interrupt), when given.
    pub time: Option<Nanos>,
    pub thr: Option<u32>,
}

/// One vector's facts and decision.
#[derive(Clone, Debug, PartialEq)]
pub struct VectorFacts {
    pub vector: u16,
    pub cpu: u32,
    pub requests: u64,
    pub urgent: u64,
    /// Mean requests in flight at a dispatch, itself included.
    pub depth: f64,
    pub cd: bool,
}

impl VectorFacts {
    pub fn urgent_share(&self) -> f64 {
        self.urgent as f64 / self.requests.max(1) as f64
    }

    fn why(&self) -> &'static str {
        match (self.cd, self.urgent_share() >= CD_URGENT_SHARE) {
            (true, _) => "a synchronous submitter: mostly Urgent, depth under 2",
            (false, false) => "mostly unmarked: the marks let it wait",
            (false, true) => "a batcher: depth 2 or more",
        }
    }
}

/// Per vector, its requests' (dispatch, completion) and Urgent count.
#[derive(Default)]
struct Seen {
    spans: Vec<(Nanos, Option<Nanos>)>,
    urgent: u64,
}

/// Mean in flight at each dispatch, itself included: a request is in
/// flight from its dispatch until its completion (to the end, without
/// one).
fn mean_depth(spans: &mut [(Nanos, Option<Nanos>)]) -> f64 {
    spans.sort_unstable_by_key(|s| s.0);
    let mut ends: std::collections::BinaryHeap<std::cmp::Reverse<Nanos>> = Default::default();
    let mut total = 0u64;
    for &(issue, done) in spans.iter() {
        while ends.peek().is_some_and(|e| e.0 <= issue) {
            ends.pop();
        }
        ends.push(std::cmp::Reverse(done.unwrap_or(Nanos::MAX).max(issue)));
        total += ends.len() as u64;
    }
    total as f64 / spans.len().max(1) as f64
}

/// The facts of every vector the trace used, by vector.
pub fn facts(job: &PlanJob) -> Result<Vec<VectorFacts>, String> {
    let origin = job.trace.display().to_string();
    marks::Needs::check(super::KNOWN, "a block trace", &job.rules)?;
    let mut by_cpu: BTreeMap<u32, Seen> = BTreeMap::new();
    for r in traces::open(job.trace, job.format).map_err(|e| e.to_string())? {
        let r = r.map_err(|e| e.to_string())?;
        let Some(cpu) = r.cpu else {
            return Err(format!(
                "{origin}: --plan feature09 needs each request's CPU (its queue and vector), which only blkparse and blktrace record"
            ));
        };
        let seen = by_cpu.entry(cpu).or_default();
        seen.spans.push((r.issue_ns, r.complete_ns));
        seen.urgent += u64::from(super::marks_of(&job.rules, &r).urgent);
    }
    if by_cpu.is_empty() {
        return Err(format!("{origin}: no requests"));
    }
    by_cpu
        .into_iter()
        .map(|(cpu, mut seen)| {
            let vector = u16::try_from(cpu + 1)
                .map_err(|_| format!("{origin}: CPU {cpu} has no 16-bit interrupt vector"))?;
            let depth = mean_depth(&mut seen.spans);
            let mut f = VectorFacts {
                vector,
                cpu,
                requests: seen.spans.len() as u64,
                urgent: seen.urgent,
                depth,
                cd: false,
            };
            f.cd = f.urgent_share() >= CD_URGENT_SHARE && depth < BATCH_DEPTH;
            Ok(f)
        })
        .collect()
}

/// The plan the facts give, and where its 08h values came from.
pub fn plan(job: &PlanJob, facts: &[VectorFacts]) -> Result<(Plan, String, String), String> {
    let time = job.time.unwrap_or(DEFAULT_TIME);
    let time_why = match job.time {
        Some(_) => "--aggr-time".to_string(),
        None => "the smallest 08h encodes, TOS 3.2".to_string(),
    };
    let shallowest = facts
        .iter()
        .filter(|f| !f.cd)
        .map(|f| f.depth)
        .min_by(f64::total_cmp);
    let (threshold, thr_why) = match (job.thr, shallowest) {
        (Some(t), _) => (t, "--thr".to_string()),
        (None, Some(d)) => (
            (d.floor() as u32).clamp(1, 256),
            format!("the shallowest aggregated vector's mean depth {d:.2}, rounded down"),
        ),
        (None, None) => (1, "no vector is aggregated".to_string()),
    };
    let aggregation = Aggregation { time, threshold };
    if aggregation.to_feature().is_none() {
        return Err(format!(
            "option --aggr-time/--thr: {} and {threshold} entries are not a Feature 08h value (a multiple of {} up to 25.5ms; 1..=256 entries)",
            format_nanos(time),
            format_nanos(TIME_UNIT)
        ));
    }
    let plan = Plan {
        vectors: facts.iter().map(|f| (f.vector, f.cd)).collect(),
        aggregation,
    };
    Ok((plan, time_why, thr_why))
}

/// The plan as text: the vectors' facts, the commands with their values
/// explained, and the simulator's equivalent `--policy feature09`.
pub fn run(job: &PlanJob) -> Result<String, String> {
    let facts = facts(job)?;
    let (plan, time_why, thr_why) = plan(job, &facts)?;
    let commands = plan
        .commands(&job.controller)
        .ok_or("the plan's Feature 08h value is not encodable")?;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Feature 09h plan for {}: vector = dispatching CPU + 1 (one I/O queue per CPU; Linux's nvme-pci gives I/O queue N vector N, vector 0 is the admin queue's)",
        job.trace.display()
    );
    let _ = writeln!(
        s,
        "{:>6} {:>4} {:>9} {:>7} {:>6}  decision",
        "vector", "cpu", "requests", "urgent", "depth"
    );
    for f in &facts {
        let _ = writeln!(
            s,
            "{:>6} {:>4} {:>9} {:>6.1}% {:>6.2}  {} ({})",
            f.vector,
            f.cpu,
            f.requests,
            100.0 * f.urgent_share(),
            f.depth,
            if f.cd {
                "coalescing disabled"
            } else {
                "aggregated"
            },
            f.why()
        );
    }
    let agg = plan.aggregation;
    let _ = writeln!(
        s,
        "08h: aggregation time {} ({time_why}), threshold {} entries ({thr_why})",
        format_nanos(agg.time),
        agg.threshold
    );
    let units = agg.time / TIME_UNIT;
    let _ = writeln!(
        s,
        "{}  # 08h: time {units} x 100us (bits 15:08), threshold {} stored 0's based as {} (bits 07:00)",
        commands[0],
        agg.threshold,
        agg.threshold - 1
    );
    for (cmd, &(iv, cd)) in commands[1..].iter().zip(&plan.vectors) {
        let what = if cd {
            "CD=1 (bit 16): an interrupt per completion"
        } else {
            "CD=0: aggregated by 08h"
        };
        let _ = writeln!(s, "{cmd}  # 09h: vector {iv} (bits 15:00), {what}");
    }
    let cd: Vec<String> = facts
        .iter()
        .filter(|f| f.cd)
        .map(|f| f.vector.to_string())
        .collect();
    let cd = if cd.is_empty() {
        "none".to_string()
    } else {
        cd.join(",")
    };
    let listed = feature09::CdVectors::parse(&cd).is_ok();
    let _ = writeln!(
        s,
        "sim: --policy feature09 --cd {cd} --aggr-time {} --thr {}{}",
        format_nanos(agg.time),
        agg.threshold,
        if listed {
            ""
        } else {
            " (past the vectors --cd lists)"
        }
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_what_is_in_flight_at_each_dispatch() {
        // Three in a row, each done before the next: depth 1.
        let mut serial = vec![(0, Some(10)), (10, Some(20)), (20, Some(30))];
        assert_eq!(mean_depth(&mut serial), 1.0);
        // Four at once: 1, 2, 3, 4 at their dispatches.
        let mut batch = vec![(0, Some(50)); 4];
        assert_eq!(mean_depth(&mut batch), 2.5);
        // One never completed stays in flight.
        let mut open = vec![(0, None), (5, Some(6))];
        assert_eq!(mean_depth(&mut open), 1.5);
    }
}
