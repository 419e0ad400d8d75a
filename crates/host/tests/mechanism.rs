//! `host::mechanism`'s table tested where it lives (issue 39 item 7): the
//! words each choice takes and prints, its parsers and their errors, the
//! help and `listing()` built from the rows, and what `Settings` derives
//! from them (describe, merge, the front ends, the kernel eras). Until
//! these the rows were checked only through the binary's tests, so
//! `cargo mutants -p cinterrupts-host` let them change unseen.
//!
//! Expected words come from the sources the rows cite: Linux's names
//! (`io_poll_delay`, blk-mq's `none`), FastResponse's (LD, fjournal,
//! SelectISR) and the defaults the module documents (LD's 8 tokens and
//! 32 KiB pieces, FR 3.3; interrupts unless told to poll).

use host::cfs::{BoostRule, Rule};
use host::era::{self, Kernel};
use host::fsync::FsyncConfig;
use host::ld::{DEFAULT_SPLIT, DEFAULT_TOKENS};
use host::mechanism::{
    listing, mechanism, BlockScheduler, FrontEnd, Journal, Kind, Settings, Wakeup, MECHANISMS,
};
use host::poll::{HybridSleep, Mode};
use host::uring::{self, Strategy};
use serde::de::value::{Error as DeError, StrDeserializer};
use serde::de::IntoDeserializer;
use serde::Deserialize;

/// What a host profile's value reads as (a TOML string goes through the
/// same `String` deserializer).
fn from_profile<'a, T: Deserialize<'a>>(s: &'a str) -> Result<T, String> {
    let d: StrDeserializer<'a, DeError> = s.into_deserializer();
    T::deserialize(d).map_err(|e| e.to_string())
}

fn kernel(s: &str) -> Kernel {
    s.parse().unwrap()
}

fn row(flag: &str) -> &'static host::mechanism::Mechanism {
    mechanism(flag).unwrap_or_else(|| panic!("no row --{flag}"))
}

/// Settings with one row set as the command line would.
fn with(flag: &str, value: &str) -> Settings {
    let mut s = Settings::default();
    (row(flag).set)(&mut s, value).unwrap();
    s
}

