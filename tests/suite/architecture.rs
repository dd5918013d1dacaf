//! The module graph a newcomer can draw: no import cycle among the top-level modules of `src/`,
//! and imports that only point down the declared layers (the module layers drawn in
//! `docs/architecture.md`).
//!
//! The graph is read from the source text, not the compiler: every `crate::NAME` path (grouped
//! `use crate::{a, b::c}` included) in a file under `src/NAME.rs` or `src/NAME/` is an edge from
//! that top-level module to `NAME`; `main.rs` is the binary, whose paths say `chatcli::NAME`.
//! Comment lines are skipped, so a doc line naming another module is not an import. Test code
//! inside `src/` counts: a `#[cfg(test)]` import ties modules together just the same. A new
//! top-level module must be given a layer in `LAYERS`, or this test says so.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// Top-level module -> the top-level modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The layers, highest first; a module may import its own layer and the ones below it.
const LAYERS: &[(&str, &[&str])] = &[
    ("front ends", &["main", "cli", "ui", "tui", "exec", "bench"]),
    ("session and agent", &["session", "config", "agent"]),
    (
        "features",
        &[
            "prompt",
            "tools",
            "memory",
            "hooks",
            "rules",
            "user_settings",
            "command_files",
            "cost",
            "mcp",
            "skills",
            "agents",
            "secrets",
            "sandbox",
            "process",
            "session_log",
            "logging",
        ],
    ),
    // The wire clients: they know the protocol and the leaves, never a feature.
    ("providers", &["provider"]),
    (
        "protocol and leaves",
        &[
            "protocol",
            "conversation",
            "clock",
            "env",
            "private_fs",
            "files",
            "project",
            "tokens",
        ],
    ),
];

