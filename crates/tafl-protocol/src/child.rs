//! What the engine clients ([`crate::htp::HtpPlayer`], [`crate::uci_client::UciPlayer`]) share
//! to run an engine as a child process: its pipes, its output as capped lines on a channel, the
//! last lines of its standard error for error messages, and ending it.
//!
//! Nothing an engine writes is trusted: lines are cut at [`crate::lines::MAX_LINE`] bytes (on standard error
//! too), so that an engine that never ends a line cannot fill our memory.

use std::collections::VecDeque;
use std::io::{self, BufReader, Read, Write};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::lines::CappedLines;

/// How many lines of an engine's standard error are kept for error messages.
const STDERR_LINES: usize = 20;

/// How long an engine has to exit after `quit` before it is killed.
pub(crate) const QUIT_GRACE: Duration = Duration::from_millis(200);

/// A started engine and its three pipes.
pub(crate) struct Piped {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) stderr: ChildStderr,
}

/// Starts `program` with its standard streams piped to us.
pub(crate) fn spawn_piped(program: &str, args: &[String]) -> io::Result<Piped> {
    let mut child =
        Command::new(program).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
        (Some(stdin), Some(stdout), Some(stderr)) => Ok(Piped { child, stdin, stdout, stderr }),
        _ => {
            kill(&mut child);
            Err(io::Error::other("no pipe to the child"))
        }
    }
}

/// Splits a command line at whitespace (no quoting): the program and its arguments, or `None`
/// when the line is blank.
pub(crate) fn split_command_line(command_line: &str) -> Option<(String, Vec<String>)> {
    let mut words = command_line.split_whitespace().map(str::to_string);
    let program = words.next()?;
    Some((program, words.collect()))
}

/// `KIND:PROGRAM ARGS` with the program's directory left out: a name for tables.
pub(crate) fn display_name(kind: &str, program: &str, args: &[String]) -> String {
    let mut name = format!("{kind}:{}", program.rsplit('/').next().unwrap_or(program));
    for a in args {
        name.push(' ');
        name.push_str(a);
    }
    name
}

/// Lines read from `source` (each cut at [`crate::lines::MAX_LINE`]) by a thread that ends when the source
/// closes or the receiver is dropped.
pub(crate) fn line_reader(source: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, lines) = channel();
    thread::spawn(move || {
        for line in CappedLines::new(BufReader::new(source)) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// The last [`STDERR_LINES`] lines an engine wrote to its standard error, collected by a thread
/// that ends when the engine closes it (exits or is killed).
pub(crate) struct StderrTail {
    kept: Arc<Mutex<VecDeque<String>>>,
    reader: thread::JoinHandle<()>,
}

impl StderrTail {
    /// Starts collecting `pipe`.
    pub(crate) fn spawn(pipe: impl Read + Send + 'static) -> StderrTail {
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&kept);
        let reader = thread::spawn(move || {
            for line in CappedLines::new(BufReader::new(pipe)) {
                let Ok(mut tail) = tail.lock() else { break };
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        });
        StderrTail { kept, reader }
    }

    /// Waits up to `within` for the engine to close its standard error, so that its last words
    /// are in (briefly: a child that keeps the pipe open must not hang us).
    pub(crate) fn settle(&self, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.reader.is_finished() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// `; PROGRAM said: LINE | LINE …`, or nothing when it said nothing: the tail of an error
    /// message.
    pub(crate) fn said_by(&self, program: &str) -> String {
        let said = self.kept.lock().map(|l| l.iter().cloned().collect::<Vec<_>>().join(" | ")).unwrap_or_default();
        if said.is_empty() { String::new() } else { format!("; {program} said: {said}") }
    }
}

/// Kills the child and reaps it.
pub(crate) fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Asks the engine to `quit`, gives it [`QUIT_GRACE`] to exit, then kills it: some engines spin
/// on a closed stdin, others ignore `quit` while they search.
pub(crate) fn quit_or_kill(child: &mut Child, stdin: &mut ChildStdin) {
    let _ = writeln!(stdin, "quit").and_then(|()| stdin.flush());
    let deadline = Instant::now() + QUIT_GRACE;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        thread::sleep(Duration::from_millis(5));
    }
    kill(child);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::htp::MAX_LINE;

    #[test]
    fn command_lines_and_names() {
        assert_eq!(
            split_command_line(" engine --depth 2 "),
            Some(("engine".to_string(), vec!["--depth".to_string(), "2".to_string()]))
        );
        assert_eq!(split_command_line("  "), None);
        assert_eq!(
            display_name("uci", "/opt/bin/taflzero", &["--net".into(), "n.onnx".into()]),
            "uci:taflzero --net n.onnx"
        );
    }

    #[test]
    fn stderr_keeps_the_last_lines_each_capped() {
        let mut text = (0..30).map(|i| format!("line {i}\n")).collect::<String>();
        text.push_str(&"x".repeat(MAX_LINE * 2));
        let tail = StderrTail::spawn(io::Cursor::new(text.into_bytes()));
        tail.settle(Duration::from_secs(5));
        let said = tail.said_by("engine");
        assert!(said.starts_with("; engine said: line 11 | line 12"), "{}", &said[..60]);
        assert!(said.ends_with(&"x".repeat(MAX_LINE)) && said.len() < 2 * MAX_LINE, "{}", said.len());
        let quiet = StderrTail::spawn(io::empty());
        quiet.settle(Duration::from_secs(5));
        assert_eq!(quiet.said_by("engine"), "");
    }
}
