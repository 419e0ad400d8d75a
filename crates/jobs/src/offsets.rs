//! Where each I/O goes: fio's offset choice (io_u.c `get_next_offset`,
//! `get_next_seq_offset`, `get_next_rand_offset`) for one job thread, over
//! its `nrfiles` files served round robin (fio's default
//! `file_service_type=roundrobin`, one I/O per file: options.c `str_fst_cb`
//! sets `file_service_nr = 1`).
//!
//! The emulator applies it on its backend: the job's region, cut into
//! `nrfiles` equal files laid end to end (fio's `size` "divided by" nrfiles,
//! HOWTO `nrfiles`). The simulator's device has no offsets and does not
//! call it.

use rand::Rng;

use crate::job::{Distribution, Job};
use crate::skew::Skew;

/// One file: its place on the backend and its own positions and skew (fio
/// keeps `last_pos` per direction and a generator per file).
#[derive(Clone, Debug)]
struct File {
    base: u64,
    size: u64,
    /// Where the next sequential I/O of each direction starts, relative.
    next: [u64; 2],
    skew: Option<Skew>,
}

/// One job thread's offsets.
#[derive(Clone, Debug)]
pub struct Offsets {
    files: Vec<File>,
    /// The file the next I/O goes to.
    turn: usize,
    random: bool,
    /// `rw=randread:N`: I/Os left before the next random offset.
    seq_left: u32,
    seq_nr: u32,
    seq_add: i64,
    /// Random offsets are multiples of this, per direction (`blockalign`,
    /// else the minimum block size).
    align: [u64; 2],
    zoned: Option<std::sync::Arc<[(u32, u32)]>>,
    sequence: Option<(std::sync::Arc<[u64]>, bool)>,
    /// Random offsets taken per direction (fio's `io_issues`, which the
    /// sequence distribution indexes).
    taken: [u64; 2],
}

impl Offsets {
    /// The offsets of one clone of `job` on `[start, start + size)` of the
    /// backend. Skewed distributions draw their offset (`rand_off`) from
    /// `rng` here, as fio's `zipf_init` does at setup.
    pub fn new<R: Rng + ?Sized>(job: &Job, (start, size): (u64, u64), rng: &mut R) -> Offsets {
        let nrfiles = u64::from(job.nrfiles.max(1));
        let fsize = (size / nrfiles).max(1);
        let min_r = job.block_sizes(false).min();
        let min_w = job.block_sizes(true).min();
        let align = [
            job.blockalign[0].unwrap_or(min_r).max(1),
            job.blockalign[1].unwrap_or(min_w).max(1),
        ];
        // filesetup.c __init_rand_distribution: ranges of the smaller
        // minimum block size.
        let range = min_r.min(min_w).max(1);
        let nranges = fsize.div_ceil(range);
        let files = (0..nrfiles)
            .map(|i| File {
                base: start + i * fsize,
                size: fsize,
                next: [0, 0],
                skew: match job.distribution {
                    Distribution::Zipf { theta, center } => {
                        Some(Skew::zipf(nranges, theta, center, rng))
                    }
                    Distribution::Pareto { h, center } => {
                        Some(Skew::pareto(nranges, h, center, rng))
                    }
                    Distribution::Normal { dev, center } => {
                        Some(Skew::gauss(nranges, dev, center, rng))
                    }
                    Distribution::Random | Distribution::Zoned(_) | Distribution::Sequence(_) => {
                        None
                    }
                },
            })
            .collect();
        Offsets {
            files,
            turn: 0,
            random: job.rw.is_random(),
            seq_left: job.rw_seq_nr.max(1),
            seq_nr: job.rw_seq_nr.max(1),
            seq_add: job.rw_seq_add,
            align,
            zoned: match &job.distribution {
                Distribution::Zoned(z) => Some(z.clone()),
                _ => None,
            },
            sequence: match &job.distribution {
                Distribution::Sequence(blocks) => {
                    Some((blocks.clone(), job.random_sequence_stride))
                }
                _ => None,
            },
            taken: [0, 0],
        }
    }

    /// Files the job spreads its I/O over.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// The backend offset of the next I/O of `len` bytes. A uniform random
    /// offset draws one number (`0..blocks`), as the emulator always has.
    pub fn next<R: Rng + ?Sized>(&mut self, write: bool, len: u64, rng: &mut R) -> u64 {
        let d = usize::from(write);
        let f = self.turn;
        self.turn = (self.turn + 1) % self.files.len();
        // io_u.c get_next_offset: with `:N`, only every Nth I/O of a random
        // job takes a random offset; the others go on sequentially.
        self.seq_left -= 1;
        let random_now = self.random && self.seq_left == 0;
        if self.seq_left == 0 {
            self.seq_left = self.seq_nr;
        }
        let align = self.align[d];
        let zoned = self.zoned.clone();
        let sequence = random_now.then(|| self.sequence.clone()).flatten();
        let count = self.taken[d];
        if random_now {
            self.taken[d] += 1;
        }
        let file = &mut self.files[f];
        let room = file.size.saturating_sub(len);
        let at = if random_now {
            let blocks = room / align + 1;
            let b = if let Some(skew) = &file.skew {
                skew.next(rng) % blocks
            } else if let Some(z) = zoned {
                zoned_block(&z, blocks, rng)
            } else if let Some((seq, stride)) = sequence {
                // io_u.c __get_next_rand_offset_sequence: the pattern's
                // element for this I/O, moved on by a group per cycle with
                // the stride; past the file it wraps.
                let n = seq.len() as u64;
                let idx = seq[(count % n) as usize];
                let b = if stride { count / n * n + idx } else { idx };
                b % blocks
            } else {
                rng.random_range(0..blocks)
            };
            b * align
        } else {
            seq_pos(file.next[d], self.seq_add, file.size, len)
        };
        file.next[d] = at + len;
        file.base + at
    }
}

/// io_u.c `get_next_seq_offset`: the previous end plus `rw=read:N`'s hole
/// (after the first I/O), wrapping to the start (or, stepping back, to the
/// end) past the file; an I/O that would not fit starts over at 0 (fio's
/// loop and time_based reset).
fn seq_pos(next: u64, add: i64, size: u64, len: u64) -> u64 {
    let mut pos = next;
    if pos != 0 && add != 0 {
        let p = pos as i128 + i128::from(add);
        pos = if p < 0 || p >= i128::from(size) {
            if add > 0 {
                0
            } else {
                (i128::from(size) + i128::from(add)).max(0) as u64
            }
        } else {
            p as u64
        };
    }
    if pos + len > size {
        pos = 0;
    }
    pos
}

/// io_u.c `__get_next_rand_offset_zoned`: a percent `v` in 1..=100 picks
/// the zone whose cumulative access share reaches it; the block is uniform
/// in that zone's share of the file.
fn zoned_block<R: Rng + ?Sized>(zones: &[(u32, u32)], blocks: u64, rng: &mut R) -> u64 {
    let v = rng.random_range(1..=100u32);
    let (mut acc, mut from) = (0u32, 0u32);
    for &(access, size) in zones {
        acc += access;
        if v <= acc {
            let lo = u64::from(from) * blocks / 100;
            let span = (blocks * u64::from(size) / 100).max(1);
            return (lo + rng.random_range(0..span)).min(blocks - 1);
        }
        from += size;
    }
    rng.random_range(0..blocks)
}
