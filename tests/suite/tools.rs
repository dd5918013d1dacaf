//! The tools as the model uses them: web_fetch against a local server, confinement, edits,
//! commands, search, git, and the saved-files browser that shows what web_fetch saved.

use std::path::Path;

use chatcli::agent::AgentOptions;
use chatcli::config::{Config, Overrides};
use chatcli::env::Env;
use chatcli::protocol::{AgentEvent, Mode};
use chatcli::tools::web_fetch::PREVIEW_CHARS;
use chatcli::tools::{Scratch, ToolContext, ToolError, ToolRegistry, WebSettings};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{draw, screen_text};

fn ctx(workspace: &Path, scratch: &Path, autosave: usize) -> ToolContext {
    ToolContext::new(
        workspace.canonicalize().expect("canonical"),
        Scratch::private(scratch.to_path_buf()),
        WebSettings {
            autosave_bytes: autosave,
            ..WebSettings::default()
        },
    )
}

async fn call(
    ctx: &ToolContext,
    name: &str,
    args: Value,
) -> Result<chatcli::tools::ToolOutput, ToolError> {
    let tools = ToolRegistry::for_mode(Mode::Agent);
    let tool = tools.get(name).unwrap_or_else(|| panic!("no tool {name}"));
    tool.run(&args, ctx).await
}

/// A 150 KB article page with a script and a style that must not reach the text.
fn big_page() -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html><head><title>Match report</title><style>body { color: red }</style>\
         <script>var secretTracker = 42;</script></head><body><h1>Flamengo 2 x 1</h1>",
    );
    let mut n = 0;
    while html.len() < 150_000 {
        n += 1;
        html.push_str(&format!(
            "<p>Paragraph {n}: the match went on with another attack down the left wing and a save.</p>\n"
        ));
    }
    html.push_str("</body></html>");
    html
}

async fn serve(route: &str, body: Vec<u8>, content_type: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", content_type)
                .set_body_bytes(body),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_large_page_is_auto_saved_with_a_bounded_preview() {
    let server = serve(
        "/report",
        big_page().into_bytes(),
        "text/html; charset=utf-8",
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let scratch = dir.path().join("scratch");
    let c = ctx(dir.path(), &scratch, 10_000);
    let url = format!("{}/report", server.uri());
    let out = call(&c, "web_fetch", json!({ "url": url }))
        .await
        .expect("fetched");
    let saved = out.saved_path.clone().expect("saved");
    let full = std::fs::read_to_string(&saved).expect("saved file");
    let (first, rest) = out.text.split_once('\n').expect("lines");
    let preview = rest
        .strip_prefix('\n')
        .and_then(|p| p.strip_suffix("\n...(auto-truncated — full body saved to disk)"))
        .expect("a blank line, the preview, the end marker");
    assert_eq!(
        first,
        format!(
            "[cut: shown a preview of the first {} characters of {} bytes of text; \
             the whole text (too large to inline) is saved at {}; use read_file with start/end \
             or rerun with filter/from_line/to_line for specific ranges]",
            chatcli::tools::cut::count(preview.chars().count() as u64),
            chatcli::tools::cut::count(full.len() as u64),
            saved.display()
        ),
        "the first line says the cut, the sizes and the path"
    );
    assert!(preview.chars().count() <= PREVIEW_CHARS);
    assert!(preview.chars().count() > PREVIEW_CHARS / 2);
    assert!(
        full.starts_with(preview),
        "the preview is the start of the saved text"
    );
    assert!(full.contains("Paragraph 1:") && full.contains("Flamengo 2 x 1"));
    assert!(full.len() > 100_000);
    assert!(
        !full.contains("secretTracker") && !full.contains("color: red"),
        "scripts and styles are dropped"
    );
    assert!(saved.starts_with(&scratch));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&saved)
                .expect("meta")
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
    }
    // The model reads the saved body back through read_file, which may open the scratch dir.
    let back = call(
        &c,
        "read_file",
        json!({ "file": saved.display().to_string(), "start": 1, "end": 2 }),
    )
    .await
    .expect("read back");
    assert!(back.text.contains("Flamengo"));
}

