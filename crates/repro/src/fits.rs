//! Every fit of the model's free constants, with the runs it reads and the
//! figures it targets (issue 36 item 1), so that a claim's basis can be
//! checked against its inputs before any run: a claim whose run or
//! baseline is a configuration a fit evaluates, or that sits in a figure a
//! fit targets, is *fitted* (or by construction, if its declaration says
//! why); `tests/fits.rs` holds every shipped claim to it.
//!
//! The runs come from the fits themselves ([`sim::calibrate::fit_runs`],
//! [`sim::calibrate::kvell::fit_runs`]), the same constants the fits run,
//! so this list cannot drift from what was fitted.

use sim::calibrate::FitRun;

use crate::claims::{Basis, Claim};
use crate::experiment::{Experiment, RunSpec, TOS_HOST};

/// One fit: its command, the figures it targets, the runs it reads.
#[derive(Clone, Debug)]
pub struct Fit {
    /// How the claims file's `fit` names it: the command, or "no command"
    /// for a value set by hand with a figure in view.
    pub command: &'static str,
    /// What it fits.
    pub fits: &'static str,
    /// The experiments whose figure holds a target of the fit: every claim
    /// of theirs shares a figure with it.
    pub figures: &'static [&'static str],
    /// The configurations it evaluates.
    pub runs: Vec<FitRun>,
}

/// Every fit the shipped model was made with.
pub fn all() -> Vec<Fit> {
    vec![
        Fit {
            command: "cinterrupts calibrate --fit",
            fits: "the host's free constants (sim::calibrate::FREE) against TOS Figs 3, 4, 17 \
                   and 21 together",
            figures: &["tos-fig3", "tos-fig4", "fig17", "fig21"],
            runs: sim::calibrate::fit_runs(),
        },
        Fit {
            command: "cinterrupts calibrate --kvell --fit",
            fits: "KVell's worker_request_ns against Table 5's cint scans/s and TOS 5.4.2's cint \
                   idle share on B, C, F",
            figures: &["table5", "fig23"],
            runs: sim::calibrate::kvell::fit_runs(),
        },
        Fit {
            command: "no command: profiles/devices/optane.toml's parallelism = 28",
            fits: "the Optane's parallelism, set by hand with Fig 18's batched p90 of 1 us in \
                   view (commit b341225)",
            figures: &["fig18"],
            runs: Vec::new(),
        },
    ]
}

/// Whether `run` of `experiment` is the configuration `f`: the same file,
/// options, device and policy (compared with every default filled in, so
/// `alpha-0-0` is `default`), on the shipped (TOS) host with no host
/// mechanism and no throttle. Seeds and run lengths differ by design.
pub fn same_run(experiment: &Experiment, run: &RunSpec, f: &FitRun) -> bool {
    let Some(w) = experiment.workloads.iter().find(|w| w.name == run.workload) else {
        return false;
    };
    let norm = |a: &str| a.trim_start_matches('-').to_string();
    let mut ours: Vec<String> = run.fio_args.iter().map(|a| norm(a)).collect();
    let mut theirs: Vec<String> = f.args.iter().map(|a| norm(a)).collect();
    ours.sort();
    theirs.sort();
    w.text.trim() == f.text.trim()
        && ours == theirs
        && run.device == f.device
        && policy::catalogue::describe(&run.policy) == policy::catalogue::describe(&f.policy)
        && run.host == TOS_HOST
        && run.host_settings == sim::HostSettings::default()
        && run.idle.is_none()
        && run.throttle.is_none()
}

/// The fits a run of `experiment` shares, by its figure or its
/// configuration.
pub fn of_run<'a>(fits: &'a [Fit], experiment: &Experiment, key: &str) -> Vec<&'a Fit> {
    let run = experiment.run(key);
    fits.iter()
        .filter(|f| {
            f.figures.contains(&experiment.id)
                || run.is_some_and(|r| f.runs.iter().any(|fr| same_run(experiment, r, fr)))
        })
        .collect()
}

/// The fits a claim shares, through any run it reads (its run and
/// baseline, every group of a `*`) or its figure.
pub fn of_claim<'a>(fits: &'a [Fit], experiment: &Experiment, claim: &Claim) -> Vec<&'a Fit> {
    let keys: Vec<String> = if claim.run.contains('*') {
        let groups = claim.groups.clone().unwrap_or_else(|| experiment.groups());
        groups
            .iter()
            .flat_map(|g| {
                std::iter::once(claim.run.replace('*', g))
                    .chain(claim.baseline.as_ref().map(|b| b.replace('*', g)))
            })
            .collect()
    } else {
        std::iter::once(claim.run.clone())
            .chain(claim.baseline.clone())
            .collect()
    };
    let mut out: Vec<&Fit> = Vec::new();
    for k in &keys {
        for f in of_run(fits, experiment, k) {
            if !out.iter().any(|o| std::ptr::eq(*o, f)) {
                out.push(f);
            }
        }
    }
    out
}

/// Where a claim's declared basis disagrees with its inputs: independent
/// but sharing a fit, or fitted naming no fit it shares. By construction
/// stands on its declared reason.
pub fn misdeclared(fits: &[Fit], experiment: &Experiment, claim: &Claim) -> Option<String> {
    let shared = of_claim(fits, experiment, claim);
    match &claim.basis {
        Basis::Construction { .. } => None,
        Basis::Independent if shared.is_empty() => None,
        Basis::Independent => Some(format!(
            "declared independent, but shares `{}` ({})",
            shared[0].command, shared[0].fits
        )),
        Basis::Fitted { fit } if shared.iter().any(|f| fit.contains(f.command)) => None,
        Basis::Fitted { fit } => Some(format!(
            "declared fitted by '{fit}', which names none of the fits it shares: [{}]",
            shared
                .iter()
                .map(|f| f.command)
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(id: &str) -> Experiment {
        crate::figures::all()
            .into_iter()
            .find(|e| e.id == id)
            .unwrap()
    }

    #[test]
    fn fig17_shares_the_host_fits_figure_but_not_its_storm_run() {
        // The fit runs storm.fio under cint's defaults (out-of-order
        // processing on); Fig 17 runs the artifact's module default (off):
        // another configuration, in the fit's figure all the same.
        let fits = all();
        let host = &fits[0];
        let e = experiment("fig17");
        let free = e.run("cint").unwrap();
        assert!(!host.runs.iter().any(|f| same_run(&e, free, f)));
        assert_eq!(of_run(&fits, &e, "cint").len(), 1);
        let mut on = free.clone();
        on.policy.ooo = None;
        assert!(host.runs.iter().any(|f| same_run(&e, &on, f)));
    }

    #[test]
    fn fig10s_default_and_adaptive_are_the_fits_mixed_runs_and_cint_is_not() {
        let fits = all();
        let e = experiment("fig10");
        let reads = |key: &str| !of_run(&fits, &e, key).is_empty();
        assert!(reads("default") && reads("adaptive"));
        assert!(!reads("cint"));
    }
}
