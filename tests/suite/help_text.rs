//! `--help` against the settings registry (issue #40): every variable the help names exists,
//! every default it states is the registry's, session flags appear only where they apply, and
//! `bench --scenario` names every scenario.

use chatcli::config::settings;
use clap::CommandFactory;

fn help(path: &[&str]) -> String {
    let mut command = chatcli::cli::Cli::command();
    command.build();
    let mut at = &mut command;
    for name in path {
        at = at.find_subcommand_mut(name).expect("a subcommand");
    }
    at.render_long_help().to_string()
}

/// The registry's default as the help writes it (no Markdown backticks).
fn registry_default(var: &str) -> String {
    settings::find(var)
        .unwrap_or_else(|| panic!("{var} is not in the settings registry"))
        .default
        .replace('`', "")
}

#[test]
fn every_variable_and_default_in_help_is_the_registrys() {
    let text = help(&[]);
    // One entry a variable; a deeper-indented line goes on with the one before.
    let mut env_lines: Vec<String> = Vec::new();
    for line in text
        .lines()
        .skip_while(|l| !l.starts_with("Environment"))
        .skip(1)
        .take_while(|l| !l.is_empty())
    {
        match env_lines.last_mut() {
            Some(last) if line.starts_with("    ") => last.push_str(line),
            _ => env_lines.push(line.to_string()),
        }
    }
    assert!(env_lines.len() > 20, "{text}");
    let mut checked = 0;
    for line in &env_lines {
        // The variables are the leading upper-case words (`A, B  meaning`).
        let vars: Vec<&str> = line
            .split([' ', ','])
            .filter(|t| !t.is_empty())
            .take_while(|t| {
                t.len() > 1
                    && t.chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_' || c == '<' || c == '>')
            })
            .collect();
        assert!(!vars.is_empty(), "no variable in {line}");
        for var in &vars {
            assert!(
                settings::find(var).is_some(),
                "{var} ({line}) is not a setting"
            );
        }
        let first = vars[0];
        // "… (default X)" or "… (default X; more words)".
        if let Some((_, rest)) = line.split_once("(default ") {
            let stated = rest.split([';', ')']).next().unwrap_or_default();
            assert_eq!(stated, registry_default(first), "{line}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} defaults checked");
    // The flags' `[env: X] [default: Y]`.
    for line in text.lines().filter(|l| l.contains("[env: ")) {
        let env = line
            .split("[env: ")
            .nth(1)
            .and_then(|r| r.split(']').next())
            .unwrap_or_default();
        let first = env.split(", ").next().unwrap_or_default();
        assert!(settings::find(first).is_some(), "{line}");
        if let Some(default) = line
            .split("[default: ")
            .nth(1)
            .and_then(|r| r.split(']').next())
        {
            assert_eq!(default, registry_default(first), "{line}");
        }
    }
    let schedule = text
        .lines()
        .find(|l| l.contains("CHATCLI_MICROCOMPACT_SCHEDULE"))
        .unwrap_or_default();
    assert!(
        schedule.ends_with("(default consumed)") && !text.contains("default batched"),
        "the microcompact schedule defaults to consumed: {schedule}"
    );
}

#[test]
fn session_flags_appear_only_where_a_session_starts() {
    for flag in ["--resume", "--mode", "--sandbox", "--max-turns", "--cwd"] {
        let flag = format!("{flag} ");
        assert!(help(&[]).contains(&flag), "{flag} on the TUI");
        assert!(help(&["exec"]).contains(&flag), "{flag} on exec");
        for path in [
            &["memory", "add"][..],
            &["memory", "list"],
            &["bench"],
            &["auth"],
            &["mcp", "list"],
            &["skill", "list"],
            &["models"],
        ] {
            assert!(!help(path).contains(&flag), "{flag} in {path:?}");
        }
    }
    let models = help(&["models"]);
    assert!(models.contains("--provider") && models.contains("--model"));
}

#[test]
fn exec_takes_the_session_flags_before_or_after_it() {
    use clap::Parser;
    let after = chatcli::cli::Cli::try_parse_from([
        "chatcli",
        "exec",
        "--mode",
        "coder",
        "--provider",
        "demo",
        "hi",
    ])
    .expect("parses");
    let o = after.overrides();
    assert_eq!(
        (o.mode.as_deref(), o.provider.as_deref()),
        (Some("coder"), Some("demo"))
    );
    let before = chatcli::cli::Cli::try_parse_from([
        "chatcli", "--resume", "abc", "--mode", "chat", "exec", "--mode", "run", "hi",
    ])
    .expect("parses");
    assert_eq!(
        before.overrides().mode.as_deref(),
        Some("run"),
        "exec's own wins"
    );
    assert_eq!(before.resume(), Some("abc"));
    assert!(
        chatcli::cli::Cli::try_parse_from(["chatcli", "memory", "add", "--sandbox", "off", "x"])
            .is_err()
    );
}

#[test]
fn bench_scenario_help_names_every_scenario() {
    let text = help(&["bench"]);
    for name in chatcli::bench::scenarios::NAMES {
        assert!(
            text.contains(name),
            "{name} missing from bench --help:\n{text}"
        );
    }
}
