//! `cinterrupts calibrate`: the simulator's host model against the paper's
//! costs, target by target, and the one fit of its free constants
//! (`sim::calibrate`).

use anyhow::Result;
use clap::Args;

use crate::args;
use sim::calibrate::{self, Target};

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Virtual time each run simulates
    #[arg(long, value_parser = args::runtime, default_value = "200ms", value_name = "TIME")]
    pub runtime: u64,
    /// Fit the host's free constants against every target together
    /// (Nelder-Mead from the shipped values) and print the fit
    #[arg(long)]
    pub fit: bool,
    /// The fit's budget: evaluations of every target
    #[arg(long, default_value_t = 300, value_name = "N",
          value_parser = clap::value_parser!(u64).range(10..=100_000))]
    pub max_evals: u64,
    /// Calibrate an application model's free constant instead of the host:
    /// `kvell` (its worker CPU per request, against TOS Table 5 and Fig 23)
    #[arg(long, value_parser = ["kvell"], value_name = "APP")]
    pub app: Option<String>,
    /// With --app kvell: the worker CPU per request to evaluate (or, with
    /// --fit, to start from); default the shipped value
    #[arg(long, value_name = "NS", requires = "app",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub worker_request_ns: Option<u64>,
}

fn table(title: &str, targets: &[Target]) {
    println!(
        "{:<62} {:>11} {:>11} {:>7}  source",
        title, "paper", "model", "ratio"
    );
    for t in targets {
        println!(
            "{:<62} {:>11} {:>11} {:>6.2}x  {}{}",
            t.what,
            format!("{} {}", t.paper, t.unit),
            format!("{:.1} {}", t.model, t.unit),
            t.ratio(),
            t.source,
            if t.fitted { "" } else { " [not fitted]" }
        );
    }
    println!(
        "objective (sum of squared log ratios, fitted targets): {:.4}",
        calibrate::objective(targets)
    );
}

/// Each target's residual, ln(model / paper), fitted targets first.
fn residuals(targets: &[Target]) {
    println!("residuals ln(model/paper):");
    for t in targets {
        println!(
            "  {:>+7.3}  {}{}",
            t.ratio().max(1e-9).ln(),
            t.what,
            if t.fitted { "" } else { " [validation]" }
        );
    }
}

fn run_kvell(a: &CalibrateArgs, shipped: &calibrate::Setup) -> Result<()> {
    use calibrate::kvell;
    let shipped_value = kvell::WORKER_REQUEST_NS;
    let at = a.worker_request_ns.unwrap_or(shipped_value);
    let fmt = policy::time::format_nanos;
    if !a.fit {
        let targets = kvell::targets(shipped, at, a.runtime, kvell::Which::All)?;
        table(
            &format!(
                "target (kvell worker_request_ns {}, xeon-e5-2660v4, optane)",
                fmt(at)
            ),
            &targets,
        );
        residuals(&targets);
        println!(
            "\nworker_request_ns is the fit's (`cinterrupts calibrate --app kvell --fit`; \
             shipped {}, apps::kvell::WORKER_REQUEST_NS).",
            fmt(shipped_value)
        );
        return Ok(());
    }
    let fit = kvell::fit(
        shipped,
        at,
        a.runtime,
        a.max_evals as usize,
        &mut |n, w, t| {
            eprintln!(
                "evaluation {n}: worker_request_ns {}: objective {:.4} ({})",
                fmt(w),
                calibrate::objective(t),
                t.iter()
                    .map(|t| format!("{:.2}", t.model))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
    )?;
    table(
        &format!("before: worker_request_ns {}", fmt(fit.from)),
        &fit.before,
    );
    println!();
    table(
        &format!("after: worker_request_ns {}", fmt(fit.fitted)),
        &fit.after,
    );
    residuals(&fit.after);
    println!(
        "\nfitted in {} evaluations (runs of {} each, seed 1): worker_request_ns {} -> {} \
         (search bounds {} .. {})",
        fit.evaluations,
        fmt(a.runtime),
        fmt(fit.from),
        fmt(fit.fitted),
        fmt(kvell::LO),
        fmt(kvell::HI),
    );
    let c = kvell::WorkerCosts::scaled(fit.fitted);
    println!(
        "  split per request: index lookup {}, dequeue (scan item) {}, iocb {}, callback {}",
        fmt(c.index_lookup),
        fmt(c.dequeue),
        fmt(c.iocb),
        fmt(c.callback)
    );
    Ok(())
}

pub fn run(a: &CalibrateArgs) -> Result<()> {
    let shipped = calibrate::Setup::shipped()?;
    if a.app.is_some() {
        return run_kvell(a, &shipped);
    }
    if !a.fit {
        table(
            "target (shipped profiles xeon-e5-2660v4, optane, p3700)",
            &calibrate::targets(&shipped, a.runtime)?,
        );
        println!(
            "\nThe free constants ({}) are the fit's (`cinterrupts calibrate --fit`); \
             profiles/hosts/xeon-e5-2660v4.toml gives every constant's source.",
            calibrate::FREE
                .iter()
                .map(|f| f.key)
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(());
    }
    let fit = calibrate::fit(&shipped, a.runtime, a.max_evals as usize, &mut |n, h, o| {
        eprintln!(
            "evaluation {n}: objective {o:.4} ({})",
            calibrate::FREE
                .iter()
                .map(|f| format!("{} {}", f.key, policy::time::format_nanos(f.get(h))))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    table("before: the shipped profiles", &fit.before);
    println!();
    table("after: the fitted host", &fit.after);
    println!(
        "\nfitted in {} evaluations (runs of {} each):",
        fit.evaluations,
        policy::time::format_nanos(a.runtime)
    );
    for ((key, from, to), free) in fit.constants.iter().zip(calibrate::FREE) {
        println!(
            "  {key:<20} {:>9} -> {:>9}   {}",
            policy::time::format_nanos(*from),
            policy::time::format_nanos(*to),
            free.why
        );
    }
    let qd1 = calibrate::qd1_host_ns(&fit.setup.host);
    println!(
        "  QD1 host path {} (was {}): device read means optane {}, p3700 {} (Table 2 held)",
        policy::time::format_nanos(qd1),
        policy::time::format_nanos(calibrate::qd1_host_ns(&shipped.host)),
        policy::time::format_nanos(fit.setup.optane.read.mean),
        policy::time::format_nanos(fit.setup.p3700.read.mean),
    );
    Ok(())
}
