//! The matrix of fio jobs and its hold-out split, both fixed before any
//! run (issue 37 item 5).
//!
//! The factors are the issue's: the target (the root disk, a zram device,
//! a loop device), the engine (psync, libaio, io_uring), the queue depth
//! (1, 8, 32), the pattern (random read, random write, 70/30), the block
//! size (4 KiB, 64 KiB) and the jobs (1, 2). The full cross is 324
//! points; psync is a synchronous engine, so fio caps its depth at 1
//! (fio's HOWTO, `iodepth`: "the sync engines ... an iodepth of 1"), and
//! engine and depth are one factor of seven levels here: psync/1,
//! libaio/1, libaio/8, libaio/32, io_uring/1, io_uring/8, io_uring/32.
//!
//! **The fractional design** (ours): every target runs 14 shapes k = 0..13,
//! each of the seven engine-depth levels twice (k mod 7), once with each
//! block size ((k div 7 + t) mod 2, t the target's index); the pattern is
//! (k + t) mod 3 and the jobs 1 + (k div 2 + t) mod 2, so within each half
//! of the split every block size meets both jobs counts and every pattern
//! (a first version, jobs from (k + k div 7 + t) mod 2, tied the jobs to
//! the block size within each half; a unit test now checks it).
//! 3 x 14 = 42 points.
//!
//! **The split**: the points in their fixed order (target, then shape),
//! alternately fitted (even index) and held out (odd index). Each
//! target's held-out half has both block sizes and engine-depth levels
//! from psync to io_uring/32; nothing of an outcome decides it.

use serde::{Deserialize, Serialize};

/// Where fio's I/O goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// A file under /var/tmp on the root disk (virtio-blk, ext4).
    Disk,
    /// A zram device of the run's own (`/sys/class/zram-control/hot_add`).
    Zram,
    /// A loop device (direct I/O) over a file on the root disk.
    Loop,
}

impl Target {
    pub const ALL: [Target; 3] = [Target::Disk, Target::Zram, Target::Loop];

    pub fn name(self) -> &'static str {
        match self {
            Target::Disk => "disk",
            Target::Zram => "zram",
            Target::Loop => "loop",
        }
    }
}

/// fio's `rw=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    RandRead,
    RandWrite,
    /// `rw=randrw rwmixread=70`.
    RandRw70,
}

impl Pattern {
    pub const ALL: [Pattern; 3] = [Pattern::RandRead, Pattern::RandWrite, Pattern::RandRw70];

    /// fio's options for it.
    pub fn fio(self) -> &'static str {
        match self {
            Pattern::RandRead => "rw=randread",
            Pattern::RandWrite => "rw=randwrite",
            Pattern::RandRw70 => "rw=randrw\nrwmixread=70",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::RandRw70 => "randrw70",
        }
    }

    /// The direction whose latency the point reports: a 70/30 mix's reads
    /// (70% of its I/Os). fio reports each direction's percentiles apart,
    /// and two directions' percentiles do not merge.
    pub fn latency_of_writes(self) -> bool {
        self == Pattern::RandWrite
    }
}

/// The engine-depth levels, in the design's order.
pub const ENGINE_DEPTHS: [(&str, u32); 7] = [
    ("psync", 1),
    ("libaio", 1),
    ("libaio", 8),
    ("libaio", 32),
    ("io_uring", 1),
    ("io_uring", 8),
    ("io_uring", 32),
];

/// The block sizes, bytes.
pub const BLOCK_SIZES: [u32; 2] = [4096, 65536];

/// One fio job of the matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Point {
    /// Its place in the fixed order.
    pub index: usize,
    pub target: Target,
    pub engine: &'static str,
    pub iodepth: u32,
    pub pattern: Pattern,
    pub bs: u32,
    pub numjobs: u32,
    /// In the held-out half (predicted), or the fitted half.
    pub held_out: bool,
}

impl Point {
    /// A short name: `disk-io_uring-qd8-randread-4k-1j`.
    pub fn name(&self) -> String {
        format!(
            "{}-{}-qd{}-{}-{}k-{}j",
            self.target.name(),
            self.engine,
            self.iodepth,
            self.pattern.name(),
            self.bs / 1024,
            self.numjobs
        )
    }

