//! The fio options that change what is measured, one test each (issue 13
//! item 1): each as fio defines it (options.c, HOWTO.rst), applied through
//! the [`jobs::Issuer`] every front end uses.

use jobs::{Decision, Engine, Issuer, Job, Waiter};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn jobs_of(text: &str) -> Vec<Job> {
    jobs::parse_str(text, "t.fio", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs
}

fn job(text: &str) -> Job {
    jobs_of(&format!("[a]\n{text}")).remove(0)
}

fn refusal(text: &str) -> String {
    jobs::parse_str(&format!("[a]\n{text}"), "t.fio", &|_| None)
        .unwrap_err()
        .to_string()
}

/// The requests a job issues, completing each batch at once, until `n`.
fn issued(j: &Job, n: usize, seed: u64) -> Vec<jobs::Io> {
    let mut iss = Issuer::new(j, j.bounds(None).unwrap(), 0);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut now = 0;
    while out.len() < n {
        match iss.next(now, 0, &mut rng) {
            Decision::Issue(mut b) => {
                while let Some(io) = iss.take(&mut b, &mut rng) {
                    out.push(io);
                }
            }
            Decision::SleepUntil(t) => now = t,
            Decision::Done => break,
            Decision::Reap(_) => unreachable!("nothing is in flight"),
        }
    }
    out
}

#[test]
fn the_null_engine_queues_like_an_async_engine_and_keeps_its_depth() {
    let j = job("ioengine=null\niodepth=16\niodepth_batch_submit=16\nsize=1m\n");
    assert_eq!(j.ioengine, Engine::Null);
    assert_eq!(j.io_loop().iodepth, 16);
    assert_eq!(Waiter::of(j.ioengine), Waiter::IoUring);
    let ios = issued(&j, 16, 1);
    assert_eq!(ios.len(), 16);
}

/// Counts of each block size over many draws, for the job's reads.
fn sizes_of(text: &str, n: usize) -> std::collections::BTreeMap<u64, usize> {
    let mut m = std::collections::BTreeMap::new();
    for io in issued(&job(text), n, 5) {
        *m.entry(io.bytes).or_insert(0) += 1;
    }
    m
}

#[test]
fn bssplit_draws_each_size_in_its_proportion() {
    // fio HOWTO `bssplit`: "bssplit=4k/10:64k/50:32k/40" gives 10% 4k,
    // 50% 64k, 40% 32k.
    let m = sizes_of(
        "rw=randread\nbssplit=4k/10:64k/50:32k/40\nnumber_ios=200000\n",
        200_000,
    );
    let n: usize = m.values().sum();
    assert_eq!(n, 200_000);
    assert_eq!(m.keys().copied().collect::<Vec<_>>(), [4096, 32768, 65536]);
    for (bs, want) in [(4096, 0.10), (32768, 0.40), (65536, 0.50)] {
        let got = m[&bs] as f64 / n as f64;
        assert!((got - want).abs() < 0.005, "{bs}: {got} not {want}");
    }
}

#[test]
fn bssplit_shares_what_is_left_between_entries_without_a_percent() {
    // options.c bssplit_ddir: "divide the remains between them".
    let j = job("bssplit=4k/50:8k/:16k/\nsize=1g\n");
    let jobs::BlockSizes::Split(s) = j.block_sizes(false) else {
        panic!("a split")
    };
    let mut got: Vec<(u64, u32)> = s.iter().map(|e| (e.bs, e.perc)).collect();
    got.sort_unstable();
    assert_eq!(got, [(4096, 50), (8192, 25), (16384, 25)]);
    // Reads and writes split apart with a comma.
    let j = job("rw=randrw\nbssplit=4k/100,64k/100\nsize=1g\n");
    assert_eq!(
        (j.block_sizes(false).max(), j.block_sizes(true).max()),
        (4096, 65536)
    );
    for io in issued(&j, 1000, 2) {
        assert_eq!(io.bytes, if io.write { 65536 } else { 4096 });
    }
}

#[test]
fn bssplit_and_bsrange_win_over_bs_whatever_the_order() {
    let j = job("bssplit=8k/100\nbs=4k\nsize=1g\n");
    assert_eq!(j.block_sizes(false).max(), 8192);
    let j = job("bsrange=1k-8k\nbs=4k\nsize=1g\n");
    assert_eq!(
        j.block_sizes(false),
        jobs::BlockSizes::Range {
            min: 1024,
            max: 8192
        }
    );
}

#[test]
fn bsrange_draws_multiples_of_its_minimum_and_clamps_at_its_maximum() {
    // io_u.c get_next_buflen: min + max * u, aligned down to min, clamped to
    // max: the maximum takes min/max of the draws beyond its share.
    let m = sizes_of("rw=randread\nbsrange=4k-16k\nnumber_ios=100000\n", 100_000);
    let n: usize = m.values().sum();
    assert_eq!(n, 100_000);
    assert_eq!(
        m.keys().copied().collect::<Vec<_>>(),
        [4096, 8192, 12288, 16384]
    );
    // 4k + 16k*u spans 4k..20k: each 4k step is a quarter of the draws,
    // the last (16k..20k) clamped to 16k.
    for (bs, count) in &m {
        let share = *count as f64 / n as f64;
        assert!((share - 0.25).abs() < 0.01, "{bs}: {share}");
    }
    // With bsrange=4k-8k the sum spans 4k..12k: 8k takes the upper half
    // and the clamped 8k..12k, three quarters.
    let m = sizes_of("rw=randread\nbsrange=4k-8k\nnumber_ios=100000\n", 100_000);
    let share = m[&8192] as f64 / 100_000.0;
    assert!((share - 0.5).abs() < 0.01, "{share}");
    // One bs draws nothing: the random stream is as before.
    let a = issued(&job("rw=randrw\nsize=1g\n"), 100, 9);
    let b = issued(&job("rw=randrw\nbsrange=4k-4k\nsize=1g\n"), 100, 9);
    assert_eq!(a, b);
}

/// When each of the first `n` I/Os is issued, nothing ever in flight.
fn issue_times(j: &Job, n: usize) -> Vec<u64> {
    let mut iss = Issuer::new(j, j.bounds(None).unwrap(), 0);
    let mut rng = StdRng::seed_from_u64(1);
    let (mut now, mut out) = (0, Vec::new());
    while out.len() < n {
        match iss.next(now, 0, &mut rng) {
            Decision::Issue(mut b) => {
                while iss.take(&mut b, &mut rng).is_some() {
                    out.push(now);
                }
            }
            Decision::SleepUntil(t) => now = t,
            d => panic!("{d:?}"),
        }
    }
    out
}

#[test]
fn rate_paces_bytes_per_second_with_k_as_1024() {
    // rate=1m: 1 MiB/s; 4 KiB I/Os are due every 1/256 s.
    let t = issue_times(&job("rw=randread\nbs=4k\nrate=1m\nsize=1g\n"), 5);
    let step = 1_000_000_000u64 * 4096 / (1 << 20);
    assert_eq!(t, (0..5).map(|k| k * step).collect::<Vec<_>>());
    // With bs=8k the same rate issues half as many.
    let t = issue_times(&job("rw=randread\nbs=8k\nrate=1m\nsize=1g\n"), 3);
    assert_eq!(t, [0, 2 * step, 4 * step]);
    // rate wins over rate_iops in its direction (init.c __setup_rate).
    let t = issue_times(
        &job("rw=randread\nbs=4k\nrate=1m\nrate_iops=10\nsize=1g\n"),
        2,
    );
    assert_eq!(t[1], step);
}

#[test]
fn rate_iops_with_mixed_sizes_paces_min_bs_bytes() {
    // init.c __setup_rate: rate_bps = rate_iops * min_bs. 1000 IOPS of
    // 4k-8k: the second I/O waits for the first one's bytes at 4 MB/s.
    let j = job("rw=randread\nbssplit=4k/50:8k/50\nrate_iops=1000\nsize=1g\n");
    let ios = issued(&j, 1, 1);
    let t = issue_times(&j, 2);
    assert_eq!(t[1], ios[0].bytes * 1_000_000_000 / (1000 * 4096));
}

fn offsets(text: &str, size: u64, n: usize) -> Vec<u64> {
    let j = job(text);
    let mut rng = StdRng::seed_from_u64(3);
    let mut o = jobs::Offsets::new(&j, (0, size), &mut rng);
    let bs = j.bs_read;
    (0..n).map(|_| o.next(false, bs, &mut rng)).collect()
}

#[test]
fn rw_read_with_a_step_skips_that_much_after_each_io() {
    // HOWTO `rw`: "rw=write:4k will skip 4k for every write".
    assert_eq!(
        offsets("rw=read:4k\nbs=4k\nsize=1m\n", 1 << 20, 4),
        [0, 8192, 16384, 24576]
    );
}

#[test]
fn rw_read_with_a_negative_step_reads_backwards() {
    // fio's examples/backwards-read.fio: bs=4k, rw=read:-8k.
    let size = 128 << 10;
    let got = offsets("rw=read:-8k\nbs=4k\nsize=128k\n", size, 4);
    assert_eq!(got, [0, size - 8192, size - 12288, size - 16384]);
}

#[test]
fn randread_with_n_takes_a_new_random_offset_every_n_ios() {
    // HOWTO `rw`: "randread:8 ... a new random offset for every 8 I/Os";
    // between them the I/Os are sequential.
    let got = offsets("rw=randread:8\nbs=4k\nsize=1g\n", 1 << 30, 64);
    let jumps = got.windows(2).filter(|w| w[1] != w[0] + 4096).count();
    assert!((6..=8).contains(&jumps), "{jumps} jumps in 64 I/Os");
    // io_u.c get_next_offset counts down from N: the first seven go on
    // sequentially from 0, the eighth is random.
    assert_eq!(&got[..7], (0..7).map(|i| i * 4096).collect::<Vec<_>>());
    assert_ne!(got[7], 7 * 4096);
}

#[test]
fn nrfiles_serves_its_files_round_robin_each_its_share_of_size() {
    // HOWTO `nrfiles`: size divided between the files; file_service_type
    // defaults to roundrobin, one I/O per file.
    let got = offsets("rw=read\nbs=4k\nnrfiles=4\nsize=1m\n", 1 << 20, 8);
    let f = 256 << 10;
    assert_eq!(
        got,
        [
            0,
            f,
            2 * f,
            3 * f,
            4096,
            f + 4096,
            2 * f + 4096,
            3 * f + 4096
        ]
    );
}

/// The share of draws that land on the `top` most drawn blocks.
fn top_share(text: &str, blocks: u64, draws: usize, top: usize) -> f64 {
    let j = job(text);
    let mut rng = StdRng::seed_from_u64(11);
    let mut o = jobs::Offsets::new(&j, (0, blocks * 4096), &mut rng);
    let mut hits = std::collections::HashMap::new();
    for _ in 0..draws {
        *hits.entry(o.next(false, 4096, &mut rng)).or_insert(0usize) += 1;
    }
    let mut counts: Vec<usize> = hits.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts.iter().take(top).sum::<usize>() as f64 / draws as f64
}

#[test]
fn zipf_skews_draws_to_the_hottest_blocks_as_zipfs_law_says() {
    // P(rank i) = i^-theta / zeta(n, theta): fio's zipf_next (Gray et al.'s
    // method, lib/zipf.c) follows it on the hottest ranks (skew.rs's own
    // test checks the ranks). fio then scatters ranks with a hash modulo
    // the blocks, which merges a few ranks into one block: the hottest
    // blocks take at least the law's share, and a little more.
    let (n, theta) = (10_000u64, 1.2f64);
    let zeta: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
    let draws = 400_000;
    for top in [1usize, 10, 100] {
        let want: f64 = (1..=top).map(|i| (i as f64).powf(-theta)).sum::<f64>() / zeta;
        let got = top_share(
            "rw=randread\nbs=4k\nrandom_distribution=zipf:1.2\nsize=1g\n",
            n,
            draws,
            top,
        );
        assert!(
            got > 0.97 * want && got < 1.15 * want,
            "top {top}: {got:.4} vs {want:.4}"
        );
    }
    // Uniform draws have no such skew.
    let uniform = top_share("rw=randread\nbs=4k\nsize=1g\n", n, draws, 100);
    assert!(uniform < 0.02, "{uniform}");
}

#[test]
fn zipf_defaults_to_fios_theta_and_refuses_one() {
    let j = job("rw=randread\nrandom_distribution=zipf\nsize=1g\n");
    assert_eq!(
        j.distribution,
        jobs::Distribution::Zipf {
            theta: 1.1,
            center: None
        }
    );
    assert!(refusal("random_distribution=zipf:1\n").contains("theta"));
}

#[test]
fn pareto_sends_80_percent_of_draws_to_20_percent_of_blocks_by_default() {
    // fio's default pareto h=0.2 (fio.h FIO_DEF_PARETO): n * u^(ln h /
    // ln(1-h)) puts 80% of the draws in the lowest 20% of the blocks.
    let n = 10_000u64;
    let got = top_share(
        "rw=randread\nbs=4k\nrandom_distribution=pareto\nsize=1g\n",
        n,
        400_000,
        2_000,
    );
    // At least 80% (fio's hash merges a few ranks into one block).
    assert!((0.78..0.9).contains(&got), "{got}");
}

#[test]
fn normal_concentrates_draws_around_the_middle() {
    // lib/gauss.c: the mean of 12 uniforms; with hashing off the peak would
    // be the middle block. With fio's hash on, a few blocks still take most.
    let n = 10_000u64;
    let got = top_share(
        "rw=randread\nbs=4k\nrandom_distribution=normal\nsize=1g\n",
        n,
        200_000,
        2_000,
    );
    let uniform = top_share("rw=randread\nbs=4k\nsize=1g\n", n, 200_000, 2_000);
    assert!(got > uniform + 0.2, "normal {got} vs uniform {uniform}");
}

#[test]
fn zoned_sends_each_share_of_accesses_to_its_share_of_the_file() {
    // fio's examples/rand-zones.fio: 50% of accesses to the first 5%, 30% to
    // the next 15%, 20% to the remaining 80%.
    let j = job("rw=randread\nbs=4k\nrandom_distribution=zoned:50/5:30/15:20/\nsize=1g\n");
    let size = 10_000 * 4096;
    let mut rng = StdRng::seed_from_u64(4);
    let mut o = jobs::Offsets::new(&j, (0, size), &mut rng);
    let n = 100_000;
    let mut zone = [0usize; 3];
    for _ in 0..n {
        let at = o.next(false, 4096, &mut rng) as f64 / size as f64;
        zone[if at < 0.05 {
            0
        } else if at < 0.20 {
            1
        } else {
            2
        }] += 1;
    }
    for (z, want) in zone.iter().zip([0.5, 0.3, 0.2]) {
        assert!((*z as f64 / n as f64 - want).abs() < 0.01, "{zone:?}");
    }
}

#[test]
fn stonewall_waits_for_every_earlier_section_and_its_clones_start_together() {
    let js = jobs_of("[a]\nsize=1m\n[b]\nsize=1m\n[c]\nstonewall\nnumjobs=2\nsize=1m\n[d]\nsize=1m\n[e]\nwait_for_previous\nsize=1m\n");
    let order = jobs::serial_order(&js).unwrap();
    // a, b, c.0, c.1, d, e
    assert_eq!(
        order,
        [
            vec![],
            vec![],
            vec![0, 1],
            vec![0, 1],
            vec![0, 1],
            vec![0, 1, 2, 3, 4]
        ]
    );
    // Without a wall nothing waits.
    let js = jobs_of("[a]\nsize=1m\n[b]\nsize=1m\n");
    assert!(jobs::serial_order(&js).unwrap().iter().all(Vec::is_empty));
    // stonewall in [global] serialises every section.
    let js = jobs_of("[global]\nstonewall\nsize=1m\n[a]\n[b]\n[c]\n");
    assert_eq!(
        jobs::serial_order(&js).unwrap(),
        [vec![], vec![0], vec![0, 1]]
    );
}

#[test]
fn wait_for_names_an_earlier_job_and_waits_for_all_its_clones() {
    // fio's examples/waitfor.fio shape: readers wait for 4 writers.
    let js = jobs_of(
        "[writers]\nnumjobs=4\nsize=1m\n[other]\nsize=1m\n[readers]\nwait_for=writers\nsize=1m\n",
    );
    let order = jobs::serial_order(&js).unwrap();
    assert_eq!(order[5], [0, 1, 2, 3]);
    assert!(order[4].is_empty());
    // init.c wait_for_ok: unknown, self and forward references are refused.
    for text in [
        "[a]\nwait_for=b\nsize=1m\n[b]\nsize=1m\n",
        "[a]\nwait_for=a\nsize=1m\n",
        "[a]\nwait_for=zzz\nsize=1m\n",
    ] {
        let js = jobs_of(text);
        let (i, why) = jobs::serial_order(&js).unwrap_err();
        assert_eq!(i, 0, "{text}");
        assert!(why.starts_with("option 'wait_for'"), "{why}");
    }
}

#[test]
fn sequence_visits_its_blocks_in_turn_and_strides_on_when_asked() {
    // fio's examples/sequence-distribution.fio: "2, 0, 1, 2, 0, 1" and,
    // with random_sequence_stride=1, "2, 0, 1, 5, 3, 4".
    let text = "rw=randread\nbs=4k\nsize=48k\nrandom_distribution=sequence:2,0,1\n";
    let blocks =
        |t: &str| -> Vec<u64> { offsets(t, 48 << 10, 6).iter().map(|o| o / 4096).collect() };
    assert_eq!(blocks(text), [2, 0, 1, 2, 0, 1]);
    assert_eq!(
        blocks(&format!("{text}random_sequence_stride=1\n")),
        [2, 0, 1, 5, 3, 4]
    );
    assert!(refusal("random_distribution=sequence:1,-2\n").contains("invalid or negative"));
}

#[test]
fn options_that_end_jobs_early_or_search_the_depth_are_refused_saying_why() {
    for (text, why) in [
        ("exitall\n", "ending every job when one finishes"),
        (
            "latency_target=1ms\n",
            "queue depth that meets a latency target",
        ),
        ("continue_on_error=all\n", "an I/O error ends the job"),
        ("io_submit_mode=offload\n", "offloaded submission"),
    ] {
        let e = refusal(text);
        assert!(e.contains(why), "{text}: {e}");
    }
    // fio's defaults of the same options are what is modelled, and both of
    // rate_process's processes (HOWTO rate_process).
    for text in [
        "io_submit_mode=inline\n",
        "rate_process=linear\n",
        "rate_process=poisson\n",
        "file_service_type=roundrobin\n",
    ] {
        job(&format!("{text}size=1m\n"));
    }
}

#[test]
fn rwmixread_splits_a_mixed_job_in_its_proportion() {
    // HOWTO rwmixread: "Percentage of a mixed workload that should be
    // reads"; rwmixwrite=30 says the same.
    for text in [
        "rw=randrw\nrwmixread=70\nnumber_ios=100000\n",
        "rw=randrw\nrwmixwrite=30\nnumber_ios=100000\n",
        "rw=rw\nrwmixread=70\nnumber_ios=100000\n",
    ] {
        let ios = issued(&job(text), 100_000, 8);
        let reads = ios.iter().filter(|io| !io.write).count() as f64 / ios.len() as f64;
        assert!((reads - 0.7).abs() < 0.01, "{text}: {reads}");
    }
}

#[test]
fn jobs_shows_what_changes_what_is_measured() {
    let js = jobs_of("[a]\nrw=randread:8\nbssplit=4k/20:64k/80\nrandom_distribution=zipf:1.2\nnrfiles=4\nrate=1m\nsize=1g\n[b]\nstonewall\nwait_for=a\nsize=1m\n");
    let a = js[0].describe();
    for want in [
        "read_bssplit=4096/20:65536/80",
        "random_every=8",
        "random_distribution=zipf:1.2",
        "nrfiles=4",
        "rate=1048576,1048576B/s",
    ] {
        assert!(a.contains(want), "{want} in {a}");
    }
    let b = js[1].describe();
    assert!(b.contains("stonewall") && b.contains("wait_for=a"), "{b}");
}

/// fio's own measure of a distribution (t/genzipf.c): draw as many values
/// as there are blocks, count the hits of each block hit, sort by hits,
/// and give the share of all hits on the top 10% and 20% of those blocks.
fn genzipf_rows(distribution: &str) -> (f64, f64) {
    let j = job(&format!(
        "rw=randread\nbs=4k\nsize=1g\nrandom_distribution={distribution}\n"
    ));
    let blocks = (1u64 << 30) / 4096;
    let mut rng = StdRng::seed_from_u64(1);
    let mut o = jobs::Offsets::new(&j, (0, 1 << 30), &mut rng);
    let mut hits = std::collections::HashMap::new();
    for _ in 0..blocks {
        *hits.entry(o.next(false, 4096, &mut rng)).or_insert(0u64) += 1;
    }
    let mut counts: Vec<u64> = hits.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    // genzipf's rows: interval_step = (nnodes - 1) / 10 + 1 nodes each.
    let step = (counts.len() - 1) / 10 + 1;
    let share =
        |rows: usize| counts.iter().take(rows * step).sum::<u64>() as f64 * 100.0 / blocks as f64;
    (share(1), share(2))
}

#[test]
fn zipf_and_pareto_match_fios_own_genzipf() {
    // Measured on this machine with fio's tool, Debian fio 3.33-3:
    // `fio-genzipf -t zipf -i 1.2 -b 4096 -g 1 -o 10` (and -i 0.5, -i 1.1,
    // `-t pareto -i 0.2`): the "Sum %" of the Top 10% and 20% rows.
    for (dist, top10, top20) in [
        ("zipf:1.2", 88.76, 91.58),
        ("zipf:1.1", 81.97, 86.30),
        ("zipf:0.5", 28.89, 43.48),
        ("pareto:0.2", 63.55, 71.37),
    ] {
        let (a, b) = genzipf_rows(dist);
        assert!(
            (a - top10).abs() < 1.5 && (b - top20).abs() < 1.5,
            "{dist}: top 10% {a:.2} (fio {top10}), top 20% {b:.2} (fio {top20})"
        );
    }
}

#[test]
fn a_rate_held_job_lets_everything_in_flight_complete_then_sleeps() {
    // io_u.c rate_ddir: ahead of its rate, fio quiesces (io_u_quiesce,
    // io_submit_mode=inline) and sleeps until the next I/O is due.
    let j = job("ioengine=libaio\niodepth=8\nrw=randread\nbs=4k\nrate_iops=1000\nsize=1g\n");
    let mut iss = Issuer::new(&j, j.bounds(None).unwrap(), 0);
    let mut rng = StdRng::seed_from_u64(1);
    let Decision::Issue(mut b) = iss.next(0, 0, &mut rng) else {
        panic!("the first is due at once")
    };
    while iss.take(&mut b, &mut rng).is_some() {}
    // The second is due at 1 ms: with one in flight it waits for it first.
    assert!(matches!(iss.next(10, 1, &mut rng), Decision::Reap(r) if r.min == 1));
    assert_eq!(iss.next(20, 0, &mut rng), Decision::SleepUntil(1_000_000));
    assert!(matches!(
        iss.next(1_000_000, 0, &mut rng),
        Decision::Issue(_)
    ));
}

#[test]
fn a_mixed_job_ahead_of_its_rate_in_one_direction_takes_the_other() {
    // rate_ddir: "Other direction is behind rate, switch". Writes are
    // capped, reads not: every I/O after the first write is a read until
    // the next write is due.
    let j = job("rw=randrw\nrwmixread=50\nbs=4k\nrate_iops=1000000,1\nsize=1g\n");
    let t = issue_times(&j, 1);
    assert_eq!(t, [0]);
    let ios = issued(&j, 200, 3);
    let writes = ios.iter().filter(|io| io.write).count();
    // 1 MIOPS of reads take 200 us; one write is due at 0, the next at 1 s.
    assert_eq!(writes, 1, "{writes} writes");
}
