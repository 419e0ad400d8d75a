//! Issue 28: a sweep through a real Slurm. The test starts a single-node
//! cluster on localhost (Debian 12's slurm-wlm 22.05: slurmctld, slurmd,
//! and its own munged, each a child process on free ports with every file
//! in a temporary directory), submits a 16-point spec with
//! `cinterrupts sweep slurm --submit --wait` as 4 array tasks, and checks
//! that the merged store is byte for byte the table and fronts of the same
//! spec run on one machine. The daemons are stopped when the test ends,
//! whether it passed or not; on a failure their logs are printed.

mod common;

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// 2 strategies x 2 deltas x 2 thrs x 2 seeds: 16 points, 4 per task.
const SPEC: &str = r#"
workloads = ["mixed-16.fio"]
devices = ["optane"]
seeds = [1, 2]
runtime = "20ms"
strategies = [
  { name = "adaptive", grid = { delta = ["2us", "6us"], thr = [16, 32] } },
  { name = "cint", grid = { delta = ["2us", "6us"], thr = [16, 32] } },
]
"#;

/// The node's CPUs and memory (MB) as slurm.conf states them. CPUs=2 is
/// this machine's (the node runs two 1-CPU tasks at once); slurmd checks
/// only that the real node has at least as much (slurm.conf(5), NodeName:
/// "If the node has less than the configured resources it is set DRAIN").
const NODE_CPUS: u32 = 2;
const NODE_MEMORY_MB: u32 = 1000;

/// How long the cluster may take to come up (the node idle in sinfo) and
/// the array to run. sbatch --wait polls the job after 2 s and then 8 s
/// later (Slurm 22.05 src/sbatch/sbatch.c, _job_wait: the sleep starts at
/// 2 s and is multiplied by 4 while under MinJobAge/2, MinJobAge being
/// 300 s by default: slurm.conf(5)), so a quick array returns after about
/// 10 s (measured: 10.1 s).
const UP_TIMEOUT: Duration = Duration::from_secs(30);
const JOB_TIMEOUT: Duration = Duration::from_secs(60);

/// A port nothing listens on now (the kernel's pick for port 0), held
/// until the configuration is written.
fn free_port() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").unwrap()
}

