//! The parts of a resolved configuration that every experiment keys its
//! runs on, spelt one way so that a sweep and `tune` describe the same
//! strategy or profile alike.

use policy::PolicySpec;
use serde_json::{json, Map, Value};

use crate::canon::fingerprint;

/// A strategy with every parameter in force (its defaults filled in:
/// `policy::Settings`), each as the command line spells it: `adaptive`
/// with the default thr and `adaptive --thr 32` are one configuration when
/// the default is 32.
pub fn policy(spec: &PolicySpec) -> Value {
    let settings = policy::Settings::of(spec);
    let mut params = Map::new();
    for (name, v) in &settings.params {
        params.insert((*name).to_string(), json!(v.to_string()));
    }
    json!({ "name": settings.name, "params": Value::Object(params) })
}

/// A loaded profile by its name and its [`fingerprint`].
pub fn profile(name: &str, loaded: &impl std::fmt::Debug) -> Value {
    json!({ "name": name, "fingerprint": fingerprint(loaded) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_spelt_out_is_the_same_policy() {
        let implied = PolicySpec::named("adaptive");
        let d = policy::Settings::of(&implied);
        let thr = d
            .params
            .iter()
            .find(|(n, _)| *n == "thr")
            .unwrap()
            .1
            .to_string();
        assert!(!thr.is_empty());
        let explicit = PolicySpec {
            thr: implied.thr.or(Some(thr.parse().unwrap())),
            ..implied.clone()
        };
        assert_eq!(policy(&implied), policy(&explicit));
        let other = PolicySpec {
            thr: Some(thr.parse::<u32>().unwrap() + 1),
            ..implied
        };
        assert_ne!(policy(&other), policy(&explicit));
    }
}
