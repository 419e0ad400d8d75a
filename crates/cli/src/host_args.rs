//! The host mechanisms' options (`--block-scheduler`, `--completion`,
//! `--uring`, ...): one per row of `host::mechanism::MECHANISMS` that the
//! front end applies, with the row's help and parser, as `PolicyArgs` is
//! made from policy's `OPTIONS` (issue 26 item 2).

use std::fmt;
use std::marker::PhantomData;

use clap::builder::ValueParser;
use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use host::era::Kernel;
use host::mechanism::{FrontEnd, Kind, Mechanism, Settings, MECHANISMS};
pub use host::mechanism::{KernelEra, Pinned};

/// A front end, as a type, so that each verb's arguments carry their own
/// set of mechanisms.
pub trait Front {
    const FRONT: FrontEnd;
}

/// `cinterrupts sim`.
#[derive(Clone, Copy, Debug)]
pub struct Sim;
/// `cinterrupts run`.
#[derive(Clone, Copy, Debug)]
pub struct Run;
/// `cinterrupts exec`.
#[derive(Clone, Copy, Debug)]
pub struct Exec;

impl Front for Sim {
    const FRONT: FrontEnd = FrontEnd::Sim;
}
impl Front for Run {
    const FRONT: FrontEnd = FrontEnd::Run;
}
impl Front for Exec {
    const FRONT: FrontEnd = FrontEnd::Exec;
}

/// The mechanisms given on the command line, over the host's own, and
/// the kernel release the run models (`--kernel`, issue 37 item 1).
pub struct HostArgs<F> {
    pub settings: Settings,
    pub kernel: Option<Kernel>,
    front: PhantomData<F>,
}

impl<F> HostArgs<F> {
    /// The kernel the run models and its notes, or the one-line refusal
    /// ([`Settings::kernel_era`] with `--kernel`).
    pub fn era(&self, host: Option<Pinned<'_>>) -> Result<KernelEra, String> {
        self.settings.kernel_era(self.kernel, host)
    }
}

impl<F> Clone for HostArgs<F> {
    fn clone(&self) -> Self {
        HostArgs {
            settings: self.settings.clone(),
            kernel: self.kernel,
            front: PhantomData,
        }
    }
}

impl<F> fmt::Debug for HostArgs<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.settings.fmt(f)?;
        write!(f, " kernel {:?}", self.kernel)
    }
}

fn rows<F: Front>() -> impl Iterator<Item = &'static Mechanism> {
    MECHANISMS.iter().filter(|m| m.supports(F::FRONT))
}

/// A word's parser: the row's own, so that clap's error quotes the value
/// and the option and gives the row's reason.
fn parser(m: &'static Mechanism) -> ValueParser {
    ValueParser::new(move |s: &str| -> Result<String, String> {
        (m.set)(&mut Settings::default(), s)?;
        Ok(s.to_string())
    })
}

