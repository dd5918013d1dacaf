//! Containment (issue 17): no write escapes the workspace through a symlink, reads are bounded
//! and refuse what is not a regular file, the repository's own config runs nothing, and the
//! agent is never held hostage by a child process, a page or a stream. Each test is one case of
//! the red-team list; the Containment section of `docs/security.md` counts them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chatcli::protocol::Mode;
use chatcli::tools::{Scratch, ToolContext, ToolError, ToolOutput, ToolRegistry, WebSettings};
use serde_json::{Value, json};

fn ctx(workspace: &Path) -> ToolContext {
    ToolContext::new(
        workspace.canonicalize().expect("canonical"),
        Scratch::private(workspace.join(".scratch")),
        WebSettings::default(),
    )
}

async fn call(ctx: &ToolContext, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let tools = ToolRegistry::for_mode(Mode::Agent);
    let tool = tools.get(name).unwrap_or_else(|| panic!("no tool {name}"));
    // Generous: a hang (a FIFO, a deadlock) fails the test instead of stalling the suite.
    tokio::time::timeout(Duration::from_secs(120), tool.run(&args, ctx))
        .await
        .unwrap_or_else(|_| panic!("{name} {args} hung"))
}

/// A workspace `ws` and a sibling folder `outside`, with the workspace context.
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf, ToolContext) {
    let outer = tempfile::tempdir().expect("tempdir");
    let ws = outer.path().join("ws");
    let outside = outer.path().join("outside");
    std::fs::create_dir(&ws).expect("mkdir ws");
    std::fs::create_dir(&outside).expect("mkdir outside");
    let c = ctx(&ws);
    (outer, ws, outside, c)
}

#[cfg(unix)]
mod files {
    use super::*;
    use std::os::unix::fs::symlink;

    #[tokio::test]
    async fn a_write_or_append_through_a_dangling_symlink_is_refused() {
        let (_outer, ws, outside, c) = layout();
        symlink(outside.join("planted.txt"), ws.join("dangling")).expect("symlink");
        for args in [
            json!({"file": "dangling", "content": "x"}),
            json!({"file": "dangling", "content": "x", "append": true}),
        ] {
            let err = call(&c, "write_file", args.clone())
                .await
                .expect_err("refused");
            assert!(matches!(err, ToolError::Confinement(_)), "{args}: {err}");
            assert!(err.to_string().starts_with("refused:"), "{err}");
        }
        assert!(
            !outside.join("planted.txt").exists(),
            "nothing landed outside"
        );
    }

    #[tokio::test]
    async fn a_symlink_the_agent_made_mid_session_is_not_written_through() {
        let (_outer, ws, outside, c) = layout();
        let made = call(
            &c,
            "run_command",
            json!({"cmd": format!("ln -s {} made-by-agent", outside.join("t.txt").display())}),
        )
        .await
        .expect("ln ran");
        assert!(made.text.starts_with("exit code 0"), "{}", made.text);
        assert!(ws.join("made-by-agent").is_symlink());
        let err = call(
            &c,
            "write_file",
            json!({"file": "made-by-agent", "content": "x"}),
        )
        .await
        .expect_err("refused");
        assert!(matches!(err, ToolError::Confinement(_)), "{err}");
        assert!(!outside.join("t.txt").exists());
    }

    #[tokio::test]
    async fn a_link_inside_is_read_through_but_never_written_or_patched_through() {
        let (_outer, ws, _outside, c) = layout();
        std::fs::write(ws.join("real.txt"), "alpha\nbeta\n").expect("write");
        symlink("real.txt", ws.join("alias.txt")).expect("symlink");
        let read = call(&c, "read_file", json!({"file": "alias.txt"}))
            .await
            .expect("reading through a link that stays inside is allowed");
        assert_eq!(read.text, "1  alpha\n2  beta\n");
        let err = call(
            &c,
            "write_file",
            json!({"file": "alias.txt", "content": "x"}),
        )
        .await
        .expect_err("the last component is never followed on a write");
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        let err = call(
            &c,
            "patch_file",
            json!({"file": "alias.txt", "search": "beta", "replace": "gamma"}),
        )
        .await
        .expect_err("patching a link would replace the link");
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        assert_eq!(
            std::fs::read_to_string(ws.join("real.txt")).expect("read"),
            "alpha\nbeta\n"
        );
        assert!(ws.join("alias.txt").is_symlink());
    }