    /// The job's fio options (one per line, job-file syntax) without the
    /// file and the time: the same shape for the real run and the model.
    pub fn shape_options(&self) -> String {
        format!(
            "ioengine={}\niodepth={}\n{}\nbs={}\nnumjobs={}\ndirect=1\nrandrepeat=0\nnorandommap=1",
            self.engine,
            self.iodepth,
            self.pattern.fio(),
            self.bs,
            self.numjobs
        )
    }
}

/// Shapes each target runs (the design above).
pub const SHAPES_PER_TARGET: usize = 14;

/// The full matrix in its fixed order, with the split.
pub fn full() -> Vec<Point> {
    let mut out = Vec::new();
    for (t, &target) in Target::ALL.iter().enumerate() {
        for k in 0..SHAPES_PER_TARGET {
            let (engine, iodepth) = ENGINE_DEPTHS[k % 7];
            let half = k / 7;
            let index = out.len();
            out.push(Point {
                index,
                target,
                engine,
                iodepth,
                pattern: Pattern::ALL[(k + t) % 3],
                bs: BLOCK_SIZES[(half + t) % 2],
                numjobs: 1 + ((k / 2 + t) % 2) as u32,
                held_out: index % 2 == 1,
            });
        }
    }
    out
}

/// `--quick`: the first two shapes of each target (one fitted, one held
/// out), the same points as the full matrix's.
pub fn quick() -> Vec<Point> {
    full()
        .into_iter()
        .filter(|p| p.index % SHAPES_PER_TARGET < 2)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_matrix_has_every_level_on_each_side_of_the_split() {
        let m = full();
        assert_eq!(m.len(), 42);
        for side in [false, true] {
            let s: Vec<&Point> = m.iter().filter(|p| p.held_out == side).collect();
            assert_eq!(s.len(), 21);
            for t in Target::ALL {
                assert!(s.iter().any(|p| p.target == t));
            }
            for (e, d) in ENGINE_DEPTHS {
                assert!(s.iter().any(|p| p.engine == e && p.iodepth == d), "{e}/{d}");
            }
            for pat in Pattern::ALL {
                assert!(s.iter().any(|p| p.pattern == pat));
            }
            for bs in BLOCK_SIZES {
                assert!(s.iter().any(|p| p.bs == bs));
            }
            for j in [1, 2] {
                assert!(s.iter().any(|p| p.numjobs == j));
            }
        }
        // Each target: every engine-depth level with both block sizes.
        for t in Target::ALL {
            for (e, d) in ENGINE_DEPTHS {
                let mut sizes: Vec<u32> = m
                    .iter()
                    .filter(|p| p.target == t && p.engine == e && p.iodepth == d)
                    .map(|p| p.bs)
                    .collect();
                sizes.sort();
                assert_eq!(sizes, BLOCK_SIZES);
            }
        }
    }

    #[test]
    fn no_two_factors_are_tied_within_a_half() {
        let m = full();
        for side in [false, true] {
            let s: Vec<&Point> = m.iter().filter(|p| p.held_out == side).collect();
            for bs in BLOCK_SIZES {
                for j in [1, 2] {
                    assert!(
                        s.iter().any(|p| p.bs == bs && p.numjobs == j),
                        "bs {bs} jobs {j}"
                    );
                }
                for pat in Pattern::ALL {
                    assert!(s.iter().any(|p| p.bs == bs && p.pattern == pat));
                }
            }
            for t in Target::ALL {
                for j in [1, 2] {
                    assert!(s.iter().any(|p| p.target == t && p.numjobs == j));
                }
                for bs in BLOCK_SIZES {
                    assert!(s.iter().any(|p| p.target == t && p.bs == bs));
                }
            }
        }
    }

    #[test]
    fn quick_is_a_fitted_and_a_held_out_point_per_target() {
        let q = quick();
        assert_eq!(q.len(), 6);
        for t in Target::ALL {
            let of: Vec<&Point> = q.iter().filter(|p| p.target == t).collect();
            assert_eq!(of.len(), 2);
            assert!(!of[0].held_out && of[1].held_out);
        }
    }
}
