//! Where each experiment's parameters come from (issue 13): the authors'
//! artifact (`amytai/cinterrupts-osdi`, a script and its parameters), the
//! paper's text (a section), or our own choice (with the reason). The
//! report prints every experiment's table, so a verdict can be read against
//! what was actually run.

/// Where one parameter comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A file of the authors' artifact (`fig5/test.sh`, `fig5/rand_mix.fio`).
    Artifact(&'static str),
    /// The paper's text (`TOS 3.3`, `TOS 5.3, Fig 21`).
    Paper(&'static str),
    /// Our choice, where neither gives it, with the reason.
    Ours(&'static str),
}

impl Origin {
    pub fn describe(&self) -> String {
        match self {
            Origin::Artifact(file) => format!("artifact `{file}`"),
            Origin::Paper(section) => format!("paper, {section}"),
            Origin::Ours(why) => format!("ours: {why}"),
        }
    }

    pub fn is_ours(&self) -> bool {
        matches!(self, Origin::Ours(_))
    }
}

/// One parameter of an experiment, its value and its source.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: &'static str,
    pub value: String,
    pub origin: Origin,
}

/// An experiment's provenance: what it reproduces as a whole, then each
/// parameter.
#[derive(Clone, Debug)]
pub struct Provenance {
    pub source: Origin,
    pub params: Vec<Param>,
}

impl Provenance {
    pub fn new(source: Origin) -> Provenance {
        Provenance {
            source,
            params: Vec::new(),
        }
    }

    /// Adds a parameter.
    pub fn with(mut self, name: &'static str, value: impl Into<String>, origin: Origin) -> Self {
        self.params.push(Param {
            name,
            value: value.into(),
            origin,
        });
        self
    }

    /// Sets a parameter: replaces the one named `name`, or adds it.
    pub fn set(self, name: &'static str, value: impl Into<String>, origin: Origin) -> Self {
        let mut out = self;
        out.params.retain(|p| p.name != name);
        out.with(name, value, origin)
    }

    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The parameters whose value is our choice.
    pub fn ours(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.origin.is_ours())
    }
}

/// The run length and repetitions every experiment shares: scaled down
/// from the artifact's 60 s x 10 runs to what `--quick`/`--full` plan.
pub const RUN_LENGTH: Origin = Origin::Ours(
    "the artifact runs 60 s x 10 runs (`runtime=60`, `runs=$(seq 1 10)` in every test.sh); \
     the simulator reaches a steady state in far less virtual time, see `--sim-runtime`",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_found_by_name_and_ours_are_listed() {
        let p = Provenance::new(Origin::Artifact("fig5/test.sh"))
            .with("iodepth", "16", Origin::Artifact("fig5/test.sh"))
            .with(
                "device",
                "optane",
                Origin::Ours("the artifact's env names no model"),
            );
        assert_eq!(p.get("iodepth").map(|x| x.value.as_str()), Some("16"));
        assert!(p.get("bs").is_none());
        let ours: Vec<&str> = p.ours().map(|x| x.name).collect();
        assert_eq!(ours, ["device"]);
        assert_eq!(
            Origin::Paper("TOS 3.3").describe(),
            "paper, TOS 3.3".to_string()
        );
    }
}