    #[tokio::test]
    async fn an_absolute_symlink_to_a_file_outside_is_refused_for_read_write_and_patch() {
        let (_outer, ws, outside, c) = layout();
        std::fs::write(outside.join("secret.txt"), "secret\n").expect("write");
        symlink(outside.join("secret.txt"), ws.join("link.txt")).expect("symlink");
        assert!(
            call(&c, "read_file", json!({"file": "link.txt"}))
                .await
                .is_err()
        );
        assert!(
            call(
                &c,
                "write_file",
                json!({"file": "link.txt", "content": "pwned"})
            )
            .await
            .is_err()
        );
        assert!(
            call(
                &c,
                "patch_file",
                json!({"file": "link.txt", "search": "secret", "replace": "pwned"})
            )
            .await
            .is_err()
        );
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).expect("read"),
            "secret\n"
        );
    }

    #[tokio::test]
    async fn what_held_before_still_holds() {
        let (_outer, ws, outside, c) = layout();
        std::fs::write(outside.join("secret.txt"), "secret\n").expect("write");
        symlink(&outside, ws.join("folder-out")).expect("symlink");
        let outside_abs = outside.join("secret.txt").display().to_string();
        for file in [
            "../outside/secret.txt",
            outside_abs.as_str(),
            "~/.chatcli-containment-probe",
            "a\0b",
            "/proc/self/environ",
            "folder-out/secret.txt",
            "folder-out/new.txt",
        ] {
            let read = call(&c, "read_file", json!({"file": file})).await;
            assert!(read.is_err(), "read {file:?}: {read:?}");
            let write = call(&c, "write_file", json!({"file": file, "content": "x"})).await;
            assert!(write.is_err(), "write {file:?}: {write:?}");
        }
        assert!(!outside.join("new.txt").exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).expect("read"),
            "secret\n"
        );
        // And plain work inside still works: nested creation, overwrite, append, patch.
        call(
            &c,
            "write_file",
            json!({"file": "src/deep/new.rs", "content": "fn a() {}\n"}),
        )
        .await
        .expect("create");
        call(
            &c,
            "write_file",
            json!({"file": "src/deep/new.rs", "content": "fn b() {}\n", "append": true}),
        )
        .await
        .expect("append");
        call(
            &c,
            "patch_file",
            json!({"file": "src/deep/new.rs", "search": "fn b", "replace": "fn c"}),
        )
        .await
        .expect("patch");
        assert_eq!(
            std::fs::read_to_string(ws.join("src/deep/new.rs")).expect("read"),
            "fn a() {}\nfn c() {}\n"
        );
    }

    #[tokio::test]
    async fn a_fifo_is_refused_before_it_is_opened() {
        let (_outer, ws, _outside, c) = layout();
        let fifo = ws.join("pipe");
        let cpath = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("cstr");
        // SAFETY: mkfifo reads a NUL-terminated path and creates a node; no memory is shared.
        assert_eq!(unsafe { libc::mkfifo(cpath.as_ptr(), 0o600) }, 0, "mkfifo");
        let err = call(&c, "read_file", json!({"file": "pipe"}))
            .await
            .expect_err("refused, not blocked");
        assert_eq!(
            err.to_string(),
            "refused: pipe is a FIFO (named pipe); only regular files can be read or written"
        );
        let err = call(&c, "write_file", json!({"file": "pipe", "content": "x"}))
            .await
            .expect_err("refused, not blocked");
        assert!(err.to_string().contains("FIFO"), "{err}");
    }

    /// The peak resident memory of this process, from /proc (Linux).
    fn peak_rss_bytes() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }

    #[tokio::test]
    async fn head_of_a_3_gib_sparse_file_reads_only_what_it_asks_for() {
        let (_outer, ws, _outside, c) = layout();
        let path = ws.join("huge.log");
        let mut text = String::new();
        for n in 1..=2000 {
            text.push_str(&format!("log line {n}\n"));
        }
        std::fs::write(&path, &text).expect("write");
        // The rest is a hole: 3 GiB on paper, nothing on disk.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open")
            .set_len(3 * 1024 * 1024 * 1024)
            .expect("sparse");
        let before = peak_rss_bytes();
        let out = call(&c, "read_file", json!({"file": "huge.log", "head": 5}))
            .await
            .expect("read");
        assert_eq!(
            out.text,
            "1  log line 1\n2  log line 2\n3  log line 3\n4  log line 4\n5  log line 5\n"
        );
        let out = call(
            &c,
            "read_file",
            json!({"file": "huge.log", "start": 1999, "end": 2000}),
        )
        .await
        .expect("read");
        assert_eq!(out.text, "1999  log line 1999\n2000  log line 2000\n");
        let err = call(&c, "read_file", json!({"file": "huge.log", "tail": 3}))
            .await
            .expect_err("a tail would need the whole 3 GiB counted");
        assert!(
            err.to_string()
                .contains("read past 256 MiB with run_command"),
            "{err}"
        );
        if let (Some(before), Some(after)) = (before, peak_rss_bytes()) {
            // Generous: other tests run alongside; reading the file whole would add 3 GiB.
            assert!(
                after.saturating_sub(before) < 1024 * 1024 * 1024,
                "peak memory grew by {} MiB",
                after.saturating_sub(before) / (1024 * 1024)
            );
        }
    }

    /// Swaps `ws/dir` between a real folder and a symlink to `outside` until told to stop.
    fn swapper(
        ws: PathBuf,
        outside: PathBuf,
        stop: Arc<AtomicBool>,
    ) -> std::thread::JoinHandle<u64> {
        std::thread::spawn(move || {
            let dir = ws.join("dir");
            let parked = ws.join("dir.parked");
            let mut swaps = 0;
            while !stop.load(Ordering::Relaxed) {
                if std::fs::rename(&dir, &parked).is_ok() {
                    let _ = symlink(&outside, &dir);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&dir);
                    let _ = std::fs::rename(&parked, &dir);
                    swaps += 1;
                }
                std::thread::yield_now();
            }
            swaps
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_folder_swapped_for_a_symlink_mid_call_never_leads_outside() {
        let (_outer, ws, outside, c) = layout();
        std::fs::create_dir(ws.join("dir")).expect("mkdir");
        std::fs::write(ws.join("dir/f.txt"), "inside\n").expect("write");
        std::fs::write(outside.join("f.txt"), "OUTSIDE\n").expect("write");
        let stop = Arc::new(AtomicBool::new(false));
        let thread = swapper(ws.clone(), outside.clone(), stop.clone());
        let (mut read_ok, mut escaped_reads) = (0, 0);
        for _ in 0..600 {
            if let Ok(out) = call(&c, "read_file", json!({"file": "dir/f.txt"})).await {
                read_ok += 1;
                if out.text.contains("OUTSIDE") {
                    escaped_reads += 1;
                }
            }
        }
        let mut write_ok = 0;
        for n in 0..150 {
            let args = json!({"file": format!("dir/new-{n}.txt"), "content": "x"});
            if call(&c, "write_file", args).await.is_ok() {
                write_ok += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let swaps = thread.join().expect("swapper");
        let landed_outside = std::fs::read_dir(&outside)
            .expect("list")
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("new-"))
            })
            .count();
        eprintln!("race: {swaps} swaps, {read_ok}/600 reads and {write_ok}/150 writes succeeded");
        assert!(swaps > 0, "the swapper ran");
        assert_eq!(escaped_reads, 0, "of {read_ok} successful reads");
        assert_eq!(landed_outside, 0, "of {write_ok} successful writes");
    }
}

