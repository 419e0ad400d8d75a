//! Every shipped claim's basis against its inputs (issue 36 item 1): a
//! claim whose figure is computed from a run a fit reads, or that sits in
//! a figure a fit targets, is declared fitted (naming that fit) or by
//! construction; a claim declared fitted shares the fit it names.

use repro::{claims, fits};

#[test]
fn every_claim_sharing_a_fit_is_declared_fitted_and_no_other() {
    let experiments = repro::figures::all();
    let shipped = claims::load(claims::SHIPPED, "claims.toml", &experiments).unwrap();
    let all = fits::all();
    let wrong: Vec<String> = shipped
        .iter()
        .filter_map(|c| {
            let e = experiments.iter().find(|e| e.id == c.experiment)?;
            fits::misdeclared(&all, e, c)
                .map(|why| format!("{} '{}': {why}", c.experiment, c.claim))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} claim(s):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn an_independent_claim_on_a_fitted_run_is_caught() {
    // Fig 10's default run is the host fit's mixed run: the same claim
    // declared independent is refused, fitted by that fit accepted.
    let experiments = repro::figures::all();
    let e = experiments.iter().find(|e| e.id == "fig10").unwrap();
    let claim = |basis: &str| {
        format!(
            "[[claim]]\nexperiment = \"fig10\"\nclaim = \"c\"\nsource = \"s\"\n\
             metric = \"irq_rate\"\nrun = \"default\"\nbaseline = \"cint\"\n\
             compare = \"ratio\"\npaper = \"2.74x\"\nkind = \"ratio\"\nnumber = 2.74\n{basis}\n"
        )
    };
    let load = |text: String| {
        claims::load(&text, "c.toml", &experiments)
            .unwrap()
            .remove(0)
    };
    let all = fits::all();
    let independent = load(claim("basis = \"independent\""));
    assert!(fits::misdeclared(&all, e, &independent).is_some());
    let fitted = load(claim(
        "basis = \"fitted\"\nfit = \"cinterrupts calibrate --fit: Fig 21's split\"",
    ));
    assert_eq!(fits::misdeclared(&all, e, &fitted), None);
    let wrong_fit = load(claim(
        "basis = \"fitted\"\nfit = \"cinterrupts calibrate --kvell --fit\"",
    ));
    assert!(fits::misdeclared(&all, e, &wrong_fit).is_some());
    // cint against cint's own figure elsewhere: fig12 shares no fit.
    let e12 = experiments.iter().find(|e| e.id == "fig12").unwrap();
    let c12 = &claims::load(claims::SHIPPED, "claims.toml", &experiments)
        .unwrap()
        .into_iter()
        .find(|c| c.experiment == "fig12")
        .unwrap();
    assert!(fits::of_claim(&all, e12, c12).is_empty());
}
