//! Cuts are said first (#41): every tool result that shows less than the whole starts with the
//! `[cut: …]` line (`chatcli::tools::cut`), naming what is shown, how large the whole is and
//! where it is saved. A command's large output and a page past the body cap are saved whole to
//! the scratch folder, streamed, and the first line names the file. A guard lists every
//! built-in tool as one that can cut (with a case here) or one that cannot: a new tool must
//! take a side.

use std::path::Path;

use chatcli::protocol::Mode;
use chatcli::tools::cut::PREFIX;
use chatcli::tools::{Scratch, ToolContext, ToolError, ToolOutput, ToolRegistry, WebSettings};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn ctx(workspace: &Path, autosave: usize) -> ToolContext {
    ToolContext::new(
        workspace.canonicalize().expect("canonical"),
        Scratch::private(workspace.join("scratch")),
        WebSettings {
            autosave_bytes: autosave,
            ..WebSettings::default()
        },
    )
}

async fn call(ctx: &ToolContext, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let tools = ToolRegistry::for_mode(Mode::Agent);
    let tool = tools.get(name).unwrap_or_else(|| panic!("no tool {name}"));
    tool.run(&args, ctx).await
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The path the cut line says `what` is saved at.
fn saved_at<'a>(line: &'a str, what: &str) -> &'a Path {
    let after = line
        .split_once(&format!("{what} is saved at "))
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no `{what}` path in {line}"));
    Path::new(
        after
            .split(';')
            .next()
            .unwrap_or(after)
            .trim_end_matches(']'),
    )
}

#[tokio::test]
async fn a_large_command_output_is_saved_whole_and_its_first_line_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), 10_000);
    // About 5 MB on stdout, a few lines on stderr.
    let out = call(
        &c,
        "run_command",
        json!({"cmd": "seq 1 700000; echo done >&2", "timeout": 60}),
    )
    .await
    .expect("ran");
    let expected: String = (1..=700_000).map(|n| format!("{n}\n")).collect();
    assert!(expected.len() > 4_500_000);
    let first = first_line(&out.text);
    assert!(
        first.starts_with(&format!(
            "[cut: shown the first 12,000 and last 4,000 characters of stdout's {} bytes; \
             the whole stdout is saved at ",
            chatcli::tools::cut::count(expected.len() as u64)
        )),
        "{first}"
    );
    let file = saved_at(first, "the whole stdout");
    assert!(file.starts_with(dir.path().join("scratch")), "{first}");
    assert_eq!(out.saved_path.as_deref(), Some(file));
    let saved = std::fs::read_to_string(file).expect("the saved output");
    assert!(saved == expected, "the file holds the whole output");
    let mut lines = out.text.lines().skip(1);
    assert_eq!(lines.next(), Some("exit code 0"));
    assert_eq!(lines.next(), Some("1"));
    assert!(out.text.contains("bytes omitted ...]"));
    assert!(
        out.text.trim_end().ends_with("[stderr]\ndone"),
        "stderr is whole"
    );
    assert_eq!(out.exit_code, Some(0));
    assert!(out.text.len() < 70_000, "the result stays small");
}

async fn serve(route: &str, body: Vec<u8>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/plain; charset=utf-8")
                .set_body_bytes(body),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_page_past_the_body_cap_is_saved_whole_and_its_first_line_says_so() {
    // 12 MB of text: past the 10 MiB the tool reads into memory.
    let line = "a line of a very long page, numbered for nobody\n";
    let body = line.repeat(12_000_000 / line.len()).into_bytes();
    let server = serve("/huge", body.clone()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), 10_000);
    let out = call(
        &c,
        "web_fetch",
        json!({"url": format!("{}/huge", server.uri())}),
    )
    .await
    .expect("fetched");
    let first = first_line(&out.text);
    assert!(
        first.starts_with(&format!(
            "[cut: shown the text of the body's first 10,485,760 bytes of {} bytes; \
             the whole body, as sent, is saved at ",
            chatcli::tools::cut::count(body.len() as u64)
        )),
        "{first}"
    );
    let raw = saved_at(first, "the whole body, as sent,");
    assert!(raw.starts_with(dir.path().join("scratch")));
    assert!(
        std::fs::read(raw).expect("the saved body") == body,
        "the file holds the whole body"
    );
    // The text of the kept part is auto-saved as usual, said on the next line.
    let second = out.text.lines().nth(1).expect("the preview's line");
    assert!(
        second.starts_with("[cut: shown a preview of the first "),
        "{second}"
    );

    // With a selection, the body's cut still leads.
    let out = call(
        &c,
        "web_fetch",
        json!({"url": format!("{}/huge", server.uri()), "from_line": 1, "to_line": 2}),
    )
    .await
    .expect("fetched");
    assert!(first_line(&out.text).starts_with("[cut: shown the text of the body's first"));
    assert_eq!(out.text.lines().nth(1), Some(line.trim_end()));
}