/// The repository's own config names commands; none may run when the model looks at it.
#[cfg(unix)]
mod git {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// A repository with one committed file routed through driver `evil`, then modified, and
    /// a marker path outside it that a hostile command would create.
    fn hostile_repo() -> Option<(tempfile::TempDir, PathBuf, PathBuf, ToolContext)> {
        if !crate::common::needs("git", crate::common::runs("git", &["--version"])) {
            return None;
        }
        let (outer, ws, _outside, c) = layout();
        git(&ws, &["init", "-q"]);
        std::fs::write(ws.join(".gitattributes"), "*.txt filter=evil diff=evil\n").expect("write");
        std::fs::write(ws.join("f.txt"), "one\n").expect("write");
        git(&ws, &["add", "."]);
        git(&ws, &["commit", "-qm", "init"]);
        std::fs::write(ws.join("f.txt"), "one\ntwo\n").expect("write");
        let marker = outer.path().join("ran");
        Some((outer, ws, marker, c))
    }

    /// A script that creates `marker`, for keys git runs directly rather than through a shell.
    fn script(outer: &Path, marker: &Path) -> PathBuf {
        let path = outer.join("hostile.sh");
        std::fs::write(
            &path,
            format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
        )
        .expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    async fn views(c: &ToolContext) -> Vec<String> {
        let mut texts = Vec::new();
        for (name, args) in [
            ("git_status", json!({})),
            ("git_diff", json!({})),
            ("git_diff", json!({"staged": true})),
            ("git_log", json!({})),
        ] {
            let out = call(c, name, args.clone())
                .await
                .unwrap_or_else(|e| panic!("{name} {args}: {e}"));
            texts.push(out.text);
        }
        texts
    }

    /// Sets `key` to `value` in the repository's config and checks that no view runs it.
    async fn holds(key: &str, value: impl Fn(&Path, &Path) -> String) {
        let Some((outer, ws, marker, c)) = hostile_repo() else {
            return;
        };
        let value = value(outer.path(), &marker);
        git(&ws, &["config", key, &value]);
        let texts = views(&c).await;
        assert!(!marker.exists(), "{key} = {value} ran a command");
        assert!(
            texts[0].contains("M f.txt"),
            "status still works: {}",
            texts[0]
        );
        assert!(texts[1].contains("+two"), "diff still works: {}", texts[1]);
    }

    fn shell(_: &Path, marker: &Path) -> String {
        format!("touch '{}'; false", marker.display())
    }

    #[tokio::test]
    async fn core_fsmonitor_runs_nothing() {
        holds("core.fsmonitor", shell).await;
    }

    #[tokio::test]
    async fn diff_external_runs_nothing() {
        holds("diff.external", |outer, marker| {
            script(outer, marker).display().to_string()
        })
        .await;
    }

    #[tokio::test]
    async fn a_textconv_driver_runs_nothing() {
        holds("diff.evil.textconv", |outer, marker| {
            script(outer, marker).display().to_string()
        })
        .await;
    }

    #[tokio::test]
    async fn a_diff_driver_command_runs_nothing() {
        holds("diff.evil.command", |outer, marker| {
            script(outer, marker).display().to_string()
        })
        .await;
    }

    #[tokio::test]
    async fn a_clean_filter_runs_nothing() {
        holds("filter.evil.clean", |outer, marker| {
            script(outer, marker).display().to_string()
        })
        .await;
    }

    #[tokio::test]
    async fn a_process_filter_runs_nothing() {
        holds("filter.evil.process", |outer, marker| {
            script(outer, marker).display().to_string()
        })
        .await;
    }

    #[tokio::test]
    async fn core_hooks_path_post_index_change_runs_nothing() {
        holds("core.hooksPath", |outer, marker| {
            let hooks = outer.join("hooks");
            std::fs::create_dir_all(&hooks).expect("mkdir");
            let hook = script(outer, marker);
            std::fs::copy(hook, hooks.join("post-index-change")).expect("copy");
            hooks.display().to_string()
        })
        .await;
    }

    #[tokio::test]
    async fn log_show_signature_runs_no_gpg_program() {
        let Some((outer, ws, marker, c)) = hostile_repo() else {
            return;
        };
        // A commit carrying a (fake) signature: `log.showSignature` hands it to gpg.program.
        let tree = std::process::Command::new("git")
            .args(["rev-parse", "HEAD^{tree}"])
            .current_dir(&ws)
            .output()
            .expect("git");
        let tree = String::from_utf8_lossy(&tree.stdout).trim().to_string();
        let body = format!(
            "tree {tree}\nauthor t <t@example.com> 1700000000 +0000\ncommitter t <t@example.com> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n\nsigned\n"
        );
        std::fs::write(outer.path().join("commit.txt"), body).expect("write");
        let object = std::process::Command::new("git")
            .args(["hash-object", "-t", "commit", "-w"])
            .arg(outer.path().join("commit.txt"))
            .current_dir(&ws)
            .output()
            .expect("git");
        let object = String::from_utf8_lossy(&object.stdout).trim().to_string();
        git(&ws, &["update-ref", "HEAD", &object]);
        git(&ws, &["config", "log.showSignature", "true"]);
        let program = script(outer.path(), &marker).display().to_string();
        git(&ws, &["config", "gpg.program", &program]);
        let out = call(&c, "git_log", json!({})).await.expect("log");
        assert!(out.text.contains("signed"), "{}", out.text);
        assert!(!marker.exists(), "gpg.program ran");
    }
}

/// Provider streams: keep-alives are not content, a response has a whole limit, a line has a
/// cap, and an error body is read only so far.
mod streams {
    use super::*;
    use chatcli::provider::ProviderError;
    use chatcli::provider::anthropic::AnthropicParser;
    use chatcli::provider::http::{Http, HttpRequest, MAX_ERROR_BODY_BYTES};
    use futures_util::StreamExt;
    use std::sync::atomic::AtomicU64;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// An HTTP server on loopback, one connection at a time: it reads the request, writes
    /// `head`, then whatever `body(connection, piece)` returns until `None` or the client goes
    /// away. Returns the base URL and a counter of body bytes written.
    async fn serve<F>(head: &'static str, mut body: F) -> (String, Arc<AtomicU64>)
    where
        F: FnMut(usize, u64) -> Option<(Vec<u8>, Duration)> + Send + 'static,
    {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let written = Arc::new(AtomicU64::new(0));
        let counter = written.clone();
        tokio::spawn(async move {
            for connection in 0.. {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                if !read_request(&mut socket).await
                    || socket.write_all(head.as_bytes()).await.is_err()
                {
                    continue;
                }
                let mut n = 0;
                while let Some((bytes, pause)) = body(connection, n) {
                    n += 1;
                    if socket.write_all(&bytes).await.is_err() {
                        break;
                    }
                    counter.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
        });
        (base, written)
    }

    /// Reads the headers and the body their content-length announces.
    async fn read_request(socket: &mut tokio::net::TcpStream) -> bool {
        let mut request = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let Ok(n) = socket.read(&mut buf).await else {
                return false;
            };
            if n == 0 {
                return false;
            }
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    return true;
                }
            }
        }
    }

