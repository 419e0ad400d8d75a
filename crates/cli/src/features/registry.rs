//! The features, read from the registries the crates keep (never a list
//! kept here): the device-side strategies (`policy::catalogue::STRATEGIES`),
//! the host mechanisms with their kernel ranges (`host::mechanism::MECHANISMS`
//! and their `era`s), the device profile's keys (`service::profile::KEYS`),
//! the trace formats (`traces::Format::ALL`) and the verbs (the binary's
//! clap command tree). Each row carries the spellings a test is looked
//! for by ([`Spelling`]).

use host::mechanism::{Kind, Mechanism, Settings, MECHANISMS};

use super::scan::{Spelling, Table, TestFn};

/// One feature.
pub struct Row {
    /// The cells before "checked by", the first naming the feature.
    pub cells: Vec<String>,
    /// A test whose body holds one of these checks it.
    pub spellings: Vec<Spelling>,
    /// Put first among its tests: those whose name holds this.
    pub word: String,
    /// The generator's own tests count for it (the `features` verb only:
    /// for every other row they are fixtures, [`TestFn::is_the_generators`]).
    pub generator: bool,
}

/// One kind of feature: a table of its own.
pub struct Section {
    pub title: String,
    /// The headers of [`Row::cells`].
    pub headers: Vec<&'static str>,
    pub rows: Vec<Row>,
    /// Which tests are looked in at all (the verbs: the binary's crate's;
    /// the profile keys: tests that read a device profile).
    pub context: fn(&TestFn) -> bool,
    /// The context, in words, for the rule the table states.
    pub context_shown: &'static str,
    /// A test over the whole registry (it names the registry and walks
    /// every row), listed once for the section.
    pub whole: fn(&TestFn) -> bool,
    /// The registry, in words.
    pub whole_shown: &'static str,
}

fn s(x: impl Into<String>) -> String {
    x.into()
}

fn code(t: &TestFn, c: &str) -> bool {
    Spelling::Code(s(c)).found_in(t)
}

/// Every section, in the order the table shows them.
pub fn sections(cmd: &clap::Command) -> Vec<Section> {
    vec![
        strategies(),
        mechanisms(),
        profile_keys(),
        formats(),
        verbs(cmd),
    ]
}

fn strategies() -> Section {
    let rows = policy::catalogue::STRATEGIES
        .iter()
        .map(|st| {
            let params: Vec<String> = st
                .params
                .iter()
                .map(|p| format!("`--{} {}`", p.option(), p.default_shown()))
                .collect();
            let n = st.name;
            Row {
                cells: vec![
                    format!("`{n}`"),
                    if params.is_empty() {
                        s("none")
                    } else {
                        params.join(", ")
                    },
                ],
                spellings: vec![
                    Spelling::Literal(s(n)),
                    Spelling::InLiteral(format!("--policy {n}")),
                    Spelling::InLiteral(format!("--policy={n}")),
                    Spelling::InLiteral(format!("\"{n}\"")),
                ],
                word: s(n),
                generator: false,
            }
        })
        .collect();
    Section {
        title: s("Device-side strategies"),
        headers: vec!["strategy", "parameters (defaults)"],
        rows,
        context: |_| true,
        context_shown: "every test",
        whole: |t| {
            code(t, "catalogue::STRATEGIES")
                || (code(t, "STRATEGIES") && !code(t, "uring::STRATEGIES") && t.krate() != "host")
        },
        whole_shown: "`policy::catalogue::STRATEGIES`",
    }
}

