//! Which of an experiment's runs (a sweep's points, `tune`'s thr points)
//! this process runs: shard K of N, 0-based (K in 0..N), as
//! `SLURM_ARRAY_TASK_ID` (with `--array=0-(N-1)`) and Kubernetes'
//! `JOB_COMPLETION_INDEX` count, so a task passes its index as is.
//!
//! The partition: runs in a fixed order, run i to shard i mod N
//! ([`Shard::owns`]), so every run is in exactly one shard and shard sizes
//! differ by at most one. `tune` orders its runs by key (keys are hashes,
//! so each shard gets a mix); a sweep by a scattered index of its points
//! (`sweep::Points::order`), which needs no list of them.

/// Shard `index` of `count` (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The whole sweep.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// `K/N`, 0-based: `0/4` .. `3/4`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not K/N (0-based: 0/4 .. 3/4)"))?;
        let k: usize = k
            .trim()
            .parse()
            .map_err(|_| format!("'{s}': K is not a whole number (K/N, 0-based)"))?;
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| format!("'{s}': N is not a whole number (K/N, 0-based)"))?;
        Shard::new(k, n)
    }

    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        if count == 0 {
            return Err("0 shards: N must be at least 1".into());
        }
        if index >= count {
            return Err(format!(
                "shard {index} of {count}: shards are 0-based, 0 to {}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// The shard the environment names, if any: Slurm's array task
    /// (`SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`, of
    /// `SLURM_ARRAY_TASK_COUNT`, or of `shards` when given), else an
    /// Indexed Job's `JOB_COMPLETION_INDEX` (of `shards`, which it does not
    /// say). `env` looks a variable up (`std::env::var` in the binary).
    pub fn from_env(
        env: &dyn Fn(&str) -> Option<String>,
        shards: Option<usize>,
    ) -> Result<Option<Shard>, String> {
        let number = |var: &str| -> Result<Option<usize>, String> {
            match env(var) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("{var}={v:?} is not a whole number")),
            }
        };
        if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let count = match (shards, number("SLURM_ARRAY_TASK_COUNT")?) {
                (Some(n), _) | (None, Some(n)) => n,
                (None, None) => return Err(
                    "SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT: give --shards N"
                        .into(),
                ),
            };
            let index = id.checked_sub(min).ok_or_else(|| {
                format!("SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}")
            })?;
            return Shard::new(index, count).map(Some);
        }
        if let Some(index) = number("JOB_COMPLETION_INDEX")? {
            let Some(count) = shards else {
                return Err(
                    "JOB_COMPLETION_INDEX is set: give --shards N (the Job's completions)".into(),
                );
            };
            return Shard::new(index, count).map(Some);
        }
        Ok(None)
    }

    /// The shard a task runs, from `--shard` (`given`) and `--shards`:
    /// the one given (which `shards` must not contradict), else the one
    /// the environment names ([`Shard::from_env`]), else all.
    pub fn resolve(
        given: Option<Shard>,
        shards: Option<usize>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Shard, String> {
        if shards == Some(0) {
            return Err("--shards 0: there must be at least 1".into());
        }
        match given {
            Some(s) => match shards {
                Some(n) if n != s.count => {
                    Err(format!("--shard {s} and --shards {n}: they disagree"))
                }
                _ => Ok(s),
            },
            None => Ok(Shard::from_env(env, shards)?.unwrap_or(Shard::ALL)),
        }
    }

    /// Whether the point at `position` in key order is this shard's.
    pub fn owns(&self, position: usize) -> bool {
        position % self.count == self.index
    }

    /// This shard's items of `sorted` (sorted by key).
    pub fn select<T: Clone>(&self, sorted: &[T]) -> Vec<T> {
        sorted
            .iter()
            .enumerate()
            .filter(|(i, _)| self.owns(*i))
            .map(|(_, p)| p.clone())
            .collect()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn resolve_takes_the_given_shard_else_the_environments_else_all() {
        let none = |_: &str| None;
        let slurm = |v: &str| match v {
            "SLURM_ARRAY_TASK_ID" => Some("2".to_string()),
            "SLURM_ARRAY_TASK_COUNT" => Some("4".to_string()),
            _ => None,
        };
        let one = Shard::new(1, 4).unwrap();
        assert_eq!(Shard::resolve(Some(one), None, &slurm), Ok(one));
        assert_eq!(Shard::resolve(Some(one), Some(4), &none), Ok(one));
        assert_eq!(
            Shard::resolve(Some(one), Some(3), &none).unwrap_err(),
            "--shard 1/4 and --shards 3: they disagree"
        );
        assert_eq!(Shard::resolve(None, None, &slurm), Shard::new(2, 4));
        assert_eq!(Shard::resolve(None, None, &none), Ok(Shard::ALL));
        assert_eq!(
            Shard::resolve(None, Some(0), &none).unwrap_err(),
            "--shards 0: there must be at least 1"
        );
    }

    proptest! {
        #[test]
        fn every_point_is_in_exactly_one_shard_and_sizes_differ_by_at_most_one(
            points in 0usize..500,
            count in 1usize..40,
        ) {
            let items: Vec<usize> = (0..points).collect();
            let mut seen = vec![0u32; points];
            let mut sizes = Vec::new();
            for index in 0..count {
                let mine = Shard::new(index, count).unwrap().select(&items);
                sizes.push(mine.len());
                for i in mine {
                    seen[i] += 1;
                }
            }
            prop_assert!(seen.iter().all(|&n| n == 1));
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            prop_assert!(hi - lo <= 1);
        }
    }

    #[test]
    fn bad_shards_are_refused_in_one_line() {
        assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
        for bad in ["4/4", "0/0", "x/4", "1", "-1/4", "1/4/2"] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(Shard::parse("4/4").unwrap_err().contains("0-based"));
    }

    #[test]
    fn the_environment_names_the_shard() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            Shard::from_env(&slurm, None),
            Ok(Some(Shard { index: 2, count: 4 }))
        );
        let offset = env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            Shard::from_env(&offset, None),
            Ok(Some(Shard { index: 1, count: 4 }))
        );
        let k8s = env(&[("JOB_COMPLETION_INDEX", "3")]);
        assert!(Shard::from_env(&k8s, None)
            .unwrap_err()
            .contains("--shards"));
        assert_eq!(
            Shard::from_env(&k8s, Some(4)),
            Ok(Some(Shard { index: 3, count: 4 }))
        );
        assert!(Shard::from_env(&k8s, Some(3)).is_err());
        assert_eq!(Shard::from_env(&env(&[]), None), Ok(None));
    }
}