    const SSE_HEAD: &str =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

    /// Streams from `url` with these limits and returns the first error (or panics after a
    /// generous wait: a stream that never ends is the failure these tests catch).
    async fn first_error(url: String, idle: Duration, response: Duration) -> ProviderError {
        let mut http = Http::new(Duration::from_secs(30), idle);
        http.response_timeout = response;
        let request_to = |url: String| HttpRequest {
            provider: "anthropic".into(),
            url,
            headers: Vec::new(),
            body: json!({"model": "m", "messages": []}),
        };
        let url = format!("{url}/v1/messages");
        let mut stream = http.stream_sse(request_to(url), AnthropicParser::new("anthropic"));
        let waited = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(item) = stream.next().await {
                if let Err(e) = item {
                    return Some(e);
                }
            }
            None
        })
        .await;
        match waited {
            Ok(Some(e)) => e,
            Ok(None) => panic!("the stream ended without an error"),
            Err(_) => panic!("the stream held the agent for 120 s"),
        }
    }

    const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";

    #[tokio::test]
    async fn pings_and_comments_without_content_end_in_an_idle_timeout() {
        let (url, _) = serve(SSE_HEAD, |_, n| {
            let bytes = if n == 0 {
                START.as_bytes().to_vec()
            } else if n % 2 == 0 {
                b"event: ping\ndata: {\"type\": \"ping\"}\n\n".to_vec()
            } else {
                b": keep-alive\n\n".to_vec()
            };
            Some((bytes, Duration::from_millis(100)))
        })
        .await;
        let err = first_error(url, Duration::from_secs(2), Duration::from_secs(600)).await;
        assert_eq!(err.to_string(), "anthropic: no data for 2 s (idle timeout)");
    }

    #[tokio::test]
    async fn a_turn_ended_by_pings_leaves_a_history_the_next_prompt_can_use() {
        use chatcli::agent::{self, AgentOptions};
        use chatcli::protocol::{AgentEvent, Op};
        use chatcli::provider::anthropic::{Anthropic, CacheTtl};
        let answer = crate::common::sse::anthropic("Back to normal.", None, 10, 0, 0, 3);
        let (base, _) = serve(SSE_HEAD, move |connection, n| match connection {
            0 => Some((
                if n == 0 {
                    START.as_bytes().to_vec()
                } else {
                    b"event: ping\ndata: {\"type\": \"ping\"}\n\n".to_vec()
                },
                Duration::from_millis(100),
            )),
            _ => (n == 0).then(|| (answer.clone().into_bytes(), Duration::ZERO)),
        })
        .await;
        let provider = Arc::new(Anthropic::new(
            Http::new(Duration::from_secs(30), Duration::from_secs(2)),
            "anthropic",
            base,
            "k".into(),
            "claude-sonnet-4-5".into(),
            CacheTtl::FiveMinutes,
        ));
        let dir = tempfile::tempdir().expect("tempdir");
        let mut options = AgentOptions::new("s".into(), Mode::Chat, dir.path().to_path_buf());
        options.smart_route = chatcli::agent::routing::RouteMode::Off;
        options.max_retries = 0;
        let mut handle = agent::spawn(provider, options);
        let cost = |e: &AgentEvent| matches!(e, AgentEvent::Cost { .. });
        for text in ["first", "second"] {
            handle
                .ops
                .send(Op::Submit {
                    text: text.into(),
                    mode: Mode::Chat,
                })
                .expect("alive");
            let events = tokio::time::timeout(
                Duration::from_secs(120),
                crate::common::events_until(&mut handle, cost),
            )
            .await
            .expect("the turn ended");
            let errors: Vec<&str> = events
                .iter()
                .filter_map(|e| match e {
                    AgentEvent::Error { message } => Some(message.as_str()),
                    _ => None,
                })
                .collect();
            let finished = events.iter().find_map(|e| match e {
                AgentEvent::TurnFinished { text, .. } => Some(text.clone()),
                _ => None,
            });
            if text == "first" {
                assert_eq!(errors, vec!["anthropic: no data for 2 s (idle timeout)"]);
            } else {
                assert!(errors.is_empty(), "{errors:?}");
                assert_eq!(finished.as_deref(), Some("Back to normal."));
            }
        }
    }

    #[tokio::test]
    async fn a_response_that_never_finishes_stops_at_the_response_timeout() {
        let (url, _) = serve(SSE_HEAD, |_, n| {
            let bytes = if n == 0 {
                START.to_string()
            } else {
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"la \"}}\n\n".to_string()
            };
            Some((bytes.into_bytes(), Duration::from_millis(100)))
        })
        .await;
        let err = first_error(url, Duration::from_secs(60), Duration::from_secs(3)).await;
        assert!(
            matches!(err, ProviderError::ResponseTimeout { .. }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "anthropic: the response took longer than 3 s (CHATCLI_RESPONSE_TIMEOUT) and was stopped; raise it for very long answers"
        );
        assert!(!err.is_retryable());
    }

    #[tokio::test]
    async fn a_300_mb_line_is_refused_past_16_mib_without_reading_it_all() {
        let total_chunks = 300 * 16; // 300 MB in 64 KiB pieces
        let (url, written) = serve(SSE_HEAD, move |_, n| {
            if n == 0 {
                return Some((
                    b"event: content_block_delta\ndata: ".to_vec(),
                    Duration::ZERO,
                ));
            }
            (n <= total_chunks).then(|| (vec![b'a'; 64 * 1024], Duration::ZERO))
        })
        .await;
        let err = first_error(url, Duration::from_secs(60), Duration::from_secs(600)).await;
        assert_eq!(
            err.to_string(),
            "anthropic: unreadable response: a line longer than 16 MiB; the stream was stopped"
        );
        let sent = written.load(Ordering::Relaxed);
        assert!(
            sent < 200 * 1024 * 1024,
            "{sent} bytes were sent before the stop"
        );
    }

    #[tokio::test]
    async fn a_200_mb_error_body_is_read_only_to_64_kb() {
        let head = "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n";
        let (url, written) = serve(head, |_, n| {
            if n == 0 {
                return Some((b"upstream exploded\n".to_vec(), Duration::ZERO));
            }
            (n <= 200 * 16).then(|| (vec![b'x'; 64 * 1024], Duration::ZERO))
        })
        .await;
        let err = first_error(url, Duration::from_secs(60), Duration::from_secs(600)).await;
        match &err {
            ProviderError::Http {
                status, message, ..
            } => {
                assert_eq!(*status, 500);
                assert_eq!(message, "upstream exploded");
            }
            other => panic!("{other}"),
        }
        let sent = written.load(Ordering::Relaxed);
        // The socket buffers take some: far below 200 MB, far above 64 KB is fine.
        assert!(
            sent < 100 * 1024 * 1024,
            "{sent} bytes were sent for a {MAX_ERROR_BODY_BYTES}-byte read"
        );
    }
}