#[tokio::test]
async fn the_threshold_variable_moves_the_cut() {
    let server = serve("/report", big_page().into_bytes(), "text/html").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let env = Env::from_pairs([
        ("CHATCLI_HOME", dir.path().display().to_string()),
        ("CHATCLI_WEBFETCH_AUTOSAVE_BYTES", "1000000".to_string()),
    ]);
    let overrides = Overrides {
        cwd: Some(dir.path().to_path_buf()),
        ..Overrides::default()
    };
    let config = Config::resolve(&overrides, env).expect("config");
    let provider = chatcli::provider::demo::DemoProvider::new(std::time::Duration::ZERO);
    let options: AgentOptions = chatcli::session::agent_options(
        &config,
        &provider,
        &chatcli::cost::Catalog::builtin(),
        "20261130-000000-abcdef".into(),
        chatcli::agent::ApprovalPolicy::Deny,
    );
    let c = ToolContext::new(
        dir.path().canonicalize().expect("canonical"),
        options.scratch.clone(),
        options.web.clone(),
    );
    let out = call(
        &c,
        "web_fetch",
        json!({ "url": format!("{}/report", server.uri()) }),
    )
    .await
    .expect("fetched");
    assert!(
        out.saved_path.is_none(),
        "under the raised threshold the page is inlined"
    );
    let first = out.text.lines().next().expect("a line");
    assert!(
        first.starts_with("[cut: shown the first 20,000 characters of the text's ")
            && first.ends_with(" characters; narrow with filter or from_line/to_line]"),
        "{first}"
    );
    assert!(out.text.chars().count() < 20_200, "cut at max_length");
    let small = call(
        &c,
        "web_fetch",
        json!({ "url": format!("{}/report", server.uri()), "max_length": 500 }),
    )
    .await
    .expect("fetched");
    assert!(small.text.chars().count() < 650);
}

#[tokio::test]
async fn a_filter_disables_auto_save_and_selects_lines() {
    let server = serve("/report", big_page().into_bytes(), "text/html").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), &dir.path().join("scratch"), 10_000);
    let url = format!("{}/report", server.uri());
    let out = call(
        &c,
        "web_fetch",
        json!({ "url": url, "filter": "Paragraph 7[0-9]:" }),
    )
    .await
    .expect("fetched");
    assert!(out.saved_path.is_none());
    assert_eq!(out.text.lines().count(), 10, "{}", out.text);
    let out = call(
        &c,
        "web_fetch",
        json!({ "url": url, "from_line": 3, "to_line": 5 }),
    )
    .await
    .expect("fetched");
    assert!(out.saved_path.is_none());
    assert_eq!(out.text.lines().count(), 3);
}

#[tokio::test]
async fn non_utf8_and_multibyte_pages_are_cut_safely() {
    // Latin-1, declared in the header: decoded, not mangled.
    let latin1: Vec<u8> = b"Caf\xe9 na esquina, ol\xe1!\n".repeat(2000);
    let server = serve("/latin1", latin1, "text/plain; charset=iso-8859-1").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), &dir.path().join("scratch"), 10_000);
    let out = call(
        &c,
        "web_fetch",
        json!({ "url": format!("{}/latin1", server.uri()) }),
    )
    .await
    .expect("fetched");
    assert!(out.text.contains("Café na esquina, olá!"));
    let saved =
        std::fs::read_to_string(out.saved_path.expect("saved")).expect("valid UTF-8 on disk");
    assert!(saved.starts_with("Café"));

    // Multi-byte text with no line breaks: the cut lands between characters.
    let cjk = "日本語のテキスト".repeat(3000).into_bytes();
    let server = serve("/cjk", cjk, "text/plain; charset=utf-8").await;
    let url = format!("{}/cjk", server.uri());
    let saved = call(&c, "web_fetch", json!({ "url": url }))
        .await
        .expect("fetched");
    let preview = saved
        .text
        .split("\n\n")
        .nth(1)
        .expect("a preview")
        .trim_end_matches("\n...(auto-truncated — full body saved to disk)");
    assert_eq!(
        preview.chars().count(),
        PREVIEW_CHARS,
        "no line break to cut at: exactly the limit"
    );
    assert!(preview.chars().all(|ch| "日本語のテキスト".contains(ch)));
    let out = call(
        &c,
        "web_fetch",
        json!({ "url": url, "from_line": 1, "max_length": 1001 }),
    )
    .await
    .expect("fetched");
    let mut lines = out.text.lines();
    let cut = lines.next().expect("the cut line");
    assert!(
        cut.starts_with("[cut: shown the first 1,001 characters of the selection's 24,000"),
        "{cut}"
    );
    let first = lines.next().expect("a line");
    assert_eq!(first.chars().count(), 1001);
    let invalid = b"ok \xff\xfe bytes\n".repeat(10).to_vec();
    let server = serve("/bad", invalid, "text/plain").await;
    let out = call(
        &c,
        "web_fetch",
        json!({ "url": format!("{}/bad", server.uri()) }),
    )
    .await
    .expect("fetched");
    assert!(out.text.contains("ok \u{fffd}\u{fffd} bytes"));
}

#[tokio::test]
async fn cloud_metadata_addresses_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), &dir.path().join("scratch"), 10_000);
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://[fd00:ec2::254]/",
    ] {
        let err = call(&c, "web_fetch", json!({ "url": url }))
            .await
            .expect_err("refused");
        assert!(err.to_string().starts_with("refused:"), "{url}: {err}");
    }
}