fn mechanisms() -> Section {
    let mut rows = Vec::new();
    for m in MECHANISMS {
        let flag = format!("--{}", m.flag);
        let words: Vec<&str> = m
            .eras
            .iter()
            .map(|(w, _)| *w)
            .filter(|w| !w.is_empty())
            .collect();
        for (word, era) in m.eras {
            let (shown, spellings) = match (m.kind, *word) {
                (Kind::Flag, _) => (
                    flag.clone(),
                    vec![
                        Spelling::Literal(flag.clone()),
                        Spelling::InLiteral(flag.clone()),
                        Spelling::Assign {
                            key: s(m.key),
                            word: Some(s("true")),
                            table: Table::Any,
                        },
                        Spelling::Assign {
                            key: s(m.key),
                            word: Some(s("on")),
                            table: Table::Any,
                        },
                    ],
                ),
                (Kind::Word, "") => {
                    let rest: Vec<&str> = m
                        .value_name
                        .split('|')
                        .filter(|v| !words.contains(v))
                        .collect();
                    (
                        format!("{flag} {}", rest.join("|")),
                        vec![
                            Spelling::OptionBut {
                                flag: flag.clone(),
                                except: words.iter().map(|w| s(*w)).collect(),
                            },
                            Spelling::Assign {
                                key: s(m.key),
                                word: None,
                                table: Table::Any,
                            },
                        ],
                    )
                }
                (Kind::Word, w) => (
                    format!("{flag} {w}"),
                    [
                        Spelling::Option {
                            flag: flag.clone(),
                            word: s(w),
                        },
                        Spelling::Assign {
                            key: s(m.key),
                            word: Some(s(w)),
                            table: Table::Any,
                        },
                    ]
                    .into_iter()
                    .chain(variant::<host::poll::Mode>(m, w))
                    .chain(variant::<host::mechanism::Wakeup>(m, w))
                    .chain(variant::<host::mechanism::Journal>(m, w))
                    .collect(),
                ),
            };
            let fronts: Vec<&str> = m.front_ends.iter().map(|(f, _)| f.as_str()).collect();
            rows.push(Row {
                cells: vec![
                    format!("`{shown}`"),
                    format!("`{}`", m.key),
                    host::era::brief(era),
                    fronts.join(", "),
                ],
                spellings,
                word: if word.is_empty() { s(m.flag) } else { s(*word) },
                generator: false,
            });
        }
    }
    Section {
        title: s("Host mechanisms and their kernels"),
        headers: vec!["mechanism", "host profile key", "kernel", "front ends"],
        rows,
        context: |_| true,
        context_shown: "every test",
        whole: |t| code(t, "MECHANISMS"),
        whole_shown: "`host::mechanism::MECHANISMS`",
    }
}

/// The word as the code names it when `m` reads it into a `T` (`pas` is
/// `Mode::Pas`): `T`'s own parser and its derived `Debug`, checked against
/// the settings `m` makes of it, so a test that builds the setting in code
/// counts too.
fn variant<T: std::str::FromStr + std::fmt::Debug>(m: &Mechanism, word: &str) -> Option<Spelling> {
    let v = word.parse::<T>().ok()?;
    let mut settings = Settings::default();
    (m.set)(&mut settings, word).ok()?;
    if !format!("{settings:?}").contains(&format!("Some({v:?})")) {
        return None;
    }
    let ty = std::any::type_name::<T>().rsplit("::").next()?;
    Some(Spelling::Code(format!("{ty}::{v:?}")))
}

fn profile_keys() -> Section {
    let rows = service::profile::KEYS
        .iter()
        .map(|k| {
            let (table, key) = match k.name.split_once('.') {
                Some((t, k)) => (Table::Named(s(t)), k),
                None => (Table::Top, k.name),
            };
            Row {
                cells: vec![
                    format!("`{}`", k.name),
                    s(if k.required { "required" } else { "optional" }),
                    s(k.what),
                ],
                spellings: vec![
                    Spelling::Assign {
                        key: s(key),
                        word: None,
                        table,
                    },
                    Spelling::InLiteral(format!("'{}'", k.name)),
                ],
                word: s(key),
                generator: false,
            }
        })
        .collect();
    Section {
        title: s("Device profile keys"),
        headers: vec!["key", "required", "what"],
        rows,
        context: |t| {
            code(t, "DeviceProfile")
                || ["[read]", "[write]", "profiles/devices/"]
                    .iter()
                    .any(|c| Spelling::InLiteral(s(*c)).found_in(t))
        },
        context_shown: "tests that read a device profile (naming `DeviceProfile`, or a literal holding `[read]`, `[write]` or `profiles/devices/`)",
        whole: |t| t.krate() == "service" && code(t, "KEYS"),
        whole_shown: "`service::profile::KEYS`",
    }
}

