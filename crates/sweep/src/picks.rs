//! `tune`'s picks judged against the fronts (issue 28: "for the Optane and
//! P3700 profiles `tune`'s chosen delta and thr lie on them"). A pick is
//! read from the `tune.json` that `cinterrupts tune --out` writes (its
//! workload, mode, device, host, delta and thr); its setting is `adaptive
//! delta=D thr=T` in the group of the same workload (by file name: tune
//! and a spec name the same job file by different paths), device and
//! host. It is on the front, off it (with the front's settings that do
//! better on both), or not in the sweep (the spec's grid lacks it).

use std::path::Path;

use serde_json::{json, Value};

use crate::front::{dominates, line, Front, Mark, Setting};

/// One `tune` recommendation.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    /// Where it was read from, for the report.
    pub source: String,
    /// The job file as tune was given it.
    pub workload: String,
    pub mode: String,
    pub device: String,
    pub host: String,
    pub delta_ns: u64,
    pub thr: u64,
}

impl Pick {
    /// A pick from the `tune.json` at `path`, errors naming it.
    pub fn load(path: &Path) -> Result<Pick, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Pick::from_json(&path.display().to_string(), &text)
    }

    /// A pick from a `tune.json`'s text (`tune::render::files`).
    pub fn from_json(source: &str, text: &str) -> Result<Pick, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("{source}: not tune's JSON: {e}"))?;
        let text_of = |k: &str| {
            v[k].as_str().map(str::to_string).ok_or_else(|| {
                format!("{source}: no '{k}' (is it the tune.json of `cinterrupts tune --out`?)")
            })
        };
        let number = |k: &str| {
            v[k].as_u64()
                .ok_or_else(|| format!("{source}: no whole number '{k}' (is it the tune.json of `cinterrupts tune --out`?)"))
        };
        let mode = text_of("mode")?;
        if mode != "sim" {
            return Err(format!(
                "{source}: a tuning on the {mode}; a sweep's points are the simulator's"
            ));
        }
        Ok(Pick {
            source: source.to_string(),
            workload: text_of("workload")?,
            mode,
            device: text_of("device")?,
            host: text_of("host")?,
            delta_ns: number("delta_ns")?,
            thr: number("thr")?,
        })
    }

    /// The setting's policy as the table spells it.
    pub fn policy(&self) -> String {
        format!(
            "adaptive delta={} thr={}",
            policy::format_nanos(self.delta_ns),
            self.thr
        )
    }

    /// The job file's name, which the pick and the table's workload are
    /// matched by.
    fn file_name(path: &str) -> &str {
        Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(path)
    }

    fn group<'a>(&self, fronts: &'a [Front]) -> Option<&'a Front> {
        fronts.iter().find(|f| {
            Pick::file_name(&f.workload) == Pick::file_name(&self.workload)
                && f.device == self.device
                && f.host == self.host
        })
    }
}

/// Where a pick stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Standing {
    /// The sweep has no group for the pick's workload, device and host.
    NoGroup,
    /// The group has no `adaptive` setting with the pick's delta and thr.
    NotSwept,
    /// Nothing in the group does better on both.
    OnFront(Setting),
    /// The front's settings that do at least as well on both and better
    /// on one.
    Dominated { pick: Setting, by: Vec<Setting> },
}

/// Where `pick` stands among `fronts`' settings (of the pick's mode; the
/// first such setting when the sweep has several runtimes).
pub fn judge(pick: &Pick, fronts: &[Front]) -> Standing {
    let Some(f) = pick.group(fronts) else {
        return Standing::NoGroup;
    };
    let policy = pick.policy();
    let Some(s) = f
        .all
        .iter()
        .find(|s| s.policy == policy && s.mode == pick.mode)
    else {
        return Standing::NotSwept;
    };
    let by: Vec<Setting> = f
        .front
        .iter()
        .filter(|q| dominates(q, s))
        .cloned()
        .collect();
    if by.is_empty() {
        Standing::OnFront(s.clone())
    } else {
        Standing::Dominated {
            pick: s.clone(),
            by,
        }
    }
}

fn head(p: &Pick) -> String {
    format!(
        "{} on {} ({}): {} (from {})",
        Pick::file_name(&p.workload),
        p.device,
        p.host,
        p.policy(),
        p.source
    )
}

/// The judgements as text, a block per pick.
pub fn text(judged: &[(Pick, Standing)]) -> String {
    let mut out = String::new();
    if judged.is_empty() {
        return out;
    }
    out.push_str("tune's picks against the fronts (interrupts/s against p99):\n");
    for (p, s) in judged {
        out.push_str(&format!("  {}\n", head(p)));
        match s {
            Standing::NoGroup => out.push_str(
                "    not in the sweep: no points of this workload (by file name), device and host\n",
            ),
            Standing::NotSwept => out.push_str(&format!(
                "    not in the sweep: add delta = \"{}\" and thr = {} to adaptive's grid\n",
                policy::format_nanos(p.delta_ns),
                p.thr
            )),
            Standing::OnFront(s) => {
                out.push_str(&format!("    on the front:  {}\n", line(s).trim_start()))
            }
            Standing::Dominated { pick, by } => {
                out.push_str(&format!(
                    "    OFF the front: {}\n    {} {} better on both; the first:\n      {}\n",
                    line(pick).trim_start(),
                    by.len(),
                    if by.len() == 1 { "setting on the front does" } else { "settings on the front do" },
                    line(&by[0]).trim_start()
                ));
            }
        }
    }
    out
}