/// The top-level modules under `src` and the edges between them.
fn module_graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    let Ok(entries) = std::fs::read_dir(src) else {
        panic!("cannot read {}", src.display());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            graph.entry(name).or_default();
        } else if let Some(stem) = name.strip_suffix(".rs")
            && stem != "lib"
        {
            graph.entry(stem.to_string()).or_default();
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    let reexports = lib_reexports(src);
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    for file in files {
        let Ok(rel) = file.strip_prefix(src) else {
            continue;
        };
        let Some(first) = rel.components().next() else {
            continue;
        };
        let first = first.as_os_str().to_string_lossy();
        let from = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if !modules.contains(&from) {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let root = if from == "main" { "chatcli" } else { "crate" };
        let mut imported = imported_modules(&text, root);
        imported.extend(reached_through_super(&text, rel));
        for to in imported {
            // A name `lib.rs` re-exports stands for the module it comes from.
            let to = reexports.get(&to).cloned().unwrap_or(to);
            if to != from && modules.contains(&to) {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

/// `pub use crate::module::Name;` in `lib.rs`: each re-exported name and its module.
fn lib_reexports(src: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
    let pattern = regex::Regex::new(
        r"pub use (?:crate::)?([a-z_][a-z0-9_]*)::(?:[A-Za-z0-9_]+::)*([A-Za-z0-9_]+)\s*;",
    )
    .expect("regex");
    pattern
        .captures_iter(&text)
        .map(|c| (c[2].to_string(), c[1].to_string()))
        .collect()
}

/// The top-level modules a file reaches with `super::` paths that climb to the crate root: in
/// `src/a.rs`, `super::b` is `crate::b`; in `src/a/x.rs`, `super::super::b` is.
fn reached_through_super(text: &str, rel: &Path) -> BTreeSet<String> {
    let depth = rel.components().count();
    let climb = "super::".repeat(depth);
    let pattern = regex::Regex::new(&format!(
        r"(?:^|[^:a-z_]){}([a-z_][a-z0-9_]*)",
        regex::escape(&climb)
    ))
    .expect("regex");
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .flat_map(|line| {
            pattern
                .captures_iter(line)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .filter(|name| name != "super")
        .collect()
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The first segment of every `ROOT::…` path in `text` (outside comment lines).
fn imported_modules(text: &str, root: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let single = regex::Regex::new(&format!(r"\b{root}::([A-Za-z_][A-Za-z0-9_]*)")).expect("regex");
    let mut found: BTreeSet<String> = single
        .captures_iter(&code)
        .map(|c| c[1].to_string())
        .collect();
    // `use crate::{a::X, b}`: the first name of each top-level item of the group.
    let prefix = format!("{root}::{{");
    let mut rest = code.as_str();
    while let Some(at) = rest.find(&prefix) {
        rest = &rest[at + prefix.len()..];
        let mut depth = 0usize;
        let mut item_start = true;
        let mut name = String::new();
        for c in rest.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if item_start && (c.is_ascii_alphanumeric() || c == '_') => name.push(c),
                _ if item_start && !name.is_empty() => {
                    found.insert(std::mem::take(&mut name));
                    item_start = false;
                }
                _ => {}
            }
        }
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

/// One cycle per strongly connected component of more than one module, each written
/// `a → b → … → a` starting from its alphabetically first module.
fn cycles(graph: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: BTreeSet<&String> = BTreeSet::new();
    for start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        // The shortest way from `start` back to itself, if any.
        let mut previous: BTreeMap<&String, &String> = BTreeMap::new();
        let mut queue: VecDeque<&String> = VecDeque::from([start]);
        let mut closed = None;
        while let Some(at) = queue.pop_front() {
            for next in graph.get(at).into_iter().flatten() {
                if next == start {
                    closed = Some(at);
                    break;
                }
                if next != start && !previous.contains_key(next) {
                    previous.insert(next, at);
                    queue.push_back(next);
                }
            }
            if closed.is_some() {
                break;
            }
        }
        let Some(mut at) = closed else { continue };
        let mut path = vec![at];
        while at != start {
            at = previous[at];
            path.push(at);
        }
        path.reverse();
        seen.extend(path.iter().copied());
        let mut names: Vec<&str> = path.iter().map(|s| s.as_str()).collect();
        names.push(start);
        out.push(names.join(" → "));
    }
    out
}

/// Imports that point up the layers, and modules that have no layer.
fn layer_violations(graph: &Graph, layers: &[(&str, &[&str])]) -> Vec<String> {
    let layer_of = |module: &str| layers.iter().position(|(_, ms)| ms.contains(&module));
    let mut out = Vec::new();
    for (from, tos) in graph {
        let Some(from_layer) = layer_of(from) else {
            out.push(format!(
                "module `{from}` has no layer: add it to LAYERS in tests/suite/architecture.rs \
                 (and to the module layers drawn in docs/architecture.md)"
            ));
            continue;
        };
        for to in tos {
            if let Some(to_layer) = layer_of(to)
                && to_layer < from_layer
            {
                out.push(format!(
                    "`{from}` ({}) imports `{to}` ({}): lower layers must not import higher ones",
                    layers[from_layer].0, layers[to_layer].0
                ));
            }
        }
    }
    out
}

/// Every problem with the graph under `src`, one line each.
fn check(src: &Path, layers: &[(&str, &[&str])]) -> Result<(), String> {
    let graph = module_graph(src);
    let mut problems: Vec<String> = cycles(&graph)
        .into_iter()
        .map(|c| format!("import cycle: {c}"))
        .collect();
    problems.extend(layer_violations(&graph, layers));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[test]
fn top_level_modules_form_no_cycle_and_respect_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    if let Err(problems) = check(&src, LAYERS) {
        panic!("the module graph under src/ is not layered:\n{problems}");
    }
    // The reader saw real files: the agent imports the provider, the session the agent.
    let graph = module_graph(&src);
    assert!(graph["agent"].contains("provider"), "{graph:?}");
    assert!(graph["session"].contains("agent"), "{graph:?}");
    assert!(graph["main"].contains("session"), "{graph:?}");
}

fn tiny_crate(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, text).expect("write");
    }
    dir
}

#[test]
fn a_deliberate_cycle_fails_and_is_named() {
    let dir = tiny_crate(&[
        (
            "lib.rs",
            "pub mod alpha;\npub mod beta;\npub mod gamma;\npub mod leaf;\n",
        ),
        ("alpha.rs", "use crate::beta::B;\nuse crate::leaf::f;\n"),
        // A nested file, and a grouped import.
        ("beta.rs", "mod inner;\n"),
        ("beta/inner.rs", "use crate::{gamma::{G, H}, leaf};\n"),
        ("gamma.rs", "pub fn g() { crate::alpha::a() }\n"),
        // A comment naming a module is not an import.
        (
            "leaf.rs",
            "//! Unlike crate::alpha, imports nothing.\npub fn f() {}\n",
        ),
    ]);
    let layers: &[(&str, &[&str])] = &[("all", &["alpha", "beta", "gamma", "leaf"])];
    let err = check(dir.path(), layers).expect_err("the cycle is found");
    assert_eq!(err, "import cycle: alpha → beta → gamma → alpha");

    // Without the closing edge the same crate passes.
    std::fs::write(dir.path().join("gamma.rs"), "pub fn g() {}\n").expect("write");
    assert_eq!(check(dir.path(), layers), Ok(()));
}

#[test]
fn an_import_up_the_layers_and_an_unplaced_module_fail() {
    let dir = tiny_crate(&[
        ("lib.rs", ""),
        ("main.rs", "use chatcli::front::run;\n"),
        ("front.rs", "use crate::base::Thing;\n"),
        ("base.rs", "pub struct Thing(crate::front::Ui);\n"),
        ("stray.rs", "\n"),
    ]);
    let layers: &[(&str, &[&str])] = &[("top", &["main", "front"]), ("bottom", &["base"])];
    let err = check(dir.path(), layers).expect_err("violations are found");
    assert!(err.contains("import cycle: base → front → base"), "{err}");
    assert!(
        err.contains(
            "`base` (bottom) imports `front` (top): lower layers must not import higher ones"
        ),
        "{err}"
    );
    assert!(err.contains("module `stray` has no layer"), "{err}");
    assert!(!err.contains("`main`"), "main imports down: {err}");
}

/// The benchmark's variants (`off`, `without:<feature>`, the reference row) switch features with
/// the variables a user sets, each declared in the settings registry (and so documented in
/// `docs/configuration.md`): no bench-only knob reaches the agent.
#[test]
fn the_benchmark_configures_the_agent_only_through_documented_settings() {
    let variants = chatcli::bench::variants();
    assert!(variants.len() > 2, "{variants:?}");
    for variant in variants {
        for (var, _) in &variant.env {
            assert!(
                chatcli::config::settings::find(var).is_some(),
                "variant {} sets {var}, which the settings registry does not declare",
                variant.mode
            );
        }
    }
}

/// Whether `name` is declared: by itself, as an alias, or by a per-name pattern
/// (`CHATCLI_AGENT_<NAME>_MODEL`).
fn declared(name: &str) -> bool {
    use chatcli::config::settings::{SETTINGS, find};
    find(name).is_some()
        || SETTINGS.iter().filter(|s| s.is_pattern()).any(|s| {
            let (head, tail) = s.var.split_once('<').unwrap_or((s.var, ""));
            let tail = tail.split_once('>').map_or("", |(_, t)| t);
            name.len() > head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        })
}

/// Every `CHATCLI_*` variable the program reads is declared once in the settings registry, so
/// `config.toml`, `/config` and the configuration reference know it: a feature that reads a new
/// variable without declaring it fails here.
#[test]
fn every_variable_the_program_reads_is_in_the_settings_registry() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut undeclared = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("config/settings.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read");
            for piece in text.split('"').skip(1).step_by(2) {
                let is_var = piece.starts_with("CHATCLI_")
                    && piece.len() > "CHATCLI_".len()
                    && piece
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    && !piece.ends_with('_');
                if is_var && !declared(piece) {
                    undeclared.push(format!("{} reads {piece}", path.display()));
                }
            }
        }
    }
    undeclared.sort();
    undeclared.dedup();
    assert!(
        undeclared.is_empty(),
        "declare these in src/config/settings.rs:\n{}",
        undeclared.join("\n")
    );
}

/// A test that needs something the machine may lack goes through `common::needs`, the one place
/// that fails under `CI=true` and prints the local skip line: a suite that prints its own skip
/// (and so passes in CI without running) fails here.
#[test]
fn every_skip_goes_through_the_one_helper() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite");
    let mut offenders = Vec::new();
    for entry in std::fs::read_dir(&suite).expect("tests/suite") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("architecture.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            // The message may sit on the lines after `eprintln!(`.
            let message: String = lines.iter().skip(n).take(3).copied().collect();
            let printed_skip = line.contains("eprintln!")
                && (message.contains("skip") || message.contains("note:"));
            let own_ci_check = line.contains("env::var(\"CI\")") && !line.contains("fn ");
            if printed_skip || own_ci_check {
                offenders.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "skip through crate::common::needs(what, present):\n{}",
        offenders.join("\n")
    );
}

/// Imports the graph must see besides `crate::` paths: `super::` climbing to the root from a
/// top-level file or a nested one, and a name `lib.rs` re-exports.
#[test]
fn super_paths_and_reexports_are_edges() {
    let dir = tiny_crate(&[
        (
            "lib.rs",
            "pub mod front;\npub mod base;\npub mod other;\npub use crate::front::Screen;\n",
        ),
        ("front.rs", "pub struct Screen;\n"),
        // `super::front` from a top-level file is `crate::front`.
        ("base.rs", "mod deep;\nuse super::front::Screen as S;\n"),
        // Two levels up from a nested file, and the re-exported name.
        ("other.rs", "mod deep;\n"),
        (
            "other/deep.rs",
            "use super::super::front;\nfn f(_: crate::Screen) {}\n",
        ),
        ("base/deep.rs", "use super::*;\n"),
    ]);
    let layers: &[(&str, &[&str])] = &[("top", &["front"]), ("bottom", &["base", "other"])];
    let err = check(dir.path(), layers).expect_err("the upward imports are found");
    assert!(
        err.contains("`base` (bottom) imports `front` (top)"),
        "{err}"
    );
    assert!(
        err.contains("`other` (bottom) imports `front` (top)"),
        "{err}"
    );
    // Without its `super::` import `base` no longer climbs; `other` still does through the
    // re-exported name alone.
    std::fs::write(dir.path().join("base.rs"), "mod deep;\n").expect("write");
    std::fs::write(
        dir.path().join("other/deep.rs"),
        "fn f(_: crate::Screen) {}\n",
    )
    .expect("write");
    let err = check(dir.path(), layers).expect_err("other still imports up");
    assert!(!err.contains("`base`"), "{err}");
    assert!(
        err.contains("`other` (bottom) imports `front` (top)"),
        "{err}"
    );
}

/// `src` text with every `#[cfg(test)]` item cut out (rustfmt closes an item with a `}` at the
/// indentation it opened at) and with comment lines dropped.
fn production_code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while let Some(&line) = lines.get(i) {
        i += 1;
        if line.trim() != "#[cfg(test)]" {
            if !line.trim_start().starts_with("//") {
                kept.push(line);
            }
            continue;
        }
        // Further attributes, then the item: one line ending in `;`, or a block.
        while lines
            .get(i)
            .is_some_and(|l| l.trim_start().starts_with("#["))
        {
            i += 1;
        }
        let Some(item) = lines.get(i) else { break };
        i += 1;
        if item.trim_end().ends_with(';') {
            continue;
        }
        let indent = item
            .get(..item.len() - item.trim_start().len())
            .unwrap_or("");
        let close = format!("{indent}}}");
        while lines.get(i).is_some_and(|l| l.trim_end() != close) {
            i += 1;
        }
        i += 1;
    }
    kept.join("\n")
}

/// The error argument of each `Result<…>` in `code` that is a bare `String`.
fn string_results(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (start, _) in code.match_indices("Result<") {
        let args = code.get(start + "Result<".len()..).unwrap_or("");
        let (mut depth, mut last_comma, mut end) = (1usize, None, None);
        let mut previous = ' ';
        for (i, c) in args.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                // `->` inside `Fn(…) -> T` closes nothing.
                '>' if previous == '-' => {}
                '>' | ')' | ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                ',' if depth == 1 => last_comma = Some(i),
                _ => {}
            }
            previous = c;
        }
        if let (Some(comma), Some(end)) = (last_comma, end) {
            let error: String = args
                .get(comma + 1..end)
                .unwrap_or("")
                .split_whitespace()
                .collect();
            if error == "String" || error == "std::string::String" {
                let written = args.get(..end).unwrap_or("").split_whitespace();
                let shown = written.collect::<Vec<_>>().join(" ");
                found.push(format!("Result<{shown}>"));
            }
        }
    }
    found
}