/// Tools that cannot cut their result: they write, or answer in a few lines.
const NEVER_CUT: &[&str] = &["patch_file", "update_plan", "web_search", "write_file"];

#[tokio::test]
async fn every_tool_that_cuts_says_so_in_its_first_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(
        root.join("many.txt"),
        "a line of text to read\n".repeat(5_000),
    )
    .expect("write");
    std::fs::write(root.join("wide.txt"), "x".repeat(50_000)).expect("write");
    std::fs::create_dir(root.join("lots")).expect("mkdir");
    for n in 0..600 {
        std::fs::write(root.join("lots").join(format!("f{n}.txt")), "needle\n").expect("write");
    }
    let page = "a line of a page\n".repeat(3_000).into_bytes();
    let server = serve("/page", page).await;
    let url = format!("{}/page", server.uri());
    let c = ctx(root, 10_000);
    let mut cases: Vec<(&str, Value)> = vec![
        ("read_file", json!({"file": "many.txt"})),
        ("read_file", json!({"file": "wide.txt"})),
        ("search_files", json!({"term": "needle", "max_results": 10})),
        ("list_directory", json!({"dir": "lots"})),
        ("run_command", json!({"cmd": "seq 1 100000"})),
        ("web_fetch", json!({"url": url})),
        (
            "web_fetch",
            json!({"url": url, "filter": "page", "max_length": 200}),
        ),
    ];
    let git = std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok();
    if crate::common::needs("git", git) {
        commit_then_change(root, "many.txt");
        cases.push(("git_diff", json!({"path": "many.txt"})));
    }
    for (tool, args) in &cases {
        let out = call(&c, tool, args.clone()).await.expect("ran");
        assert!(
            first_line(&out.text).starts_with(PREFIX),
            "{tool} {args}: {}",
            first_line(&out.text)
        );
    }
    // Every built-in tool either has a case above (or shares its code: git_status and
    // git_log run through git_diff's; memory's recall is checked in its own module) or never
    // cuts.
    let shared = ["git_status", "git_log", "memory"];
    for spec in ToolRegistry::for_mode(Mode::Agent).specs() {
        let name = spec.name.as_str();
        assert!(
            cases.iter().any(|(tool, _)| *tool == name)
                || shared.contains(&name)
                || NEVER_CUT.contains(&name)
                || (name == "git_diff" && !git),
            "{name}: add a case that drives it past its cap, or list it in NEVER_CUT"
        );
    }
}

/// A repository in `root` with `file` committed, then changed on every line.
fn commit_then_change(root: &Path, file: &str) {
    let run = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    };
    run(&["init", "-q"]);
    run(&["add", file]);
    run(&[
        "-c",
        "user.email=t@t",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "-m",
        "x",
    ]);
    std::fs::write(root.join(file), "a changed line of text\n".repeat(5_000)).expect("write");
}

#[test]
fn a_mention_of_a_50_mb_file_inlines_its_head_with_the_cut_first() {
    use chatcli::prompt::mentions::{expand, find};
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("huge.log");
    let head: String = (1..=20_000).map(|n| format!("event {n} ok\n")).collect();
    std::fs::write(&file, &head).expect("write");
    // 50 MB, the rest a hole: only what is inlined (and a bounded look-ahead) is read.
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_len(50 * 1024 * 1024))
        .expect("extend");
    let text = expand(&find("look at @huge.log", dir.path()), dir.path(), None);
    let body = text
        .split_once("<mention file=\"huge.log\">\n")
        .map(|(_, rest)| rest)
        .expect("the mention");
    let first = first_line(body);
    assert!(
        first.starts_with("[cut: shown lines 1-")
            && first.contains(" of a file of 52,428,800 bytes; read_file with start="),
        "{first}"
    );
    assert!(
        body.lines()
            .nth(1)
            .is_some_and(|l| l.ends_with("  event 1 ok"))
    );
    assert!(
        text.chars().count() < 41_000 + 300,
        "the inline stays at the cap"
    );
}
