//! `sweep search` on a spec and a store: the spec's space indexed from its
//! axes (never the whole product expanded), each round's settings run on
//! every seed exactly as `sweep run` runs points (`run::run_points`, the
//! same keys: `point::point_at`), read back from the store, and the
//! search's front compared with a grid's.
//!
//! Resumable: a point already in the store is read, not run, so a search
//! run again makes the same rounds and runs only what is missing. Sharded:
//! `--round R --shard K/N` replays rounds 0..R from the store (each must be
//! complete) and runs shard K of round R's points (sorted by key, point i
//! to shard i mod N, as `sweep run`'s shards), then stops; a driver runs
//! the rounds one after another (`sweep slurm --search`).

use std::collections::BTreeSet;

use policy::options::OPTIONS;
use policy::PolicySpec;

use crate::front;
use crate::merge::Row;
use crate::point::{point_at, Coordinates, Point};
use crate::run::{run_points, Counts};
use crate::search::{drive, Candidate, Ended, Evaluated, Outcome, Refinement, Space, Step};
use crate::spec::{Mode, Spec};
use crate::store::{Results, State, Store, StoreError};
use ::store::Shard;

/// Why a search could not go on. One line each.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `--round R` when an earlier round is not all in the store.
    #[error("round {round} is not done: {missing} of its {points} points are not in {store} (run round {round} first: sweep search --round {round})")]
    Incomplete {
        round: usize,
        missing: usize,
        points: usize,
        store: String,
    },
    /// `--compare-grid STORE` lacks points of the spec.
    #[error("{store}: {missing} of the spec's {points} points are not in it (first key {first}): run the whole grid into it (sweep run SPEC --store {store})")]
    GridIncomplete {
        store: String,
        missing: usize,
        points: usize,
        first: String,
    },
    /// A bad option, one line.
    #[error("{0}")]
    Option(String),
}

/// One group of the space: what a front is drawn for.
#[derive(Clone, Copy, Debug)]
struct Group {
    workload: usize,
    device: usize,
    host: usize,
    mode: Mode,
}

/// The spec's space, indexed: its groups and its strategies' axes.
pub struct SpecSpace<'a> {
    spec: &'a Spec,
    groups: Vec<Group>,
    /// An emulator point's host (this machine), read once.
    machine: String,
}