/// Error types written by hand in production code under `src`: `Result<_, String>`, an
/// `impl Error`/`impl Display for …Error`, an `…Error` type that does not derive
/// `thiserror::Error`, and `anyhow` anywhere but `main.rs`. One line each, with the file.
fn error_type_violations(src: &Path) -> Vec<String> {
    let hand_error =
        regex::Regex::new(r"impl(?:<[^>]*>)?\s+(?:std::)?(?:error::)?Error\s+for\s+[\w:]+")
            .expect("re");
    let hand_display =
        regex::Regex::new(r"impl(?:<[^>]*>)?\s+(?:std::)?(?:fmt::)?Display\s+for\s+[\w:]*Error\b")
            .expect("re");
    let error_type =
        regex::Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?(?:enum|struct)\s+(\w*Error)\b")
            .expect("re");
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read");
        let code = production_code(&text);
        let shown = file
            .strip_prefix(src)
            .unwrap_or(&file)
            .display()
            .to_string();
        if shown != "main.rs" && code.contains("anyhow") {
            problems.push(format!(
                "{shown}: anyhow outside main.rs: use the layer's error type"
            ));
        }
        for result in string_results(&code) {
            problems.push(format!(
                "{shown}: {result}: give the layer's error type a variant"
            ));
        }
        for found in hand_error
            .find_iter(&code)
            .chain(hand_display.find_iter(&code))
        {
            problems.push(format!(
                "{shown}: `{}`: derive thiserror::Error instead",
                found.as_str()
            ));
        }
        for found in error_type.captures_iter(&code) {
            let before = code
                .get(..found.get(0).map_or(0, |m| m.start()))
                .unwrap_or("");
            let attributes: Vec<&str> = before
                .lines()
                .rev()
                .take_while(|l| l.trim_start().starts_with("#[") || l.trim().is_empty())
                .collect();
            if !attributes.iter().any(|a| a.contains("thiserror::Error")) {
                problems.push(format!(
                    "{shown}: `{}` does not derive thiserror::Error",
                    &found[1]
                ));
            }
        }
    }
    problems
}