#[test]
fn the_block_scheduler_reads_none_and_ld_with_its_options() {
    assert_eq!("none".parse(), Ok(BlockScheduler::None));
    assert_eq!(BlockScheduler::default(), BlockScheduler::None);
    // FR 3.3's defaults: 8 tokens, 32 KiB pieces, the paper's
    // (non-opportunistic) critical path.
    assert_eq!(DEFAULT_TOKENS, 8);
    assert_eq!(DEFAULT_SPLIT, 32 * 1024);
    assert_eq!("ld".parse(), Ok(BlockScheduler::LD));
    assert_eq!(
        " ld , tokens=4 , split=64k , opportunistic ".parse(),
        Ok(BlockScheduler::Ld {
            tokens: 4,
            split: 64 * 1024,
            opportunistic: true
        })
    );
    // Sizes as fio writes them: bytes, k and m (either case) for KiB, MiB.
    let split = |v: &str| match format!("ld,split={v}").parse::<BlockScheduler>() {
        Ok(BlockScheduler::Ld { split, .. }) => Ok(split),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e),
    };
    assert_eq!(split("4096"), Ok(4096));
    assert_eq!(split("32K"), Ok(32 * 1024));
    assert_eq!(split("1m"), Ok(1024 * 1024));
    assert_eq!(split("2M"), Ok(2 * 1024 * 1024));
    // The smallest piece is a sector; a token is at least one.
    assert_eq!(split("512"), Ok(512));
    assert!(split("511").unwrap_err().contains("split=511"));
    assert!(split("0k").is_err());
    // 2^54 KiB is 2^64 bytes: past u64, an error, not a wrapped size.
    assert!(split(&format!("{}k", 1u64 << 54)).is_err());
    assert!(split("lots").is_err());
    match "ld,tokens=1".parse() {
        Ok(BlockScheduler::Ld { tokens: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
    let e = "ld,tokens=0".parse::<BlockScheduler>().unwrap_err();
    assert!(e.contains("tokens=0") && e.contains(">= 1"), "{e}");
    assert!("ld,tokens=-1".parse::<BlockScheduler>().is_err());
}

#[test]
fn a_bad_block_scheduler_is_named_with_what_it_takes() {
    let e = "none,tokens=4".parse::<BlockScheduler>().unwrap_err();
    assert!(e.contains("none takes no options ('tokens=4')"), "{e}");
    for bad in ["ld,fast", "ld,tokens", "ld,opportunistic=1"] {
        let e = bad.parse::<BlockScheduler>().unwrap_err();
        let opt = bad.strip_prefix("ld,").unwrap();
        assert!(e.contains(&format!("unknown option '{opt}'")), "{e}");
    }
    for bad in ["cfq", "mq-deadline", ""] {
        let e = bad.parse::<BlockScheduler>().unwrap_err();
        assert!(
            e.contains(&format!("unknown block scheduler '{bad}'")),
            "{e}"
        );
        assert!(e.contains("ld[,tokens=N]"), "{e}");
    }
}

#[test]
fn the_block_scheduler_prints_what_it_reads() {
    assert_eq!(BlockScheduler::None.to_string(), "none");
    assert_eq!(BlockScheduler::LD.to_string(), "ld,tokens=8,split=32k");
    // Whole KiB in k, the rest in bytes; opportunistic only when on.
    let ld = |tokens, split, opportunistic| BlockScheduler::Ld {
        tokens,
        split,
        opportunistic,
    };
    assert_eq!(
        ld(4, 2048, true).to_string(),
        "ld,tokens=4,split=2k,opportunistic"
    );
    assert_eq!(ld(2, 1536, false).to_string(), "ld,tokens=2,split=1536");
    assert_eq!(
        ld(1, 1024 * 1024, false).to_string(),
        "ld,tokens=1,split=1024k"
    );
    for b in [
        BlockScheduler::None,
        BlockScheduler::LD,
        ld(4, 2048, true),
        ld(3, 1536, false),
        ld(16, 1 << 20, true),
    ] {
        assert_eq!(b.to_string().parse(), Ok(b.clone()), "{b}");
    }
}

#[test]
fn wake_up_rules_name_the_cfs_rule_they_apply() {
    let all = [
        (Wakeup::Plain, "plain", None),
        (Wakeup::Vanilla, "vanilla", Some(Rule::Vanilla)),
        (Wakeup::Boost, "boost", Some(Rule::Boost(BoostRule::Paper))),
        (
            Wakeup::BoostCode,
            "boost-code",
            Some(Rule::Boost(BoostRule::Code)),
        ),
        // EEVDF is its own module, not a CFS rule.
        (Wakeup::Eevdf, "eevdf", None),
    ];
    for (w, word, rule) in all {
        assert_eq!(w.rule(), rule, "{word}");
        assert_eq!(w.to_string(), word);
        assert_eq!(format!(" {word} ").parse(), Ok(w));
        assert_eq!(from_profile(word), Ok(w));
    }
    assert_eq!(Wakeup::default(), Wakeup::Plain);
    let e = "fair".parse::<Wakeup>().unwrap_err();
    assert!(
        e.contains("unknown wake-up rule 'fair'") && e.contains("boost-code"),
        "{e}"
    );
    assert!(from_profile::<Wakeup>("fair")
        .unwrap_err()
        .contains("'fair'"));
}

#[test]
fn journal_modes_name_their_fsync_path() {
    for (j, word, config) in [
        (Journal::Ordered, "ordered", FsyncConfig::ORDERED),
        (Journal::Fjournal, "fjournal", FsyncConfig::FJOURNAL),
    ] {
        assert_eq!(j.config(), config, "{word}");
        assert_eq!(j.as_str(), word);
        assert_eq!(j.to_string(), word);
        assert_eq!(format!("{word} ").parse(), Ok(j));
        assert_eq!(from_profile(word), Ok(j));
    }
    assert_ne!(FsyncConfig::ORDERED, FsyncConfig::FJOURNAL);
    assert_eq!(Journal::default(), Journal::Ordered);
    let e = "writeback".parse::<Journal>().unwrap_err();
    assert!(
        e.contains("unknown journal mode 'writeback' (ordered, fjournal)"),
        "{e}"
    );
    assert!(from_profile::<Journal>("journal").is_err());
}

#[test]
fn completion_modes_say_who_polls() {
    // SelectISR polls the critical requests only (FR 4.1); hybrid and
    // classic poll every one.
    for critical in [false, true] {
        assert!(!Mode::Interrupt.polls(critical));
        assert!(Mode::Poll.polls(critical));
        assert!(Mode::Hybrid.polls(critical));
        assert_eq!(Mode::SelectIsr.polls(critical), critical);
    }
    // A hipri job polls hybrid only under a hybrid host (io_poll_delay is
    // the queue's), else classic.
    assert_eq!(Mode::Hybrid.hipri(), Mode::Hybrid);
    for m in [Mode::Interrupt, Mode::Poll, Mode::SelectIsr] {
        assert_eq!(m.hipri(), Mode::Poll, "{m}");
    }
    assert_eq!(Mode::default(), Mode::Interrupt);
}

#[test]
fn completion_modes_read_their_words_and_aliases() {
    for m in Mode::ALL {
        assert_eq!(m.to_string(), m.as_str());
        assert_eq!(format!(" {m}").parse(), Ok(m));
        assert_eq!(from_profile(m.as_str()), Ok(m));
    }
    assert_eq!("classic".parse(), Ok(Mode::Poll));
    assert_eq!("selectisr".parse(), Ok(Mode::SelectIsr));
    let e = "irq".parse::<Mode>().unwrap_err();
    assert!(
        e.contains("unknown completion mode 'irq'") && e.contains("select-isr"),
        "{e}"
    );
    assert!(from_profile::<Mode>("irq").is_err());
}

#[test]
fn hybrid_sleep_reads_from_a_profile_as_from_the_command_line() {
    assert_eq!(from_profile("half-mean"), Ok(HybridSleep::HalfMean));
    assert_eq!(from_profile("4"), Ok(HybridSleep::Fixed(4_000)));
    assert!(from_profile::<HybridSleep>("0")
        .unwrap_err()
        .contains("above 0"));
    assert_eq!(HybridSleep::HalfMean.to_string(), "half-mean");
}

#[test]
fn a_profile_reads_each_word_as_the_command_line_does() {
    assert_eq!(
        from_profile("ld,tokens=2"),
        Ok(BlockScheduler::Ld {
            tokens: 2,
            split: DEFAULT_SPLIT,
            opportunistic: false
        })
    );
    let e = from_profile::<BlockScheduler>("ld,tokens=0").unwrap_err();
    assert!(e.contains("tokens=0"), "{e}");
}

#[test]
fn flags_read_on_and_off_and_are_written_only_when_on() {
    for flag in ["jbd2-critical", "fsync-io-polls"] {
        let r = row(flag);
        assert_eq!(r.kind, Kind::Flag);
        for on in ["on", "true", "1", " yes "] {
            let s = with(flag, on);
            assert_eq!((r.get)(&s).as_deref(), Some(""), "{flag} {on}");
            assert_eq!(s.describe(), format!("--{flag}"));
        }
        for off in ["off", "false", "0", "no"] {
            let s = with(flag, off);
            assert_ne!(s, Settings::default(), "{flag} {off}: set, to off");
            assert_eq!((r.get)(&s), None, "{flag} {off}");
            assert_eq!(s.describe(), "");
        }
        let e = (r.set)(&mut Settings::default(), "maybe").unwrap_err();
        assert_eq!(e, "expected on or off, not 'maybe'");
        assert_eq!((r.get)(&Settings::default()), None);
    }
    assert_eq!(with("jbd2-critical", "on").jbd2_critical, Some(true));
    assert_eq!(with("jbd2-critical", "off").jbd2_critical, Some(false));
    assert_eq!(with("fsync-io-polls", "yes").fsync_io_polls, Some(true));
    assert_eq!(with("fsync-io-polls", "no").fsync_io_polls, Some(false));
}

#[test]
fn every_row_reads_back_what_it_writes() {
    for m in MECHANISMS {
        assert_eq!((m.get)(&Settings::default()), None, "{}", m.key);
        // The example is a value other than the default: it sets the row.
        let s = with(m.flag, m.example);
        let written = (m.get)(&s).unwrap_or_else(|| panic!("{} {}", m.key, m.example));
        let again = with(m.flag, if written.is_empty() { "on" } else { &written });
        assert_eq!(again, s, "{} {written}", m.key);
        // Only its own field is set.
        for other in MECHANISMS.iter().filter(|o| o.key != m.key) {
            assert_eq!((other.get)(&s), None, "{} set {}", m.key, other.key);
        }
        // A word the row does not take is refused, naming it.
        if m.kind == Kind::Word {
            let e = (m.set)(&mut Settings::default(), "zzz").unwrap_err();
            assert!(e.contains("zzz"), "{}: {e}", m.key);
        }
    }
    // Each row's own field, and the words it writes.
    assert_eq!(
        with("block-scheduler", "ld,tokens=4,split=64k").block_scheduler,
        Some(BlockScheduler::Ld {
            tokens: 4,
            split: 65536,
            opportunistic: false
        })
    );
    assert_eq!(with("completion", "classic").completion, Some(Mode::Poll));
    assert_eq!(with("wakeup", "boost").wakeup, Some(Wakeup::Boost));
    assert_eq!(with("journal", "fjournal").journal, Some(Journal::Fjournal));
    assert_eq!(with("uring", "iopoll").uring, Some(Strategy::IoPoll));
    // Each row writes its canonical word (an alias read, the canonical
    // written).
    for (flag, given, written) in [
        ("completion", "selectisr", "select-isr"),
        ("wakeup", "boost-code", "boost-code"),
        ("journal", "fjournal", "fjournal"),
        ("uring", "min-wait=20us,nr=4", "min-wait=20us,nr=4"),
        ("block-scheduler", "none", "none"),
    ] {
        assert_eq!(
            (row(flag).get)(&with(flag, given)).as_deref(),
            Some(written)
        );
    }
}

#[test]
fn every_word_a_rows_value_names_is_one_it_takes() {
    for m in MECHANISMS.iter().filter(|m| m.kind == Kind::Word) {
        for word in m
            .value_name
            .split('|')
            .map(|w| w.split('[').next().unwrap())
        {
            // Upper case is a placeholder (TIME, STRATEGY).
            if word.chars().all(|c| c.is_ascii_uppercase()) {
                continue;
            }
            (m.set)(&mut Settings::default(), word)
                .unwrap_or_else(|e| panic!("--{} {word}: {e}", m.flag));
        }
    }
    // io_uring's row takes every strategy of its catalogue.
    for r in uring::STRATEGIES {
        let word = if r.params.is_empty() {
            r.name.to_string()
        } else {
            format!("{}=1us", r.name)
        };
        (row("uring").set)(&mut Settings::default(), &word).unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(row("jbd2-critical").value_name, "");
}

#[test]
fn rows_are_found_by_option_and_equal_by_profile_key() {
    assert_eq!(row("wakeup").key, "wakeup_rule");
    assert_eq!(row("io-poll-delay").key, "io_poll_delay");
    // By the option, not the profile key.
    assert!(mechanism("wakeup_rule").is_none());
    assert!(mechanism("--wakeup").is_none());
    // Keys and options are each unique.
    for (i, a) in MECHANISMS.iter().enumerate() {
        for b in &MECHANISMS[i + 1..] {
            assert!(a.key != b.key && a.flag != b.flag, "{} {}", a.key, b.key);
            assert_ne!(a, b);
        }
        assert_eq!(a, &MECHANISMS[i]);
        assert_eq!(mechanism(a.flag), Some(a));
        assert_eq!(format!("{a:?}"), format!("Mechanism({})", a.key));
    }
}

#[test]
fn each_row_says_which_front_ends_apply_it() {
    use FrontEnd::{Exec, Run, Sim};
    assert_eq!(
        [Sim.as_str(), Run.as_str(), Exec.as_str()],
        ["sim", "run", "exec"]
    );
    // The simulator applies every one.
    for m in MECHANISMS {
        assert!(m.supports(Sim), "{}", m.key);
    }
    let fronts = |flag: &str| {
        [Sim, Run, Exec]
            .into_iter()
            .filter(|&f| row(flag).supports(f))
            .collect::<Vec<_>>()
    };
    assert_eq!(fronts("block-scheduler"), [Sim, Run, Exec]);
    assert_eq!(fronts("completion"), [Sim, Run, Exec]);
    assert_eq!(fronts("uring"), [Sim, Run]);
    assert_eq!(fronts("io-poll-delay"), [Sim]);
    assert_eq!(fronts("journal"), [Sim]);

    // What a front end does not apply is named by option, in table order.
    let mut s = with("io-poll-delay", "8us");
    s.uring = Some(Strategy::IoPoll);
    s.block_scheduler = Some(BlockScheduler::LD);
    assert_eq!(s.unsupported(Exec), ["io-poll-delay", "uring"]);
    assert_eq!(s.unsupported(Run), ["io-poll-delay"]);
    assert!(s.unsupported(Sim).is_empty());
    // Nothing set, nothing unsupported.
    assert!(Settings::default().unsupported(Exec).is_empty());
    // A flag set off asks nothing of the front end.
    assert!(with("jbd2-critical", "off").unsupported(Run).is_empty());
    assert_eq!(
        with("jbd2-critical", "on").unsupported(Run),
        ["jbd2-critical"]
    );
}

#[test]
fn a_front_ends_help_is_the_rows_help_and_its_own_sentence() {
    for m in MECHANISMS {
        for f in [FrontEnd::Sim, FrontEnd::Run, FrontEnd::Exec] {
            let help = m.help_for(f);
            match m.front_ends.iter().find(|(g, _)| *g == f) {
                Some((_, note)) => assert_eq!(help, format!("{} {note}", m.help)),
                None => assert_eq!(help, m.help),
            }
        }
    }
    let sim = row("journal").help_for(FrontEnd::Sim);
    assert!(sim.starts_with("The ext4 journal mode"), "{sim}");
    assert!(
        sim.ends_with(" Instead of the host profile's `journal`."),
        "{sim}"
    );
    assert_eq!(row("journal").help_for(FrontEnd::Exec), row("journal").help);
}

#[test]
fn the_listing_gives_each_rows_option_key_front_ends_and_help() {
    let l = listing();
    assert!(
        l.starts_with("Host mechanisms (over the host profile's own; host::mechanism):\n"),
        "{l}"
    );
    for m in MECHANISMS {
        let fronts: Vec<&str> = m.front_ends.iter().map(|(f, _)| f.as_str()).collect();
        // A word's option shows its value's shape; a flag's takes none.
        let option = match m.kind {
            Kind::Word => format!("--{} {}", m.flag, m.value_name),
            Kind::Flag => format!("--{}", m.flag),
        };
        let head = format!(
            "\n  {option}  (host key {}; {})\n      {}\n",
            m.key,
            fronts.join(", "),
            m.help
        );
        assert!(l.contains(&head), "{head}\n{l}");
    }
    assert!(l.contains(
        "\n  --block-scheduler none|ld[,...]  (host key block_scheduler; sim, run, exec)\n"
    ));
    assert!(l.contains("\n  --jbd2-critical  (host key jbd2_critical; sim)\n"));
    // Kernel lines name the word, except a flag's and a row whose era is
    // every value's (io_poll_delay).
    let line = |word: &str, e: &era::Era| format!("\n      kernel: {word}{}\n", era::brief(e));
    assert!(l.contains(&line("", &era::JBD2_CRITICAL)), "{l}");
    assert!(l.contains(&line("", &era::IO_POLL_DELAY)), "{l}");
    assert!(l.contains(&line("ld: ", &era::LD)), "{l}");
    assert!(!l.contains("kernel: on: "), "{l}");
}

#[test]
fn a_word_with_parameters_has_the_era_of_its_word() {
    let e = |flag: &str, v: &str| row(flag).era(v).copied();
    assert_eq!(e("block-scheduler", "ld,tokens=4"), Some(era::LD));
    assert_eq!(e("block-scheduler", "none"), Some(era::NO_SCHEDULER));
    assert_eq!(e("uring", "min-wait=20us,nr=4"), Some(era::URING_MIN_WAIT));
    assert_eq!(e("uring", " iopoll"), Some(era::URING_IOPOLL));
    assert_eq!(e("completion", "hybrid"), Some(era::HYBRID));
    // A flag's value is not read: on.
    assert_eq!(e("jbd2-critical", ""), Some(era::JBD2_CRITICAL));
    // One era for every value.
    assert_eq!(e("io-poll-delay", "8us"), Some(era::IO_POLL_DELAY));
    assert_eq!(e("io-poll-delay", "half-mean"), Some(era::IO_POLL_DELAY));
    // A word without an era.
    assert_eq!(e("completion", "classic"), None);
    assert_eq!(e("wakeup", "fair"), None);
}

#[test]
fn the_first_setting_a_kernel_lacks_is_named_and_gone_is_only_removed() {
    // Hybrid polling: Linux 4.10 to 6.3 (54bdd67d0f88 removed it in 6.4);
    // EEVDF: 6.6 and later (147f3efaa241).
    let mut s = with("wakeup", "eevdf");
    s.completion = Some(Mode::Hybrid);
    // On 5.3 only EEVDF is missing, and it came later: not gone.
    let a = s.anachronism(kernel("5.3")).unwrap();
    assert_eq!(a.option(), "--wakeup eevdf");
    assert_eq!(a.row, row("wakeup"));
    assert_eq!(a.value, "eevdf");
    assert_eq!(s.gone(kernel("5.3")), None);
    // On 6.12 both; the first in table order (completion) is named, and
    // hybrid is gone by then.
    assert_eq!(
        s.anachronism(kernel("6.12")).unwrap().option(),
        "--completion hybrid"
    );
    let g = s.gone(kernel("6.12")).unwrap();
    assert_eq!(g.option(), "--completion hybrid");
    assert!(g.era.contains("54bdd67d0f88"), "{}", g.era);
    assert_eq!(s.gone(kernel("6.3")), None);
    // A flag is named without a value: JBD2's boost edits CFS, gone by 6.6.
    let s = with("jbd2-critical", "on");
    let g = s.gone(kernel("6.6")).unwrap();
    assert_eq!(
        (g.option().as_str(), g.value.as_str()),
        ("--jbd2-critical", "")
    );
    assert_eq!(s.gone(kernel("5.3")), None);
    assert_eq!(Settings::default().gone(kernel("2.6")), None);
}

#[test]
fn a_patch_on_another_release_is_a_port_named_by_option_and_value() {
    // FastResponse patched 5.3.7 (FR 4.1): on 5.0 its boost is a port of
    // a CFS change, on 5.3 the patch itself, on 6.6 refused (no CFS).
    let s = with("wakeup", "boost");
    let ports = s.ports(kernel("5.0"));
    assert_eq!(ports.len(), 1);
    assert!(ports[0].starts_with("--wakeup boost: "), "{}", ports[0]);
    assert!(
        ports[0].ends_with("on 5.0 this models a port"),
        "{}",
        ports[0]
    );
    assert!(s.ports(kernel("5.3")).is_empty());
    assert!(s.ports(kernel("6.6")).is_empty());
    let s = with("fsync-io-polls", "on");
    let ports = s.ports(kernel("5.10"));
    assert_eq!(ports.len(), 1);
    assert!(ports[0].starts_with("--fsync-io-polls: "), "{}", ports[0]);
    // Mainline words are never ports.
    assert!(with("wakeup", "vanilla").ports(kernel("5.0")).is_empty());
}

#[test]
fn settings_are_described_in_table_order_as_the_command_line_writes_them() {
    let s = Settings {
        wakeup: Some(Wakeup::Vanilla),
        block_scheduler: Some(BlockScheduler::LD),
        jbd2_critical: Some(true),
        fsync_io_polls: Some(false),
        ..Settings::default()
    };
    assert_eq!(
        s.describe(),
        "--block-scheduler ld,tokens=8,split=32k --wakeup vanilla --jbd2-critical"
    );
    assert_eq!(Settings::default().describe(), "");
}

#[test]
fn a_merge_takes_what_the_other_sets_and_keeps_the_rest() {
    let mut base = Settings {
        completion: Some(Mode::Hybrid),
        wakeup: Some(Wakeup::Boost),
        jbd2_critical: Some(true),
        fsync_io_polls: Some(true),
        ..Settings::default()
    };
    let over = Settings {
        wakeup: Some(Wakeup::Eevdf),
        journal: Some(Journal::Fjournal),
        uring: Some(Strategy::TaskWork),
        ..Settings::default()
    };
    base.merge(&over);
    assert_eq!(
        base,
        Settings {
            completion: Some(Mode::Hybrid),
            wakeup: Some(Wakeup::Eevdf),
            journal: Some(Journal::Fjournal),
            uring: Some(Strategy::TaskWork),
            jbd2_critical: Some(true),
            fsync_io_polls: Some(true),
            ..Settings::default()
        }
    );
    // A flag set off overrides one on; a flag unset leaves it.
    let mut on = with("jbd2-critical", "on");
    on.fsync_io_polls = Some(true);
    let mut a = on.clone();
    a.merge(&Settings::default());
    assert_eq!(a, on);
    let off = Settings {
        jbd2_critical: Some(false),
        fsync_io_polls: Some(false),
        ..Settings::default()
    };
    a.merge(&off);
    assert_eq!(a, off);
    // And on over off.
    let mut b = off.clone();
    b.merge(&on);
    assert_eq!(b, on);
    // Every row merges into nothing as itself.
    for m in MECHANISMS {
        let s = with(m.flag, m.example);
        let mut t = Settings::default();
        t.merge(&s);
        assert_eq!(t, s, "{}", m.key);
    }
}