impl<'a> SpecSpace<'a> {
    pub fn of(spec: &'a Spec) -> SpecSpace<'a> {
        let mut groups = Vec::new();
        for workload in 0..spec.workloads.len() {
            for device in 0..spec.devices.len() {
                for host in 0..spec.hosts.len() {
                    for &mode in &spec.modes {
                        // As `point::expand`: the host profiles are the
                        // simulator's.
                        if mode == Mode::Emu && host > 0 {
                            continue;
                        }
                        groups.push(Group {
                            workload,
                            device,
                            host,
                            mode,
                        });
                    }
                }
            }
        }
        let machine = spec
            .modes
            .contains(&Mode::Emu)
            .then(sim::bench::machine)
            .unwrap_or_default();
        SpecSpace {
            spec,
            groups,
            machine,
        }
    }

    /// The shape the search walks.
    pub fn space(&self) -> Space {
        Space {
            groups: self.groups.len(),
            axes: self
                .spec
                .strategies
                .iter()
                .map(|s| s.axes.iter().map(|(_, v)| v.len()).collect())
                .collect(),
        }
    }

    /// The spec's points (settings times seeds), saturating.
    pub fn points(&self) -> u64 {
        self.space()
            .settings()
            .saturating_mul(self.spec.seeds.len() as u64)
    }

    /// A setting's points, one per seed: the points `sweep run` makes for
    /// it, keys and all.
    pub fn points_of(&self, c: &Candidate) -> Vec<Point> {
        let g = self.groups[c.group];
        let strategy = &self.spec.strategies[c.strategy];
        let mut variant = PolicySpec::named(&strategy.name);
        for ((option, values), &i) in strategy.axes.iter().zip(&c.at) {
            if let Some(opt) = OPTIONS.iter().find(|o| o.name() == *option) {
                // Checked when the spec was read (`Strategy::variants`).
                let _ = opt.give(&mut variant, values[i]);
            }
        }
        self.spec
            .seeds
            .iter()
            .map(|&seed| {
                let at = Coordinates {
                    workload: g.workload,
                    device: g.device,
                    host: g.host,
                    mode: g.mode,
                    seed,
                };
                point_at(self.spec, &at, variant.clone(), &self.machine)
            })
            .collect()
    }

    /// The rows of `candidates`' finished points in `store` and how many
    /// points are neither finished nor failed there (the first's key).
    fn read(&self, store: &Store, candidates: &[Candidate]) -> Result<Read, StoreError> {
        let mut rows = Vec::new();
        let (mut missing, mut first) = (0, None);
        for c in candidates {
            for p in self.points_of(c) {
                match store.get::<Results>(&p.key)? {
                    Some(f) => rows.push((c.clone(), Row::of(&f))),
                    None if store.state(&p.key) == State::Failed => {}
                    None => {
                        missing += 1;
                        first.get_or_insert(p.key);
                    }
                }
            }
        }
        Ok((rows, missing, first))
    }
}

/// What [`SpecSpace::read`] found: the finished points' rows with their
/// settings, how many points are missing, the first missing key.
type Read = (Vec<(Candidate, Row)>, usize, Option<String>);

/// How to search.
#[derive(Clone, Copy, Debug)]
pub struct SearchOptions {
    pub seed: u64,
    /// Runs (points) at most; `u64::MAX`: until the front stops moving.
    pub budget: u64,
    /// With `round`: this task's share of that round.
    pub shard: Shard,
    /// Run only this round (the ones before it read from the store).
    pub round: Option<usize>,
    /// With `round`: count its points, run nothing.
    pub count: bool,
    /// Run again points whose failure is in the store.
    pub retry_failed: bool,
    /// Refine every strategy's own front (`search::Fronts::around`).
    pub each_strategy: bool,
}

/// What a search did.
pub struct Report {
    pub outcome: Outcome,
    /// The spec's points: what the grid would run.
    pub grid_points: u64,
    /// Over the rounds run here.
    pub counts: Counts,
    /// With `--round`: that round's points (all shards), or `None` when
    /// the search had ended before it.
    pub round_points: Option<usize>,
}

impl Report {
    /// `search: R runs in K rounds (...) of the grid's N points; converged`.
    pub fn summary_line(&self) -> String {
        let o = &self.outcome;
        let ended = match o.ended {
            Some(Ended::Converged) => "converged: every neighbour of the front is evaluated",
            Some(Ended::Budget) => "stopped: the budget allows no more",
            None => "stopped after the round asked for",
        };
        format!(
            "search: {} runs in {} rounds of the grid's {} points ({} run now, {} read from the store, {} failed); {ended}",
            o.runs,
            o.rounds,
            self.grid_points,
            self.counts.run_now,
            self.counts.finished_before,
            self.counts.failed
        )
    }

