//! `sweep slurm`: a ready `sbatch` job-array script that runs a sweep's
//! shards as array tasks, each task one shard (its `SLURM_ARRAY_TASK_ID`,
//! 0-based as `--shard`), all writing to one store on a shared directory.

/// What the script is made of.
#[derive(Clone, Debug)]
pub struct Script {
    /// The spec and the store, as the tasks will see them (on a shared
    /// filesystem: every task reads the one and writes the other).
    pub spec: String,
    pub store: String,
    /// Array tasks: shards.
    pub tasks: usize,
    /// CPUs per task: simulator points run in parallel on them.
    pub cpus_per_task: usize,
    /// The job's name in `squeue`.
    pub job_name: String,
    /// The `cinterrupts` binary the tasks run.
    pub binary: String,
    /// The partition the array goes to (`#SBATCH --partition`); `None`
    /// leaves it to the cluster's default partition.
    pub partition: Option<String>,
    /// The spec has emulator points: each task takes its node whole
    /// (`#SBATCH --exclusive`), since an emulator point's device thread
    /// spins on a CPU and its timing is the machine's; its points run one
    /// at a time.
    pub exclusive: bool,
}

/// A shell word, single-quoted unless it is plain.
fn word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// What a script is made from besides the spec (`sweep slurm`'s options).
#[derive(Clone, Debug)]
pub struct Request {
    /// The store [default: `sweep-store` beside the spec].
    pub store: Option<std::path::PathBuf>,
    pub tasks: usize,
    pub cpus_per_task: usize,
    pub job_name: String,
    /// [default: the running program's path]
    pub binary: Option<String>,
    pub partition: Option<String>,
}

impl Script {
    /// The script for the spec at `spec`, loaded first (a script for a
    /// spec that does not load would fail in every task), and its points.
    /// Paths are made absolute: a task starts in the directory sbatch was
    /// run from, which need not be this one.
    pub fn for_spec(
        spec: &std::path::Path,
        r: Request,
    ) -> Result<(Script, usize), crate::SpecError> {
        let loaded = crate::Spec::load(spec)?;
        // Counted, not built (issue 42 item 5: a 10^6-point spec).
        let points = crate::Points::new(&loaded).map_or(0, |p| p.len() as usize);
        Ok((Script::for_loaded(spec, &loaded, r), points))
    }

    /// The script for the spec at `spec`, with the size of its space
    /// counted from its axes (`sweep slurm --search`: a search's space may
    /// be too large to expand).
    pub fn for_search(
        spec: &std::path::Path,
        r: Request,
    ) -> Result<(Script, u64), crate::SpecError> {
        let loaded = crate::Spec::load(spec)?;
        let points = crate::search_run::SpecSpace::of(&loaded).points();
        Ok((Script::for_loaded(spec, &loaded, r), points))
    }

    fn for_loaded(spec: &std::path::Path, loaded: &crate::Spec, r: Request) -> Script {
        let binary = r.binary.unwrap_or_else(|| {
            std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "cinterrupts".into())
        });
        let absolute = |p: &std::path::Path| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        };
        Script {
            spec: absolute(spec),
            store: absolute(&crate::store::store_dir(spec, r.store.as_deref())),
            tasks: r.tasks,
            cpus_per_task: r.cpus_per_task,
            job_name: r.job_name,
            binary,
            partition: r.partition,
            exclusive: loaded.modes.contains(&crate::spec::Mode::Emu),
        }
    }

    /// `N points in T tasks of about P`, `points` shared among the tasks.
    pub fn share(&self, points: usize) -> String {
        format!(
            "{points} points in {} tasks of about {}",
            self.tasks,
            points.div_ceil(self.tasks)
        )
    }

    /// The script's text. `tasks` must be at least 1 (the binary checks).
    pub fn text(&self) -> String {
        let last = self.tasks.saturating_sub(1);
        let partition = self
            .partition
            .as_ref()
            .map(|p| format!("#SBATCH --partition={}\n", word(p)))
            .unwrap_or_default();
        let exclusive = if self.exclusive {
            "# Emulator points: one task a node, the node whole.\n#SBATCH --exclusive\n"
        } else {
            ""
        };
        format!(
            "#!/bin/bash
# A cinterrupts sweep as a Slurm job array: task K runs shard K/{tasks}
# (0-based) of the spec's points into one store. Submit with sbatch; a
# task that is killed or fails is rerun by submitting again (finished
# points are skipped).
#SBATCH --job-name={name}
#SBATCH --array=0-{last}
#SBATCH --cpus-per-task={cpus}
#SBATCH --output={name}-%A_%a.out
{partition}{exclusive}set -euo pipefail
# The simulator's points run in parallel on the task's CPUs.
export RAYON_NUM_THREADS=\"${{SLURM_CPUS_PER_TASK:-{cpus}}}\"
{bin} sweep run {spec} --store {store} --shard \"${{SLURM_ARRAY_TASK_ID}}/{tasks}\"
# When every task is done, fold the store into the table and the fronts:
#   {bin} sweep merge {store} --out {store}-merged
",
            tasks = self.tasks,
            name = word(&self.job_name),
            cpus = self.cpus_per_task,
            bin = word(&self.binary),
            spec = word(&self.spec),
            store = word(&self.store),
            partition = partition,
            exclusive = exclusive,
        )
    }
}