/// The swept picks as marks for [`crate::figure::svg_marked`]: `tune
/// delta=6us thr=12: off the front`.
pub fn marks(judged: &[(Pick, Standing)], fronts: &[Front]) -> Vec<Mark> {
    judged
        .iter()
        .filter_map(|(p, s)| {
            let (setting, verdict) = match s {
                Standing::OnFront(s) => (s, "on the front"),
                Standing::Dominated { pick, .. } => (pick, "off the front"),
                Standing::NoGroup | Standing::NotSwept => return None,
            };
            let group = fronts
                .iter()
                .position(|f| p.group(std::slice::from_ref(f)).is_some())?;
            Some(Mark {
                group,
                name: format!(
                    "tune delta={} thr={}: {verdict}",
                    policy::format_nanos(p.delta_ns),
                    p.thr
                ),
                setting: setting.clone(),
            })
        })
        .collect()
}

/// The judgements as JSON (`picks.json`).
pub fn json(judged: &[(Pick, Standing)]) -> String {
    let v: Vec<Value> = judged
        .iter()
        .map(|(p, s)| {
            let (standing, setting, by) = match s {
                Standing::NoGroup => ("no points of its workload, device and host", None, vec![]),
                Standing::NotSwept => ("not in the sweep", None, vec![]),
                Standing::OnFront(s) => ("on the front", Some(s.to_json()), vec![]),
                Standing::Dominated { pick, by } => (
                    "off the front",
                    Some(pick.to_json()),
                    by.iter().map(Setting::to_json).collect(),
                ),
            };
            json!({
                "source": p.source,
                "workload": p.workload,
                "device": p.device,
                "host": p.host,
                "delta_ns": p.delta_ns,
                "thr": p.thr,
                "policy": p.policy(),
                "standing": standing,
                "setting": setting,
                "dominated_by": by,
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::fronts;
    use crate::merge::{Row, Table};

    fn row(policy: &str, irq: f64, p99: u64) -> Row {
        Row {
            workload: "../w.fio".into(),
            interrupts_per_sec: irq,
            p99_ns: p99,
            ..Row::sample(policy)
        }
    }

    fn pick(delta_us: u64, thr: u64) -> Pick {
        Pick {
            source: "tune.json".into(),
            workload: "examples/w.fio".into(),
            mode: "sim".into(),
            device: "optane".into(),
            host: "h".into(),
            delta_ns: delta_us * 1000,
            thr,
        }
    }

    #[test]
    fn a_pick_is_on_off_or_not_in_the_sweep() {
        let table = Table {
            rows: vec![
                row("adaptive delta=6us thr=12", 100.0, 10),
                row("adaptive delta=6us thr=32", 50.0, 9),
                row("adaptive delta=2us thr=1", 300.0, 8),
            ],
            ..Table::default()
        };
        let f = fronts(&table);
        // thr=32 beats thr=12 on both; thr=1 trades interrupts for p99.
        match judge(&pick(6, 12), &f) {
            Standing::Dominated { pick, by } => {
                assert_eq!(pick.policy, "adaptive delta=6us thr=12");
                let by: Vec<&str> = by.iter().map(|s| s.policy.as_str()).collect();
                assert_eq!(by, ["adaptive delta=6us thr=32"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(judge(&pick(6, 32), &f), Standing::OnFront(_)));
        assert!(matches!(judge(&pick(2, 1), &f), Standing::OnFront(_)));
        assert_eq!(judge(&pick(6, 16), &f), Standing::NotSwept);
        let mut elsewhere = pick(6, 12);
        elsewhere.device = "p3700".into();
        assert_eq!(judge(&elsewhere, &f), Standing::NoGroup);
        let shown = text(&[(pick(6, 12), judge(&pick(6, 12), &f))]);
        assert!(shown.contains("OFF the front"), "{shown}");
        let judged = [
            (pick(6, 12), judge(&pick(6, 12), &f)),
            (pick(6, 16), Standing::NotSwept),
        ];
        let m = marks(&judged, &f);
        assert_eq!(m.len(), 1, "only a swept pick is drawn");
        assert_eq!(m[0].name, "tune delta=6us thr=12: off the front");
        let figure = crate::figure::svg_marked(&f, &m).unwrap();
        assert!(
            figure.contains("tune delta=6us thr=12: off the front"),
            "{figure}"
        );
        assert!(
            shown.contains("1 setting on the front does better on both"),
            "{shown}"
        );
    }

    #[test]
    fn tune_json_is_read_and_a_wrong_file_is_named() {
        let ok = r#"{"workload": "examples/w.fio", "mode": "sim", "device": "optane",
            "host": "h", "delta_ns": 6000, "thr": 12}"#;
        let p = Pick::from_json("t.json", ok).unwrap();
        assert_eq!(p.policy(), "adaptive delta=6us thr=12");
        let e = Pick::from_json("t.json", r#"{"mode": "sim"}"#).unwrap_err();
        assert!(e.starts_with("t.json: no 'workload'"), "{e}");
        let e = Pick::from_json("t.json", &ok.replace("\"sim\"", "\"emu\"")).unwrap_err();
        assert!(e.contains("simulator"), "{e}");
    }
}
