//! fio-like human output.

use crate::RunReport;

/// The report as fio's normal output would show it, plus the run's interrupt
/// and CPU summary.
pub fn render(report: &RunReport) -> String {
    let _ = report;
    todo!("text::render")
}