/// `sweep search`'s options that every round's command repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchRounds {
    pub seed: u64,
    /// `None`: no budget.
    pub budget: Option<u64>,
}

impl Script {
    /// A search's driver (`sweep slurm --search`): a bash script, run where
    /// `sbatch` is, that submits each round of the search as a job array
    /// (`sbatch --wait`: the next round is drawn from this one's results)
    /// whose task K runs `sweep search --round R --shard K/N`, until
    /// `sweep search --round R --count` says the search has ended (0
    /// points), then prints the search's front (every point read from the
    /// store). Run again after a failure, it skips the finished points.
    pub fn search_driver(&self, rounds: SearchRounds) -> String {
        let last = self.tasks.saturating_sub(1);
        let budget = rounds
            .budget
            .map(|b| format!(" --budget {b}"))
            .unwrap_or_default();
        let partition = self
            .partition
            .as_ref()
            .map(|p| format!(" --partition={}", word(p)))
            .unwrap_or_default();
        let exclusive = if self.exclusive { " --exclusive" } else { "" };
        let search = format!(
            "{bin} sweep search {spec} --store {store} --seed {seed}{budget}",
            bin = word(&self.binary),
            spec = word(&self.spec),
            store = word(&self.store),
            seed = rounds.seed,
        );
        format!(
            r#"#!/bin/bash
# A cinterrupts search (sweep search) on Slurm, round by round: each
# round's points as a job array of {tasks} tasks (task K runs shard K/{tasks},
# 0-based), into one store; the next round is drawn from the results, so
# each array is waited for. Run with bash where sbatch is; run again after
# a failure (finished points are read, not rerun).
set -euo pipefail
round=0
while :; do
  # The points of this round (0: the search has ended).
  points=$({search} --round "$round" --count)
  [ "$points" -gt 0 ] || break
  echo "round $round: $points points" >&2
  # The array's job id on stderr: stdout is the search's fronts.
  sbatch --wait --parsable --job-name={name} --array=0-{last} --cpus-per-task={cpus}{partition}{exclusive} \
    --output={name}-%A_%a.out \
    --wrap "RAYON_NUM_THREADS={cpus} {search} --round $round --shard \${{SLURM_ARRAY_TASK_ID}}/{tasks} --quiet" >&2
  round=$((round + 1))
done
# Every point is in the store: the search's fronts.
{search}
"#,
            tasks = self.tasks,
            name = word(&self.job_name),
            cpus = self.cpus_per_task,
        )
    }
}

