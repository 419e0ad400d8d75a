//! An experiment's application file (issue 16), with the run's overrides
//! applied: the artifact's scripts vary one db_bench flag or KVell argument
//! per run (`--threads`, the YCSB workload, the scan length), so a run
//! names the keys it changes as `INSTANCE.KEY=VALUE` (VALUE a TOML value)
//! over the file every run of the experiment shares.

use toml::{Table, Value};

/// `text` with every `INSTANCE.KEY=VALUE` of `overrides` set in the
/// `[[instance]]` named INSTANCE; an error names the override.
pub fn with_overrides(text: &str, overrides: &[String]) -> Result<String, String> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: Table = toml::from_str(text).map_err(|e| e.message().to_string())?;
    for o in overrides {
        let (path, value) = o
            .split_once('=')
            .ok_or_else(|| format!("override '{o}': needs INSTANCE.KEY=VALUE"))?;
        let (instance, key) = path
            .split_once('.')
            .ok_or_else(|| format!("override '{o}': needs INSTANCE.KEY=VALUE"))?;
        let value: Value = toml::from_str::<Table>(&format!("v = {value}"))
            .map_err(|e| format!("override '{o}': {}", e.message()))?
            .remove("v")
            .expect("parsed a table with v");
        let target = doc
            .get_mut("instance")
            .and_then(Value::as_array_mut)
            .and_then(|list| {
                list.iter_mut()
                    .filter_map(Value::as_table_mut)
                    .find(|t| t.get("name").and_then(Value::as_str) == Some(instance))
            })
            .ok_or_else(|| format!("override '{o}': no instance named '{instance}'"))?;
        target.insert(key.to_string(), value);
    }
    toml::to_string(&doc).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "[[instance]]\nname = \"rocks\"\nengine = \"rocksdb\"\nthreads = 4\n\n\
                        [[instance]]\nname = \"kvell\"\nengine = \"kvell\"\nworkload = \"a\"\n";

    #[test]
    fn an_override_changes_its_instance_only() {
        let out = with_overrides(
            FILE,
            &["kvell.workload=\"c\"".into(), "rocks.threads=8".into()],
        )
        .unwrap();
        let doc: Table = toml::from_str(&out).unwrap();
        let list = doc["instance"].as_array().unwrap();
        assert_eq!(list[0]["threads"].as_integer(), Some(8));
        assert_eq!(list[1]["workload"].as_str(), Some("c"));
        assert_eq!(list[0].get("workload"), None);
    }

    #[test]
    fn a_bad_override_is_named() {
        for bad in ["threads=8", "nosuch.threads=8", "rocks.threads=eight"] {
            let err = with_overrides(FILE, &[bad.into()]).unwrap_err();
            assert!(err.contains(bad), "{err}");
        }
        assert_eq!(with_overrides(FILE, &[]).unwrap(), FILE);
    }

    #[test]
    fn an_override_past_a_bound_is_refused_by_key_before_threads_exist() {
        // Overrides reach the file's parse, so every bound holds for them.
        let file = FILE.replace("threads = 4", "benchmark = \"readrandom\"\nthreads = 4");
        let out = with_overrides(&file, &["rocks.threads=1000000000".into()]).unwrap();
        let err = apps::file::AppFile::parse(&out, "x/app.toml").unwrap_err();
        let err = err.to_string();
        assert!(
            err.contains("option 'threads': 1000000000 is more than 256"),
            "{err}"
        );
        assert!(err.starts_with("x/app.toml:"), "{err}");
        let out = with_overrides(&file, &["kvell.scan_length=16385".into()]).unwrap();
        let err = apps::file::AppFile::parse(&out, "x/app.toml").unwrap_err();
        assert!(
            err.to_string()
                .contains("option 'scan_length': 16385 is more than 16384"),
            "{err}"
        );
        // The figures' own overrides (fig22, table7: 4 and 8 threads) pass.
        for n in [4, 8] {
            let out = with_overrides(&file, &[format!("rocks.threads={n}")]).unwrap();
            apps::file::AppFile::parse(&out, "x/app.toml").unwrap();
        }
    }
}