#[tokio::test]
async fn paths_that_leave_the_workspace_are_refused() {
    let outer = tempfile::tempdir().expect("tempdir");
    let ws = outer.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir");
    std::fs::write(outer.path().join("secret.txt"), "secret").expect("write");
    let c = ctx(&ws, &outer.path().join("scratch"), 10_000);
    let abs = outer.path().join("secret.txt").display().to_string();
    for file in ["../secret.txt", abs.as_str()] {
        let err = call(&c, "read_file", json!({ "file": file }))
            .await
            .expect_err("refused");
        assert!(matches!(err, ToolError::Confinement(_)), "{file}: {err}");
        assert!(err.to_string().contains("outside the workspace"));
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outer.path(), ws.join("escape")).expect("symlink");
        let err = call(&c, "read_file", json!({ "file": "escape/secret.txt" }))
            .await
            .expect_err("refused");
        assert!(matches!(err, ToolError::Confinement(_)));
        let err = call(
            &c,
            "write_file",
            json!({ "file": "escape/planted.txt", "content": "x" }),
        )
        .await
        .expect_err("refused");
        assert!(matches!(err, ToolError::Confinement(_)));
        assert!(!outer.path().join("planted.txt").exists());
    }
}

#[tokio::test]
async fn patch_file_refuses_missing_or_ambiguous_text_and_leaves_the_file_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), &dir.path().join("scratch"), 10_000);
    let file = dir.path().join("lib.rs");
    let original = "fn a() {}\nfn b() {}\nfn b() {}\n";
    std::fs::write(&file, original).expect("write");
    let err = call(
        &c,
        "patch_file",
        json!({"file": "lib.rs", "search": "fn z()", "replace": "x"}),
    )
    .await
    .expect_err("missing");
    assert!(err.to_string().contains("not found"));
    let err = call(
        &c,
        "patch_file",
        json!({"file": "lib.rs", "search": "fn b() {}", "replace": "x"}),
    )
    .await
    .expect_err("ambiguous");
    assert!(err.to_string().contains("occurs 2 times"));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), original);
    let ok = call(
        &c,
        "patch_file",
        json!({"file": "lib.rs", "search": "fn a() {}", "replace": "fn a() { 1 }"}),
    )
    .await
    .expect("patched");
    assert!(ok.text.starts_with("patched lib.rs at line 1"));
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "fn a() { 1 }\nfn b() {}\nfn b() {}\n"
    );
}

#[tokio::test]
async fn run_command_is_bounded_by_its_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), &dir.path().join("scratch"), 10_000);
    let started = std::time::Instant::now();
    let err = call(&c, "run_command", json!({"cmd": "sleep 20", "timeout": 1}))
        .await
        .expect_err("timed out");
    assert_eq!(
        err.to_string(),
        "timed out after 1 s: the command and its children were killed"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let ok = call(&c, "run_command", json!({"cmd": "printf hi"}))
        .await
        .expect("ran");
    assert_eq!(ok.text, "exit code 0\nhi");
}

#[tokio::test]
async fn listing_and_search_honour_gitignore() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "target/\n").expect("write");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::create_dir_all(root.join("target")).expect("mkdir");
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    let answer = 42;\n}\n",
    )
    .expect("write");
    std::fs::write(root.join("src/notes.md"), "answer: 42\n").expect("write");
    std::fs::write(root.join("target/junk.rs"), "let answer = 42;\n").expect("write");
    let c = ctx(root, &root.join("scratch"), 10_000);
    let listing = call(&c, "list_directory", json!({})).await.expect("listed");
    assert_eq!(listing.text, "src/\nsrc/main.rs\nsrc/notes.md");
    let found = call(
        &c,
        "search_files",
        json!({"term": "answer", "glob": "*.rs", "context": 1}),
    )
    .await
    .expect("searched");
    assert_eq!(
        found.text,
        "src/main.rs-1-fn main() {\nsrc/main.rs:2:    let answer = 42;\nsrc/main.rs-3-}"
    );
    let regex = call(
        &c,
        "search_files",
        json!({"term": "answer.*42", "regex": true}),
    )
    .await
    .expect("searched");
    assert_eq!(regex.text.lines().count(), 2);
    let none = call(&c, "search_files", json!({"term": "nowhere"}))
        .await
        .expect("searched");
    assert_eq!(none.text, "no matches");
}