/// Every error in `src` is a `thiserror` type, one per layer (`docs/architecture.md` lists
/// them): a message built in a `String`, or a `Display` written by hand, fails here.
#[test]
fn errors_are_thiserror_types_not_strings() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = error_type_violations(&src);
    assert!(
        problems.is_empty(),
        "hand-made errors in src:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_string_error_or_a_hand_written_error_impl_fails_and_test_code_does_not() {
    let dir = tiny_crate(&[
        (
            "parse.rs",
            "pub fn parse(s: &str) -> Result<Vec<(u8, String)>, String> { todo() }\n\
             fn boxed() -> Result<Box<dyn Fn(u8) -> u8>, std::string::String> { todo() }\n\
             fn fine() -> Result<String, ParseError> { todo() }\n\
             fn glue() -> anyhow::Result<()> { todo() }\n\
             /// Returns `Result<(), String>` no more.\n\
             #[derive(Debug, thiserror::Error)]\n\
             #[error(\"bad\")]\n\
             pub struct ParseError;\n\
             #[derive(Debug)]\n\
             pub enum LooseError { A }\n\
             impl std::fmt::Display for LooseError {}\n\
             impl std::error::Error for LooseError {}\n\
             #[cfg(test)]\n\
             mod tests {\n    fn helper() -> Result<(), String> { Ok(()) }\n}\n",
        ),
        (
            "clean.rs",
            "#[cfg(test)]\nuse std::fmt::Display;\n\
             #[derive(Debug, Clone, thiserror::Error)]\npub enum CleanError {\n    #[error(\"x\")]\n    X,\n}\n\
             #[cfg(test)]\n#[allow(dead_code)]\nmod tests {\n    impl std::fmt::Display for super::T {}\n    fn f() -> Result<(), String> {\n        Ok(())\n    }\n}\n",
        ),
    ]);
    // The binary may glue with anyhow.
    std::fs::write(
        dir.path().join("main.rs"),
        "fn main() -> anyhow::Result<()> { Ok(()) }\n",
    )
    .expect("write");
    let problems = error_type_violations(dir.path());
    assert_eq!(
        problems,
        [
            "parse.rs: anyhow outside main.rs: use the layer's error type",
            "parse.rs: Result<Vec<(u8, String)>, String>: give the layer's error type a variant",
            "parse.rs: Result<Box<dyn Fn(u8) -> u8>, std::string::String>: give the layer's error type a variant",
            "parse.rs: `impl std::error::Error for LooseError`: derive thiserror::Error instead",
            "parse.rs: `impl std::fmt::Display for LooseError`: derive thiserror::Error instead",
            "parse.rs: `LooseError` does not derive thiserror::Error",
        ]
    );
}