/// web_fetch: every hop's addresses are checked, bodies are decompressed but capped, and any
/// HTML under the cap converts in bounded time.
mod pages {
    use super::*;
    use chatcli::tools::web_fetch::{HostLookup, fetch_text, fetch_text_via};
    use futures_util::FutureExt;
    use futures_util::future::BoxFuture;
    use std::io::Write;
    use std::net::IpAddr;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    /// The test's own DNS: fixed answers, nothing from the network.
    struct Names(Vec<(&'static str, IpAddr)>);

    impl HostLookup for Names {
        fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
            let found: Vec<IpAddr> = self
                .0
                .iter()
                .filter(|(name, _)| *name == host)
                .map(|(_, ip)| *ip)
                .collect();
            async move {
                if found.is_empty() {
                    Err(std::io::Error::other("no such name"))
                } else {
                    Ok(found)
                }
            }
            .boxed()
        }
    }

    fn names() -> Arc<Names> {
        Arc::new(Names(vec![
            ("start.test", "127.0.0.1".parse().expect("ip")),
            ("evil.test", "169.254.169.254".parse().expect("ip")),
        ]))
    }

    async fn redirecting_to(location: String) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/start"))
            .respond_with(ResponseTemplate::new(302).insert_header("location", location.as_str()))
            .mount(&server)
            .await;
        server
    }