impl<F: Front> Args for HostArgs<F> {
    fn augment_args(mut cmd: Command) -> Command {
        let mut kernel = Arg::new("kernel")
            .long("kernel")
            .value_name("X.Y")
            .help("The Linux release the run models (e.g. 6.12; 5.0.8 reads as 5.0): a host mechanism it never had is refused, naming the commit that added or removed it (`cinterrupts policies` lists each one's releases); default the host profile's `kernel`, else no check")
            .value_parser(ValueParser::new(|s: &str| s.parse::<Kernel>()));
        if F::FRONT == FrontEnd::Exec {
            kernel = kernel.conflicts_with("observe");
        }
        cmd = cmd.arg(kernel);
        for m in rows::<F>() {
            let mut arg = Arg::new(m.flag).long(m.flag).help(m.help_for(F::FRONT));
            arg = match m.kind {
                Kind::Word => arg.value_name(m.value_name).value_parser(parser(m)),
                Kind::Flag => arg.action(ArgAction::SetTrue),
            };
            if F::FRONT == FrontEnd::Exec {
                // Observing routes nothing: no host mechanism applies.
                arg = arg.conflicts_with("observe");
            }
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<F: Front> FromArgMatches for HostArgs<F> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = HostArgs {
            settings: Settings::default(),
            kernel: None,
            front: PhantomData,
        };
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        if let Some(k) = matches.get_one::<Kernel>("kernel") {
            self.kernel = Some(*k);
        }
        for m in rows::<F>() {
            let value = match m.kind {
                Kind::Word => matches.get_one::<String>(m.flag).cloned(),
                Kind::Flag => matches.get_flag(m.flag).then(|| "on".to_string()),
            };
            if let Some(v) = value {
                (m.set)(&mut self.settings, &v)
                    .map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, e))?;
            }
        }
        if F::FRONT != FrontEnd::Sim && self.settings.completion == Some(host::poll::Mode::Central)
        {
            // UnICom's poller is a kernel thread the simulator models; the
            // emulator's driver has none (issue 40).
            return Err(clap::Error::raw(
                ErrorKind::ValueValidation,
                format!(
                    "--completion central: UnICom's central poller is simulated only (sim), not applied by {}\n",
                    F::FRONT.as_str()
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<F: Front>(args: &[&str]) -> Result<Settings, clap::Error> {
        let cmd = HostArgs::<F>::augment_args(
            Command::new("t").arg(
                Arg::new("observe")
                    .long("observe")
                    .action(ArgAction::SetTrue),
            ),
        );
        let m = cmd.try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))?;
        HostArgs::<F>::from_arg_matches(&m).map(|a| a.settings)
    }

    #[test]
    fn each_front_end_takes_exactly_its_rows() {
        for (front, takes) in [(FrontEnd::Sim, 9), (FrontEnd::Run, 3), (FrontEnd::Exec, 2)] {
            let n = MECHANISMS.iter().filter(|m| m.supports(front)).count();
            assert_eq!(n, takes, "{}", front.as_str());
        }
        assert!(parse::<Sim>(&["--wakeup", "vanilla"]).is_ok());
        let e = parse::<Run>(&["--wakeup", "vanilla"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownArgument);
        assert!(parse::<Exec>(&["--uring", "iopoll"]).is_err());
        assert!(parse::<Sim>(&["--io-poll-delay", "8us"]).is_ok());
        assert!(parse::<Sim>(&["--completion", "central"]).is_ok());
        for e in [
            parse::<Run>(&["--completion", "central"]).unwrap_err(),
            parse::<Exec>(&["--completion", "central"]).unwrap_err(),
        ] {
            assert!(e.to_string().contains("simulated only"), "{e}");
        }
        assert!(parse::<Run>(&["--io-poll-delay", "8us"]).is_err());
    }

    #[test]
    fn the_settings_read_back_as_the_command_line_wrote_them() {
        let line = "--block-scheduler ld,tokens=4,split=64k --completion select-isr --wakeup boost-code --journal fjournal --jbd2-critical --fsync-io-polls --uring min-wait=20us,nr=4";
        let words: Vec<&str> = line.split(' ').collect();
        let s = parse::<Sim>(&words).unwrap();
        assert_eq!(s.describe(), line);
        assert_eq!(s.completion, Some(host::poll::Mode::SelectIsr));
        assert_eq!(s.jbd2_critical, Some(true));
        assert_eq!(parse::<Sim>(&[]).unwrap(), Settings::default());
    }

    #[test]
    fn a_bad_word_names_the_option_and_the_rows_reason() {
        let e = parse::<Sim>(&["--wakeup", "eager"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--wakeup") && e.contains("unknown wake-up rule 'eager'"),
            "{e}"
        );
        let e = parse::<Run>(&["--completion", "spin"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown completion mode 'spin'"), "{e}");
    }

    #[test]
    fn exec_refuses_a_mechanism_beside_observe() {
        let e = parse::<Exec>(&["--observe", "--completion", "poll"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ArgumentConflict);
        assert!(parse::<Sim>(&["--observe", "--completion", "poll"]).is_ok());
    }
}