impl Script {
    /// Hands the script to `sbatch` on its stdin (sbatch reads the script
    /// from stdin when given no file: sbatch(1)); its job-id line goes to
    /// stdout. With `wait`, sbatch's `--wait` returns when the array has
    /// ended, with the highest exit code of its tasks (sbatch(1), --wait).
    /// `started` is called once sbatch runs, so that a missing sbatch is
    /// the one line said.
    pub fn submit(&self, wait: bool, started: &mut dyn FnMut()) -> Result<(), String> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut cmd = Command::new("sbatch");
        cmd.arg("--parsable");
        if wait {
            cmd.arg("--wait");
        }
        let mut child = cmd.stdin(Stdio::piped()).spawn().map_err(|e| {
            format!("sbatch: {e} (sbatch is Slurm's; on Debian, apt-get install slurm-client)")
        })?;
        started();
        let text = self.text();
        let fed = child
            .stdin
            .take()
            .map(|mut stdin| stdin.write_all(text.as_bytes()))
            .unwrap_or(Ok(()));
        let status = child.wait().map_err(|e| format!("sbatch: {e}"))?;
        if !status.success() {
            if wait {
                return Err(format!(
                    "sbatch --wait: {status}: the job was refused or one of its tasks failed (see {}-JOB_TASK.out); submitting again runs only the missing points",
                    self.job_name
                ));
            }
            return Err(format!("sbatch: {status}: the job was not submitted"));
        }
        fed.map_err(|e| format!("sbatch's stdin: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_has_the_array_the_cpus_and_the_run_line() {
        let s = Script {
            spec: "sweeps/mixed.toml".into(),
            store: "/shared/store dir".into(),
            tasks: 4,
            cpus_per_task: 8,
            job_name: "sweep".into(),
            binary: "cinterrupts".into(),
            partition: None,
            exclusive: false,
        }
        .text();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "#!/bin/bash");
        assert!(lines.contains(&"#SBATCH --array=0-3"));
        assert!(lines.contains(&"#SBATCH --cpus-per-task=8"));
        assert!(lines.contains(
            &"cinterrupts sweep run sweeps/mixed.toml --store '/shared/store dir' --shard \"${SLURM_ARRAY_TASK_ID}/4\""
        ));
        assert!(s.contains("sweep merge '/shared/store dir'"));
        assert!(!s.contains("--partition"));
        assert!(!s.contains("--exclusive"), "simulator points share a node");
    }

    #[test]
    fn the_search_driver_submits_each_round_as_an_array_until_none_is_left() {
        let s = Script {
            spec: "s.toml".into(),
            store: "/shared/st".into(),
            tasks: 3,
            cpus_per_task: 2,
            job_name: "search".into(),
            binary: "cinterrupts".into(),
            partition: Some("debug".into()),
            exclusive: false,
        }
        .search_driver(SearchRounds {
            seed: 5,
            budget: Some(300),
        });
        let search = "cinterrupts sweep search s.toml --store /shared/st --seed 5 --budget 300";
        assert!(
            s.contains(&format!("points=$({search} --round \"$round\" --count)")),
            "{s}"
        );
        assert!(
            s.contains("--array=0-2 --cpus-per-task=2 --partition=debug"),
            "{s}"
        );
        assert!(
            s.contains("--round $round --shard \\${SLURM_ARRAY_TASK_ID}/3 --quiet\""),
            "{s}"
        );
        assert!(s.trim_end().ends_with(search), "{s}");
        // bash reads it (the syntax, not a run).
        let o = std::process::Command::new("bash")
            .args(["-n", "-c", &s])
            .output()
            .expect("bash");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    #[test]
    fn a_partition_and_emulator_exclusivity_are_sbatch_lines_before_the_commands() {
        let s = Script {
            spec: "s.toml".into(),
            store: "st".into(),
            tasks: 2,
            cpus_per_task: 1,
            job_name: "sweep".into(),
            binary: "cinterrupts".into(),
            partition: Some("debug queue".into()),
            exclusive: true,
        }
        .text();
        let lines: Vec<&str> = s.lines().collect();
        let at = lines
            .iter()
            .position(|l| *l == "#SBATCH --partition='debug queue'")
            .expect(&s);
        // sbatch reads #SBATCH lines only before the first command.
        let first_command = lines.iter().position(|l| l.starts_with("set ")).unwrap();
        assert!(at < first_command, "{s}");
        let exclusive = lines.iter().position(|l| *l == "#SBATCH --exclusive");
        assert!(exclusive.is_some_and(|e| e < first_command), "{s}");
    }
}