    #[tokio::test]
    async fn a_redirect_to_a_name_that_resolves_to_a_metadata_address_is_refused() {
        let server = MockServer::start().await;
        let port = server.address().port();
        Mock::given(method("GET"))
            .and(path("/start"))
            .respond_with(ResponseTemplate::new(302).insert_header(
                "location",
                format!("http://evil.test:{port}/latest/meta-data/").as_str(),
            ))
            .mount(&server)
            .await;
        let err = fetch_text_via(&format!("http://start.test:{port}/start"), false, names())
            .await
            .expect_err("refused");
        assert_eq!(
            err.to_string(),
            "refused: redirect to a cloud metadata address (169.254.169.254): evil.test resolves there, and tools may not reach it"
        );
        // The first hop itself goes through the same check.
        let err = fetch_text_via(&format!("http://evil.test:{port}/"), false, names())
            .await
            .expect_err("refused");
        assert!(
            err.to_string()
                .starts_with("refused: request to a cloud metadata address (169.254.169.254)"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_redirect_to_a_literal_metadata_address_says_so() {
        let server = redirecting_to("http://169.254.169.254/latest/".into()).await;
        let err = fetch_text(&format!("{}/start", server.uri()), false)
            .await
            .expect_err("refused");
        assert_eq!(
            err.to_string(),
            "refused: redirect to a cloud metadata address (169.254.169.254)"
        );
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).expect("compress");
        encoder.finish().expect("compress")
    }

    async fn serve_encoded(body: Vec<u8>, content_type: &str) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/page"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-encoding", "gzip")
                    .set_body_raw(body, content_type),
            )
            .mount(&server)
            .await;
        server
    }

    #[tokio::test]
    async fn a_gzip_page_arrives_as_text() {
        let html = "<html><body><h1>Compressed</h1><p>The body was gzip.</p></body></html>";
        let server = serve_encoded(gzip(html.as_bytes()), "text/html; charset=utf-8").await;
        let text = fetch_text(&format!("{}/page", server.uri()), false)
            .await
            .expect("fetched");
        assert!(text.contains("The body was gzip."), "{text}");
    }

    #[tokio::test]
    async fn a_compression_bomb_stops_at_10_mb_with_a_note() {
        // 40 MB of text in about 40 KB on the wire.
        let bomb = gzip(&vec![b'a'; 40 * 1024 * 1024]);
        assert!(bomb.len() < 1024 * 1024);
        let server = serve_encoded(bomb, "text/plain").await;
        let text = fetch_text(&format!("{}/page", server.uri()), false)
            .await
            .expect("fetched");
        assert!(text.len() <= 10 * 1024 * 1024 + 300, "{} bytes", text.len());
        let (first, rest) = text.split_once('\n').expect("lines");
        assert!(
            first.starts_with(
                "[cut: shown the text of the body's first 10,485,760 bytes of more than "
            ) && first.ends_with("; the rest was not read]"),
            "the cut is said first: {first}"
        );
        assert!(rest.starts_with("aaaa"));
    }

    #[tokio::test]
    async fn a_hundred_thousand_nested_divs_convert_in_bounded_time() {
        let depth = 100_000;
        let html = format!(
            "<html><body>{}<p>deep text</p>{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/deep"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(html, "text/html"))
            .mount(&server)
            .await;
        let started = std::time::Instant::now();
        // Generous: seconds are measured in the benchmark, this only catches the quadratic case.
        let text = tokio::time::timeout(
            Duration::from_secs(60),
            fetch_text(&format!("{}/deep", server.uri()), false),
        )
        .await
        .expect("converted within 60 s")
        .expect("fetched");
        eprintln!("100k nested divs: {:?}", started.elapsed());
        assert_eq!(text.trim(), "deep text");
    }
}