    /// The search's fronts, as `sweep merge` draws them.
    pub fn fronts(&self) -> Vec<front::Front> {
        self.outcome.evaluated.fronts()
    }
}

fn add(total: &mut Counts, c: Counts) {
    total.points += c.points;
    total.finished_before += c.finished_before;
    total.run_now += c.run_now;
    total.failed += c.failed;
    total.failed_before += c.failed_before;
}

/// Refuses options the search cannot run with, before anything is
/// written: a budget below one setting's runs, a shard without a round.
pub fn check(spec: &Spec, opts: &SearchOptions) -> Result<(), SearchError> {
    let cost = spec.seeds.len() as u64;
    if opts.budget < cost {
        return Err(SearchError::Option(format!(
            "--budget {}: a setting is {cost} runs (one per seed): give at least {cost}",
            opts.budget
        )));
    }
    if opts.round.is_none() && opts.shard != Shard::ALL {
        return Err(SearchError::Option(format!(
            "--shard {}: a shard runs its share of one round: give --round R (the rounds one after another: sweep slurm --search)",
            opts.shard
        )));
    }
    Ok(())
}

/// Searches `spec`'s space through `store`. `progress` hears a line per
/// round and per point run.
pub fn search(
    spec: &Spec,
    store: &Store,
    opts: SearchOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, SearchError> {
    check(spec, &opts)?;
    let space = SpecSpace::of(spec);
    let cost = spec.seeds.len() as u64;
    let mut counts = Counts::default();
    let mut round_points = None;
    let refinement = Refinement::new(space.space(), opts.seed, opts.budget, cost)
        .each_strategy(opts.each_strategy);
    let outcome = drive(refinement, |round, todo| -> Result<Step, SearchError> {
        let mut points: Vec<Point> = todo.iter().flat_map(|c| space.points_of(c)).collect();
        points.sort_by(|a, b| a.key.cmp(&b.key));
        match opts.round {
            Some(r) if round < r => {
                let (rows, missing, _) = space.read(store, todo)?;
                if missing > 0 {
                    return Err(SearchError::Incomplete {
                        round,
                        missing,
                        points: points.len(),
                        store: store.dir.display().to_string(),
                    });
                }
                Ok(Step::Evaluated(rows))
            }
            Some(_) => {
                round_points = Some(points.len());
                if !opts.count {
                    progress(&format!(
                        "round {round}: {} settings, {} points; shard {} runs its share",
                        todo.len(),
                        points.len(),
                        opts.shard
                    ));
                    let mine = opts.shard.select(&points);
                    add(
                        &mut counts,
                        run_points(spec, store, mine, opts.retry_failed, progress)?,
                    );
                }
                Ok(Step::Stop)
            }
            None => {
                progress(&format!(
                    "round {round}: {} settings, {} points",
                    todo.len(),
                    points.len()
                ));
                add(
                    &mut counts,
                    run_points(spec, store, points, opts.retry_failed, progress)?,
                );
                let (rows, _, _) = space.read(store, todo)?;
                Ok(Step::Evaluated(rows))
            }
        }
    })?;
    Ok(Report {
        outcome,
        grid_points: space.points(),
        counts,
        round_points,
    })
}

/// The search's fronts against the grid's: how many of the grid's front
/// settings the search found, exactly or within one grid step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// Per front (interrupts/s, CPU per I/O, either): the grid's front
    /// settings, those the search has on its front, those within one grid
    /// step of one on the search's front, and the search's front settings
    /// not on the grid's.
    pub fronts: Vec<Recovered>,
    /// Runs the search made, and the grid's.
    pub runs: u64,
    pub grid_runs: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    pub front: &'static str,
    pub grid: usize,
    pub exact: usize,
    pub near: usize,
    /// The search's front settings that the grid shows dominated.
    pub extra: usize,
}

impl Comparison {
    /// `recovered F of G front points in R runs (grid: N)`, then a line
    /// per front.
    pub fn text(&self) -> String {
        let either = &self.fronts[self.fronts.len() - 1];
        let mut out = format!(
            "recovered {} of {} front points in {} runs (grid: {}): {} exactly, {} within one grid step; {:.0}% of the grid's runs\n",
            either.exact + either.near,
            either.grid,
            self.runs,
            self.grid_runs,
            either.exact,
            either.near,
            100.0 * self.runs as f64 / self.grid_runs.max(1) as f64
        );
        for r in &self.fronts {
            out.push_str(&format!(
                "  {}: {} of {} exactly, {} more within one grid step; {} of the search's front not on the grid's\n",
                r.front, r.exact, r.grid, r.near, r.extra
            ));
        }
        out
    }
}

/// Reads the whole grid of `spec` from `grid` (every point must be there)
/// and compares its fronts with `search`'s.
pub fn compare(spec: &Spec, grid: &Store, search: &Report) -> Result<Comparison, SearchError> {
    let space = SpecSpace::of(spec);
    let every: Vec<Candidate> = space.space().every().collect();
    let (rows, missing, first) = space.read(grid, &every)?;
    if missing > 0 {
        return Err(SearchError::GridIncomplete {
            store: grid.dir.display().to_string(),
            missing,
            points: space.points() as usize,
            first: first.unwrap_or_default(),
        });
    }
    let mut whole = Evaluated::default();
    for (c, row) in rows {
        whole.add(&c, row);
    }
    let (grid_fronts, found) = (whole.fronts(), &search.outcome.evaluated);
    let search_fronts = found.fronts();
    let pick = |e: &Evaluated, fronts: &[front::Front], which: u8| -> BTreeSet<Candidate> {
        match which {
            0 => e.on_front(fronts, false),
            1 => e.on_front(fronts, true),
            _ => {
                let mut all = e.on_front(fronts, false);
                all.extend(e.on_front(fronts, true));
                all
            }
        }
    };
    let names = [
        "interrupts/s against p99",
        "CPU per I/O against p99",
        "either",
    ];
    let fronts = (0..3u8)
        .map(|which| {
            let g = pick(&whole, &grid_fronts, which);
            let s = pick(found, &search_fronts, which);
            let exact = g.intersection(&s).count();
            let near = g
                .iter()
                .filter(|c| {
                    !s.contains(c) && s.iter().any(|x| crate::search::within_one_step(c, x))
                })
                .count();
            Recovered {
                front: names[which as usize],
                grid: g.len(),
                exact,
                near,
                extra: s.difference(&g).count(),
            }
        })
        .collect();
    Ok(Comparison {
        fronts,
        runs: search.outcome.runs,
        grid_runs: space.points(),
    })
}
