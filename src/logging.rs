//! Logs go to a file under `CHATCLI_HOME/logs`, never to the terminal the TUI owns.
//!
//! One file a day, `chatcli.log.YYYY-MM-DD` (UTC), written through tracing-appender's
//! non-blocking writer; the returned guard must live until exit or the last lines are lost.
//! `RUST_LOG` (or `LOG_LEVEL`, the reference system's name) sets the filter; the default is
//! `info`. Privacy does not depend on the umask: every directory chatcli creates is made 0700 as
//! it is created (parents included), and the log files are opened 0600 (tracing-appender's own
//! rolling appender would create them 0644, or 0666 under `umask 000`). Every line goes through
//! the secrets masker before it reaches the file: MCP servers' stderr and failing URLs are
//! logged as they came, and may carry a key.

use std::io::Write;
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

use crate::clock::{civil_from_days, now_secs};
use crate::env::Env;
use crate::files::File;
use crate::private_fs::{append_private, create_private_dir};

/// Starts file logging; `None` when the directory cannot be made (chatcli runs on without logs).
pub fn init(dir: &Path, env: &Env) -> Option<WorkerGuard> {
    if create_private_dir(dir).is_err() {
        return None;
    }
    let mut appender = DailyFile::new(dir, "chatcli.log");
    appender.secrets = crate::secrets::Secrets::from_env(env);
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let level = env
        .get("RUST_LOG")
        .or_else(|| env.get("LOG_LEVEL"))
        .unwrap_or("info");
    let filter = EnvFilter::try_new(level).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

/// A log file per UTC day, opened 0600.
struct DailyFile {
    dir: PathBuf,
    prefix: String,
    day: i64,
    file: Option<File>,
    /// Masked in every line: an MCP server's stderr or a failing URL may carry a key.
    secrets: crate::secrets::Secrets,
}

impl DailyFile {
    fn new(dir: &Path, prefix: &str) -> DailyFile {
        DailyFile {
            dir: dir.to_path_buf(),
            prefix: prefix.to_string(),
            day: i64::MIN,
            file: None,
            secrets: Default::default(),
        }
    }

    fn current(&mut self) -> std::io::Result<&mut File> {
        let day = (now_secs() / 86_400) as i64;
        if self.file.is_none() || day != self.day {
            let (y, m, d) = civil_from_days(day);
            let path = self
                .dir
                .join(format!("{}.{y:04}-{m:02}-{d:02}", self.prefix));
            // 0600, never through a planted link; a file an older chatcli left 0644 is narrowed.
            self.file = Some(append_private(&path, true)?);
            self.day = day;
        }
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("log file not open"))
    }
}

impl Write for DailyFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // tracing writes one whole event per call: mask it, write it all, report it all.
        if self.secrets.is_empty() {
            return self.current()?.write(buf);
        }
        let masked = self.secrets.mask_bytes(buf);
        self.current()?.write_all(&masked)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn log_files_and_created_parents_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let logs = dir.path().join("home").join("logs");
        create_private_dir(&logs).expect("mkdir");
        let mut file = DailyFile::new(&logs, "chatcli.log");
        file.write_all(b"line\n").expect("write");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&dir.path().join("home")), 0o700);
        assert_eq!(mode(&logs), 0o700);
        let entries: Vec<PathBuf> = std::fs::read_dir(&logs)
            .expect("dir")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(entries.len(), 1);
        assert!(
            entries[0]
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("chatcli.log.20"))
        );
        assert_eq!(mode(&entries[0]), 0o600);
    }

    #[test]
    fn secrets_never_reach_the_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut file = DailyFile::new(dir.path(), "chatcli.log");
        file.secrets = crate::secrets::Secrets::of(&["sk-ant-0123456789abcdef"]);
        let line = b"mcp stderr: using key sk-ant-0123456789abcdef\n";
        assert_eq!(file.write(line).expect("write"), line.len());
        file.flush().expect("flush");
        let entry = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .next()
            .expect("a file");
        let text = std::fs::read_to_string(entry.path()).expect("read");
        assert_eq!(text, "mcp stderr: using key sk-…cdef\n");
    }
}
