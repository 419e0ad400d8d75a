//! `cinterrupts-fuzz --target jobs|stream|profile-host|profile-device|all
//! --seconds N [--seed S] [--crashes DIR]`: exit 0 when nothing was found,
//! 1 when something was, 2 on a usage error.

use fuzz::driver::{self, Config};
use fuzz::targets;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: cinterrupts-fuzz --target jobs|stream|profile-host|profile-device|all \
--seconds N [--seed S] [--crashes DIR]";

fn main() -> ExitCode {
    let (names, cfg) = match parse_args(std::env::args().skip(1)) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cinterrupts-fuzz: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let root = targets::repo_root();
    let mut found = 0;
    for name in &names {
        let target = targets::by_name(name, &root).expect("names are checked");
        let report = driver::run(target, &cfg);
        found += report.findings();
        if report.hangs > 0 {
            // The hung worker thread cannot be stopped: leave now.
            eprintln!("cinterrupts-fuzz: {name} hung; stopping");
            std::process::exit(1);
        }
    }
    if found > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--seconds` is the whole run's budget, shared evenly by the targets.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(Vec<String>, Config), String> {
    let mut target = None;
    let mut seconds = None;
    let mut cfg = Config::default();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--target" => target = Some(value()?),
            "--seconds" => {
                let v = value()?;
                let s: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or(format!("--seconds '{v}': expected a positive number"))?;
                seconds = Some(s);
            }
            "--seed" => {
                let v = value()?;
                cfg.seed = v
                    .parse()
                    .map_err(|_| format!("--seed '{v}': expected an unsigned integer"))?;
            }
            "--crashes" => cfg.crashes = Some(PathBuf::from(value()?)),
            "-h" | "--help" => return Err("help".into()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    let target = target.ok_or("--target is required")?;
    let seconds = seconds.ok_or("--seconds is required")?;
    let names: Vec<String> = if target == "all" {
        targets::NAMES.iter().map(|s| s.to_string()).collect()
    } else if targets::NAMES.contains(&target.as_str()) {
        vec![target]
    } else {
        return Err(format!(
            "--target '{target}': expected one of {}, all",
            targets::NAMES.join(", ")
        ));
    };
    cfg.duration = Duration::from_secs_f64(seconds / names.len() as f64);
    Ok((names, cfg))
}