/// A minified one-line file: the search shows the match far into the line with its column, and
/// `read_file` shows a slice of the line with a call for the next slice that is a new request.
#[tokio::test]
async fn long_lines_show_the_match_and_read_in_slices() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let filler = "var a=1;".repeat(1024 * 1024 / 8);
    std::fs::write(root.join("min.js"), format!("{filler}FIND_ME();\n")).expect("write");
    let c = ctx(root, &root.join("scratch"), 10_000);
    let found = call(&c, "search_files", json!({"term": "FIND_ME"}))
        .await
        .expect("searched");
    assert!(
        found.text.starts_with("min.js:1:1048577: …"),
        "{}",
        found.text
    );
    assert!(found.text.contains("var a=1;FIND_ME();"), "{}", found.text);
    assert!(found.text.chars().count() < 400, "{}", found.text);

    std::fs::write(root.join("long.txt"), "0123456789".repeat(5_000)).expect("write");
    let args = json!({"file": "long.txt"});
    let first = call(&c, "read_file", args.clone()).await.expect("read");
    let hint = first.text.lines().next().expect("a hint");
    assert!(hint.starts_with("[cut: shown characters 1-"), "{hint}");
    assert!(
        first
            .text
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("1  0123456789")),
        "{}",
        &first.text[..200]
    );
    let col: usize = hint
        .split("col=")
        .nth(1)
        .and_then(|rest| rest.split([' ', ']']).next())
        .and_then(|n| n.parse().ok())
        .expect("a next column");
    assert!(hint.contains("start=1"), "{hint}");
    let next = json!({"file": "long.txt", "start": 1, "col": col});
    assert_ne!(next, args);
    let second = call(&c, "read_file", next).await.expect("read");
    let shown = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("1  "))
            .map_or(0, |l| l.len() - 3)
    };
    assert_eq!(shown(&first.text) + shown(&second.text), 50_000);
    assert!(
        second
            .text
            .ends_with(&format!("[characters {col}-50000 of line 1: its end]\n")),
        "{}",
        second.text
    );
}

#[tokio::test]
async fn git_tools_read_the_repository() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("git runs")
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(root.join("a.txt"), "one\n").expect("write");
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "first commit"]);
    std::fs::write(root.join("a.txt"), "two\n").expect("write");
    let c = ctx(root, &root.join("scratch"), 10_000);
    let status = call(&c, "git_status", json!({})).await.expect("status");
    assert!(
        status.text.contains("## main") && status.text.contains(" M a.txt"),
        "{}",
        status.text
    );
    let diff = call(&c, "git_diff", json!({})).await.expect("diff");
    assert!(diff.text.contains("-one\n+two"));
    let names = call(&c, "git_diff", json!({"name_only": true}))
        .await
        .expect("diff");
    assert_eq!(names.text.trim(), "a.txt");
    let log = call(&c, "git_log", json!({"limit": 5})).await.expect("log");
    assert!(log.text.contains("T: first commit"));
}

#[tokio::test]
async fn web_search_reads_searxng() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), &dir.path().join("scratch"), 10_000);
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [
            {"title": "Flamengo 2 x 1", "url": "https://example.com/a", "content": "Result of the last game"},
            {"title": "Table", "url": "https://example.com/b", "content": "League table"}
        ]})))
        .mount(&server)
        .await;
    let mut c = c;
    c.web.search = vec![chatcli::tools::SearchBackend::Searxng(server.uri())];
    let out = call(
        &c,
        "web_search",
        json!({"query": "flamengo", "max_results": 1}),
    )
    .await
    .expect("searched");
    assert_eq!(
        out.text,
        "1. Flamengo 2 x 1\n   https://example.com/a\n   Result of the last game"
    );
}

#[tokio::test]
async fn the_saved_files_browser_and_its_pager() {
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = dir.path().join("webfetch_1.txt");
    let body: String = (1..=200)
        .map(|i| format!("line {i} of the saved page\n"))
        .collect();
    std::fs::write(&saved, &body).expect("write");
    let (tx, _rx) = chatcli::protocol::op_channel();
    let mut app = chatcli::ui::App::new(tx, Mode::Agent, "demo (offline)".into(), "demo".into());
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c1".into(),
        name: "web_fetch".into(),
        args: json!({"url": "https://example.com/match-report"}),
    });
    app.handle_agent_event(AgentEvent::ToolResult {
        id: "c1".into(),
        name: "web_fetch".into(),
        ok: true,
        chars: 5_300,
        saved_path: Some(saved.display().to_string()),
        duration_ms: 120,
        error: None,
        exit_code: None,
        output: String::new(),
        diff: None,
    });
    app.handle_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let list = screen_text(&draw(&mut app));
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\d\d:\d\d:\d\d", "[time]");
    settings.add_filter(&regex::escape(&dir.path().display().to_string()), "[dir]");
    settings.bind(|| insta::assert_snapshot!("saved_files_list", list));
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    for c in "/line 150".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let pager = screen_text(&draw(&mut app));
    assert!(pager.contains("150 line 150 of the saved page"));
    settings.bind(|| insta::assert_snapshot!("saved_files_pager", pager));
    app.handle_key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(!screen_text(&draw(&mut app)).contains("Saved files"));
}