/// The cluster's daemons and directory. Dropping it stops the daemons
/// (SIGTERM, then SIGKILL after 5 s) and, if the test is failing, prints
/// their logs.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let munged = program("munged", "munge");
        let mungekey = program("mungekey", "munge");
        let slurmctld = program("slurmctld", "slurmctld");
        let slurmd = program("slurmd", "slurmd");
        // sweep slurm --submit runs sbatch from the PATH.
        require("sbatch", "slurm-client");
        require("sinfo", "slurm-client");
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        assert!(
            root,
            "the local Slurm runs as root (SlurmUser=root; slurmd starts jobs as their user): run this test as root"
        );
        let dir = dir.join("slurm");
        for d in ["state", "spool"] {
            fs::create_dir_all(dir.join(d)).unwrap();
        }
        let mut c = Cluster {
            conf: dir.join("slurm.conf"),
            dir,
            daemons: Vec::new(),
        };
        c.start_munge(&munged, &mungekey);
        let (ctld, d) = (free_port(), free_port());
        let conf = slurm_conf(
            &c.dir,
            ctld.local_addr().unwrap().port(),
            d.local_addr().unwrap().port(),
        );
        fs::write(&c.conf, conf).unwrap();
        drop((ctld, d));
        let f = c.conf.to_str().unwrap().to_string();
        c.spawn("slurmctld", Command::new(&slurmctld).args(["-D", "-f", &f]));
        c.spawn(
            "slurmd",
            Command::new(&slurmd).args(["-D", "-N", NODE, "-f", &f]),
        );
        c.wait_idle();
        c
    }

    /// munged with its own key, socket, pid, log and seed files (munged(8)),
    /// so the test needs neither the system's munged nor its key.
    fn start_munge(&mut self, munged: &Path, mungekey: &Path) {
        let key = self.dir.join("munge.key");
        let o = Command::new(mungekey)
            .arg("--create")
            .arg(format!("--keyfile={}", key.display()))
            .output()
            .unwrap();
        assert!(o.status.success(), "mungekey: {}", stderr(&o));
        let socket = self.dir.join("munge.socket");
        let file = |flag: &str, name: &str| format!("--{flag}={}", self.dir.join(name).display());
        let args = [
            "-F".to_string(),
            format!("--socket={}", socket.display()),
            format!("--key-file={}", key.display()),
            file("pid-file", "munged.pid"),
            file("log-file", "munged.log"),
            file("seed-file", "munged.seed"),
        ];
        self.spawn("munged", Command::new(munged).args(args));
        let start = Instant::now();
        while !socket.exists() {
            assert!(
                start.elapsed() < UP_TIMEOUT,
                "munged made no socket in {UP_TIMEOUT:?}"
            );
            self.assert_running();
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts a daemon in the foreground, its output in DIR/NAME.out.
    fn spawn(&mut self, name: &'static str, cmd: &mut Command) {
        let out = fs::File::create(self.dir.join(format!("{name}.out"))).unwrap();
        let child = cmd
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        self.daemons.push((name, child));
    }

    /// Fails if a daemon has exited.
    fn assert_running(&mut self) {
        for (name, child) in &mut self.daemons {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("{name} exited ({status}) while the cluster came up");
            }
        }
    }

    /// A Slurm client command against this cluster.
    fn client(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }

    /// Waits until sinfo shows the node idle (slurmd registered).
    fn wait_idle(&mut self) {
        let start = Instant::now();
        loop {
            let o = self
                .client("sinfo")
                .args(["-h", "-N", "-o", "%N %T"])
                .output()
                .unwrap();
            let shown = stdout(&o);
            if shown.trim() == format!("{NODE} idle") {
                return;
            }
            assert!(
                start.elapsed() < UP_TIMEOUT,
                "the node is not idle after {UP_TIMEOUT:?}: sinfo says {shown:?} {}",
                stderr(&o)
            );
            self.assert_running();
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Slurm's daemons first, munged (which they talk to) last.
        for (_, child) in self.daemons.iter_mut().rev() {
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: the pid of our own child, not yet waited for.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let start = Instant::now();
            while matches!(child.try_wait(), Ok(None)) {
                if start.elapsed() > Duration::from_secs(5) {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        if std::thread::panicking() {
            // The array tasks' output, beside the cluster's directory.
            let tasks = self.dir.parent().and_then(|d| fs::read_dir(d).ok());
            for e in tasks.into_iter().flatten().filter_map(Result::ok) {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("cinterrupts-sweep-") && name.ends_with(".out") {
                    let text = fs::read_to_string(e.path()).unwrap_or_default();
                    eprintln!("--- {name}\n{text}");
                }
            }
            for name in [
                "slurmctld.log",
                "slurmd.log",
                "slurmctld.out",
                "slurmd.out",
                "munged.log",
            ] {
                let text = fs::read_to_string(self.dir.join(name)).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(30).collect();
                eprintln!("--- {name} (last lines)");
                for line in tail.iter().rev() {
                    eprintln!("{line}");
                }
            }
        }
    }
}

/// The node's name in slurm.conf, given to slurmd with -N (slurmd(8)), so
/// the test does not depend on this machine's hostname.
const NODE: &str = "sweepnode";

/// A single-node slurm.conf (slurm.conf(5), Slurm 22.05) with every file in
/// `dir`. No cgroups (a container or VM may not delegate them): process
/// tracking by /proc (proctrack/linuxproc), no task binding (task/none),
/// no accounting (jobacct_gather/none, accounting_storage/none).
fn slurm_conf(dir: &Path, ctld_port: u16, slurmd_port: u16) -> String {
    let d = dir.display();
    format!(
        "# Written by crates/cli/tests/sweep_slurm.rs: a one-node cluster on localhost.
ClusterName=cinterrupts-sweep-test
# slurmctld accepts localhost as its own name (it runs here).
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
# The daemons' users (slurm.conf(5)): root, which the test runs as and
# slurmd needs to start jobs as their submitter.
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# The test's own munged (slurm.conf(5), AuthInfo: socket=PATH).
AuthInfo=socket={d}/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
# slurm.conf(5): processes tracked by their parent pid in /proc, no task
# affinity or cgroup plugin (so no cgroup.conf is read).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
# The default MailProg, /bin/mail, is not in Debian's slurm packages;
# slurmctld logs an error at start without one.
MailProg=/bin/true
# CPUs are what a job takes (slurm.conf(5), SelectTypeParameters=CR_CPU):
# two 1-CPU array tasks run at once on the 2-CPU node.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# A node that registers after being down is usable again at once.
ReturnToService=2
NodeName={NODE} NodeAddr=127.0.0.1 NodeHostname=localhost CPUs={NODE_CPUS} RealMemory={NODE_MEMORY_MB} State=UNKNOWN
PartitionName=sweep Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"
    )
}

/// The program's path: on the PATH, or in the sbin directories where
/// Debian puts the daemons and which a non-login PATH may lack. Missing,
/// the test fails naming scripts/setup (common's `require`).
#[track_caller]
fn program(name: &str, package: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    match found {
        Some(p) => p,
        None => {
            require(name, package);
            unreachable!("require fails when {name} is not on the PATH")
        }
    }
}

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}\n{}", stdout(o), stderr(o));
    stdout(o)
}

#[test]
fn a_sweep_through_a_local_slurm_in_4_array_tasks_merges_into_the_one_machine_table() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let example = format!("{}/../../examples/mixed-16.fio", env!("CARGO_MANIFEST_DIR"));
    fs::copy(example, dir.join("mixed-16.fio")).unwrap();
    let spec = write(dir, "sweep.toml", SPEC);
    let cluster = Cluster::start(dir);
    let up = started.elapsed();

    // The array: 4 tasks of 1 CPU, all into one store.
    let store = dir.join("slurm-store");
    let mut submit = bin();
    submit
        .args([
            "sweep",
            "slurm",
            &spec,
            "--tasks",
            "4",
            "--cpus-per-task",
            "1",
        ])
        .args(["--partition", "sweep", "--store", store.to_str().unwrap()])
        .args(["--submit", "--wait"])
        .env("SLURM_CONF", &cluster.conf)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = submit.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > JOB_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            let queue = cluster
                .client("squeue")
                .args(["-h", "-o", "%i %T %r"])
                .output()
                .unwrap();
            panic!(
                "the array did not end in {JOB_TIMEOUT:?}; squeue (job, state, reason):\n{}{}",
                stdout(&queue),
                stderr(&queue)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.wait_with_output().unwrap();
    let job = ok(&o);
    // sbatch --parsable prints the job id (and ";cluster" on a federation).
    let job = job.trim().split(';').next().unwrap().to_string();
    assert!(job.parse::<u32>().is_ok(), "not a job id: {job:?}");
    let ran = start.elapsed();

    // Each task ran its own quarter (the shard from SLURM_ARRAY_TASK_ID).
    for k in 0..4 {
        let out = dir.join(format!("cinterrupts-sweep-{job}_{k}.out"));
        let text = fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        assert!(text.contains(&format!("shard {k}/4")), "task {k}: {text}");
        assert!(
            text.contains("4 points: 0 finished before, 4 run now, 0 failed"),
            "task {k}: {text}"
        );
    }
    drop(cluster);

    // The same spec on this machine alone, and both stores merged.
    let whole = dir.join("whole-store");
    ok(&run(&[
        "sweep",
        "run",
        &spec,
        "-q",
        "--store",
        whole.to_str().unwrap(),
    ]));
    let merged = |store: &Path, out: &str| {
        let out = dir.join(out);
        let said = ok(&run(&[
            "sweep",
            "merge",
            store.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]));
        assert!(said.starts_with("16 points from 1 stores"), "{said}");
        out
    };
    let one = merged(&whole, "merged-one");
    let slurm = merged(&store, "merged-slurm");
    for name in MERGED_FILES {
        let a = merged_results(&one, name);
        let b = merged_results(&slurm, name);
        assert!(
            a == b,
            "{name} differs between the one-machine and the Slurm run"
        );
    }
    let rows = fs::read_to_string(slurm.join("table.csv")).unwrap();
    assert_eq!(rows.lines().count(), 17, "a header and 16 rows");
    eprintln!(
        "local Slurm: up in {:.1} s, the array ran in {:.1} s, {:.1} s in all",
        up.as_secs_f64(),
        ran.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}
