//! The calibration as `cinterrupts calibrate` prints it: each target
//! beside the paper's figure and its source, the residuals, and each fit's
//! before and after with the constants it moved.

use policy::time::format_nanos as fmt;
use policy::Nanos;

use super::{kvell, objective, qd1_host_ns, Fit, Setup, Target, FREE};

/// The targets as a table under `title`, and the objective over them.
pub fn table(title: &str, targets: &[Target]) -> String {
    let mut s = format!(
        "{:<62} {:>11} {:>11} {:>7}  source\n",
        title, "paper", "model", "ratio"
    );
    for t in targets {
        s += &format!(
            "{:<62} {:>11} {:>11} {:>6.2}x  {}{}\n",
            t.what,
            format!("{} {}", t.paper, t.unit),
            format!("{:.1} {}", t.model, t.unit),
            t.ratio(),
            t.source,
            if t.fitted { "" } else { " [not fitted]" }
        );
    }
    s += &format!(
        "objective (sum of squared log ratios, fitted targets): {:.4}\n",
        objective(targets)
    );
    s
}

/// Each target's residual, ln(model / paper).
pub fn residuals(targets: &[Target]) -> String {
    let mut s = "residuals ln(model/paper):\n".to_string();
    for t in targets {
        s += &format!(
            "  {:>+7.3}  {}{}\n",
            t.ratio().max(1e-9).ln(),
            t.what,
            if t.fitted { "" } else { " [validation]" }
        );
    }
    s
}

/// The shipped host's targets, and where its free constants come from.
pub fn shipped(targets: &[Target]) -> String {
    table(
        "target (shipped profiles xeon-e5-2660v4, optane, p3700)",
        targets,
    ) + &format!(
        "\nThe free constants ({}) are the fit's (`cinterrupts calibrate --fit`); \
         profiles/hosts/xeon-e5-2660v4.toml gives every constant's source.\n",
        FREE.iter().map(|f| f.key).collect::<Vec<_>>().join(", ")
    )
}

/// One evaluation of the host's fit, for a progress line.
pub fn evaluation(n: usize, host: &crate::HostProfile, objective: f64) -> String {
    format!(
        "evaluation {n}: objective {objective:.4} ({})",
        FREE.iter()
            .map(|f| format!("{} {}", f.key, fmt(f.get(host))))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The host's fit: before and after, each constant moved and why, the
/// QD1 host path it leaves (Table 2's latencies held).
pub fn fitted(fit: &Fit, shipped: &Setup, runtime: Nanos) -> String {
    let mut s = table("before: the shipped profiles", &fit.before);
    s += "\n";
    s += &table("after: the fitted host", &fit.after);
    s += &format!(
        "\nfitted in {} evaluations (runs of {} each):\n",
        fit.evaluations,
        fmt(runtime)
    );
    for ((key, from, to), free) in fit.constants.iter().zip(FREE) {
        s += &format!(
            "  {key:<20} {:>9} -> {:>9}   {}\n",
            fmt(*from),
            fmt(*to),
            free.why
        );
    }
    s += &format!(
        "  QD1 host path {} (was {}): device read means optane {}, p3700 {} (Table 2 held)\n",
        fmt(qd1_host_ns(&fit.setup.host)),
        fmt(qd1_host_ns(&shipped.host)),
        fmt(fit.setup.optane.read.mean),
        fmt(fit.setup.p3700.read.mean),
    );
    s
}

/// KVell's targets at `worker_request_ns` `at`, and where the shipped
/// value comes from.
pub fn kvell_targets(targets: &[Target], at: Nanos) -> String {
    table(
        &format!(
            "target (kvell worker_request_ns {}, xeon-e5-2660v4, optane)",
            fmt(at)
        ),
        targets,
    ) + &residuals(targets)
        + &format!(
            "\nworker_request_ns is the fit's (`cinterrupts calibrate --app kvell --fit`; \
             shipped {}, apps::kvell::WORKER_REQUEST_NS).\n",
            fmt(kvell::WORKER_REQUEST_NS)
        )
}

/// One evaluation of KVell's fit, for a progress line.
pub fn kvell_evaluation(n: usize, worker_request_ns: Nanos, targets: &[Target]) -> String {
    format!(
        "evaluation {n}: worker_request_ns {}: objective {:.4} ({})",
        fmt(worker_request_ns),
        objective(targets),
        targets
            .iter()
            .map(|t| format!("{:.2}", t.model))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// KVell's fit: before and after, the value moved within the search's
/// bounds, and its split per request.
pub fn kvell_fitted(fit: &kvell::Fit, runtime: Nanos) -> String {
    let mut s = table(
        &format!("before: worker_request_ns {}", fmt(fit.from)),
        &fit.before,
    );
    s += "\n";
    s += &table(
        &format!("after: worker_request_ns {}", fmt(fit.fitted)),
        &fit.after,
    );
    s += &residuals(&fit.after);
    s += &format!(
        "\nfitted in {} evaluations (runs of {} each, seed 1): worker_request_ns {} -> {} \
         (search bounds {} .. {})\n",
        fit.evaluations,
        fmt(runtime),
        fmt(fit.from),
        fmt(fit.fitted),
        fmt(kvell::LO),
        fmt(kvell::HI),
    );
    let c = kvell::WorkerCosts::scaled(fit.fitted);
    s += &format!(
        "  split per request: index lookup {}, dequeue (scan item) {}, iocb {}, callback {}\n",
        fmt(c.index_lookup),
        fmt(c.dequeue),
        fmt(c.iocb),
        fmt(c.callback)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_marks_what_is_not_fitted_and_residuals_what_validates() {
        let targets = [
            Target::new("fitted one", "TOS 2", "us", 10.0, 12.5, true),
            Target::new("held one", "TOS Table 2", "us", 80.0, 80.0, false),
        ];
        let t = table("title", &targets);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(lines[0].starts_with("title ") && lines[0].ends_with("  source"));
        assert!(
            lines[1].contains("10 us") && lines[1].contains("12.5 us"),
            "{t}"
        );
        assert!(lines[1].contains("1.25x  TOS 2") && !lines[1].contains("[not fitted]"));
        assert!(lines[2].ends_with("TOS Table 2 [not fitted]"), "{t}");
        assert!(lines[3].starts_with("objective (sum of squared log ratios"));
        let r = residuals(&targets);
        assert!(
            r.contains(&format!("{:>+7.3}  fitted one\n", 1.25f64.ln())),
            "{r}"
        );
        assert!(r.contains("held one [validation]"), "{r}");
    }
}