/// `chatcli exec` stopped by a signal while `run_command` runs: a real process, a real signal.
#[cfg(unix)]
mod signals {
    use super::*;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => false,
            Ok(stat) => !stat.contains(") Z"),
        }
    }

    fn read_pid(path: &Path) -> Option<i32> {
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    }

    async fn stopped_by(signal: i32, expected_code: Option<i32>) {
        let ws = tempfile::tempdir().expect("tempdir");
        let home = tempfile::tempdir().expect("tempdir");
        let ws_path = ws.path().canonicalize().expect("canonical");
        let cmd = format!(
            "sleep 1000 & echo $! > {child}; echo $$ > {shell}; wait",
            child = ws_path.join("child.pid").display(),
            shell = ws_path.join("shell.pid").display()
        );
        let args = json!({ "cmd": cmd }).to_string();
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(crate::common::sse::openai_chat(
                        "",
                        Some(("call_1", "run_command", &args)),
                        30,
                        0,
                        5,
                    )),
            )
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(crate::common::sse::openai_chat("done", None, 30, 0, 5)),
            )
            .mount(&server)
            .await;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("CHATCLI_HOME", home.path())
            .env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
            .current_dir(&ws_path)
            .args([
                "exec",
                "--json",
                "--yes",
                "--provider",
                "openai",
                "--mode",
                "agent",
                "go",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("chatcli starts");
        let (mut shell, mut sleeper) = (None, None);
        for _ in 0..1200 {
            shell = read_pid(&ws_path.join("shell.pid"));
            sleeper = read_pid(&ws_path.join("child.pid"));
            if shell.is_some() && sleeper.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (Some(shell), Some(sleeper)) = (shell, sleeper) else {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "run_command never started: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        // SAFETY: kill sends a signal to the chatcli process this test started.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let mut status = None;
        for _ in 0..1200 {
            if let Some(s) = child.try_wait().expect("wait") {
                status = Some(s);
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let Some(status) = status else {
            let _ = child.kill();
            panic!("chatcli exec did not exit within 60 s of signal {signal}");
        };
        let out = child.wait_with_output().expect("output");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            status.code(),
            expected_code,
            "stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // A SIGKILL leaves no chance to write: only a handled signal flushes the events.
        if expected_code.is_some() {
            assert!(
                stdout.contains("\"tool_call\""),
                "the events were written: {stdout}"
            );
        }
        for _ in 0..100 {
            if !alive(shell) && !alive(sleeper) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!alive(shell), "sh {shell} outlived exec");
        assert!(
            !alive(sleeper),
            "the background sleep {sleeper} outlived exec"
        );
    }

    #[tokio::test]
    async fn sigterm_kills_the_command_and_exits_143() {
        stopped_by(libc::SIGTERM, Some(143)).await;
    }

    #[tokio::test]
    async fn sigint_kills_the_command_and_exits_130() {
        stopped_by(libc::SIGINT, Some(130)).await;
    }

    /// chatcli cannot act on a SIGKILL: the door's reaper sees its pipe close and kills the
    /// command's group, the background `sleep` with it.
    #[tokio::test]
    async fn sigkill_of_chatcli_still_kills_the_command_and_its_children() {
        stopped_by(libc::SIGKILL, None).await;
    }

    #[tokio::test]
    async fn sighup_kills_the_command_and_exits_129() {
        stopped_by(libc::SIGHUP, Some(129)).await;
    }
}