fn formats() -> Section {
    let rows = traces::Format::ALL
        .into_iter()
        .map(|f| {
            let n = f.name();
            Row {
                cells: vec![
                    format!("`{n}`"),
                    s(if f.is_binary() { "binary" } else { "text" }),
                ],
                spellings: vec![
                    Spelling::Literal(s(n)),
                    Spelling::Option {
                        flag: s("--format"),
                        word: s(n),
                    },
                    Spelling::Code(format!("Format::{f:?}")),
                    Spelling::Assign {
                        key: s("format"),
                        word: Some(s(n)),
                        table: Table::Any,
                    },
                ],
                word: n.replace('-', "_"),
                generator: false,
            }
        })
        .collect();
    Section {
        title: s("Trace formats"),
        headers: vec!["format", "layout"],
        rows,
        context: |_| true,
        context_shown: "every test",
        whole: |t| code(t, "Format::ALL"),
        whole_shown: "`traces::Format::ALL`",
    }
}

fn verbs(cmd: &clap::Command) -> Section {
    let mut rows = Vec::new();
    let shown = |c: &clap::Command| !c.is_hide_set() && c.get_name() != "help";
    for v in cmd.get_subcommands().filter(|c| shown(c)) {
        // `run` right after `sweep` is `sweep run`, not the verb `run`.
        let parents: Vec<String> = cmd
            .get_subcommands()
            .filter(|p| p.find_subcommand(v.get_name()).is_some())
            .map(|p| s(p.get_name()))
            .collect();
        rows.push(verb_row(vec![s(v.get_name())], parents, v));
        for sub in v.get_subcommands().filter(|c| shown(c)) {
            rows.push(verb_row(
                vec![s(v.get_name()), s(sub.get_name())],
                Vec::new(),
                sub,
            ));
        }
    }
    Section {
        title: s("Verbs"),
        headers: vec!["verb", "what"],
        rows,
        context: |t| t.krate() == "cli",
        context_shown: "the binary's tests (`crates/cli`)",
        whole: |t| t.krate() == "cli" && code(t, "get_subcommands"),
        whole_shown: "the clap command tree",
    }
}

fn verb_row(path: Vec<String>, not_after: Vec<String>, c: &clap::Command) -> Row {
    let about = c
        .get_about()
        .map(|a| a.to_string())
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let joined = path.join(" ");
    Row {
        cells: vec![format!("`{joined}`"), about],
        spellings: vec![
            Spelling::Verb {
                path: path.clone(),
                not_after,
            },
            Spelling::InLiteral(format!("cinterrupts {joined}")),
        ],
        generator: path == ["features"],
        word: path.join("_"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str) -> &'static Mechanism {
        MECHANISMS.iter().find(|m| m.key == key).unwrap()
    }

    #[test]
    fn a_word_is_spelt_as_its_variant_only_where_its_mechanism_reads_it_so() {
        let completion = row("completion");
        assert_eq!(
            variant::<host::poll::Mode>(completion, "pas"),
            Some(Spelling::Code("Mode::Pas".into()))
        );
        assert_eq!(
            variant::<host::mechanism::Wakeup>(row("wakeup_rule"), "boost-code"),
            Some(Spelling::Code("Wakeup::BoostCode".into()))
        );
        // Not a word of Wakeup's; and Mode's word given to another row.
        assert_eq!(variant::<host::mechanism::Wakeup>(completion, "pas"), None);
        assert_eq!(
            variant::<host::poll::Mode>(row("wakeup_rule"), "poll"),
            None
        );
    }

    #[test]
    fn every_mechanism_word_and_strategy_has_a_row_of_its_own() {
        let words: usize = MECHANISMS.iter().map(|m| m.eras.len()).sum();
        assert_eq!(mechanisms().rows.len(), words);
        assert_eq!(strategies().rows.len(), policy::catalogue::STRATEGIES.len());
        assert_eq!(formats().rows.len(), traces::Format::ALL.len());
        assert_eq!(profile_keys().rows.len(), service::profile::KEYS.len());
    }
}
