//! What the engine clients ([`crate::htp::HtpPlayer`], [`crate::uci_client::UciPlayer`]) share
//! to run an engine as a child process ([`EngineProcess`]: its pipes, its output as capped lines
//! on a channel, the last lines of its standard error for error messages, and ending it) and
//! what goes wrong talking to one ([`EngineError`]).
//!
//! Nothing an engine writes is trusted: lines are cut at [`crate::lines::MAX_LINE`] bytes (on standard error
//! too), so that an engine that never ends a line cannot fill our memory.

use std::collections::VecDeque;
use std::io::{self, BufReader, Read, Write};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::lines::CappedLines;

/// How many lines of an engine's standard error are kept for error messages.
const STDERR_LINES: usize = 20;

/// How long an engine has to exit after `quit` before it is killed.
pub(crate) const QUIT_GRACE: Duration = Duration::from_millis(200);

/// What went wrong talking to an engine, over HTP or the UCI-style protocol (the clients
/// re-export it as `HtpError` and `UciError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The program could not be started.
    #[error("cannot start `{program}`: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
    /// The engine exited (or closed its output) before answering.
    #[error("the engine died before answering `{command}`{stderr}")]
    Died {
        /// The command it was answering.
        command: String,
        /// Its last lines of standard error, if any, prefixed for display.
        stderr: String,
    },
    /// No answer in time; the engine is killed.
    #[error("no answer to `{command}` within {timeout:?}; engine killed")]
    Timeout {
        /// The command.
        command: String,
        /// The time allowed.
        timeout: Duration,
    },
    /// A line longer than the protocol allows; the engine is killed.
    #[error("answering `{command}`, the engine wrote a line of {len} bytes (at most {max}); engine killed")]
    LineTooLong {
        /// The command.
        command: String,
        /// The line's length as read (cut at [`crate::lines::MAX_LINE`]).
        len: usize,
        /// The protocol's longest line (UCI: [`crate::uci_client::MAX_UCI_LINE`]).
        max: usize,
    },
    /// The engine refused the command (HTP: `? MESSAGE`; UCI: `info string error…`).
    #[error("the engine refused `{command}`: {message}")]
    Refused {
        /// The command.
        command: String,
        /// The engine's words.
        message: String,
    },
    /// The engine's answer made no sense (a bad move text, a move of the wrong side).
    #[error("the engine answered `{command}` with `{reply}`: {why}")]
    Garbage {
        /// The command.
        command: String,
        /// The reply.
        reply: String,
        /// What is wrong with it.
        why: String,
    },
    /// The engine has no move (UCI: `bestmove (none)` or `0000`) in a game that is not over.
    #[error("the engine has no move (`bestmove {reply}`) in a game that goes on{said}")]
    NoMove {
        /// The move text.
        reply: String,
        /// Its last `info string`, if any, prefixed for display.
        said: String,
    },
    /// The engine chose a move that is illegal in our game.
    #[error("the engine played the illegal move {mv}: {why}")]
    IllegalMove {
        /// The move.
        mv: String,
        /// Why it is illegal.
        why: String,
    },
    /// The engine resigned (HTP).
    #[error("the engine resigned")]
    Resigned,
    /// The game cannot be played with this engine.
    #[error("{0}")]
    Unsupported(String),
}

/// A running engine: a child process, its output line by line, the tail of its standard error.
/// After it died, timed out or was killed, every use fails with [`EngineError::Died`]; dropping
/// it asks it to `quit`, then kills it.
pub(crate) struct EngineProcess {
    program: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: StderrTail,
    dead: bool,
}

impl EngineProcess {
    /// Starts `program` with `args`.
    pub(crate) fn spawn(program: &str, args: &[String]) -> Result<EngineProcess, EngineError> {
        let piped = spawn_piped(program, args)
            .map_err(|e| EngineError::Spawn { program: program.to_string(), message: e.to_string() })?;
        // Reader threads end when the child closes its pipes (it exits or is killed).
        Ok(EngineProcess {
            program: program.to_string(),
            child: piped.child,
            stdin: piped.stdin,
            lines: line_reader(piped.stdout),
            stderr: StderrTail::spawn(piped.stderr),
            dead: false,
        })
    }

    /// The program, for error messages.
    pub(crate) fn program(&self) -> &str {
        &self.program
    }

    /// Fails with [`EngineError::Died`] once the engine is dead.
    pub(crate) fn alive(&mut self, command: &str) -> Result<(), EngineError> {
        if self.dead { Err(self.died(command)) } else { Ok(()) }
    }

    /// Writes `command` and a newline to the engine's standard input.
    pub(crate) fn send(&mut self, command: &str) -> Result<(), EngineError> {
        self.alive(command)?;
        if writeln!(self.stdin, "{command}").and_then(|()| self.stdin.flush()).is_err() {
            return Err(self.died(command));
        }
        Ok(())
    }

    /// The next line of its standard output, waiting at most `wait`; `None` when none came.
    pub(crate) fn recv(&mut self, command: &str, wait: Duration) -> Result<Option<String>, EngineError> {
        self.alive(command)?;
        match self.lines.recv_timeout(wait) {
            Ok(line) => Ok(Some(line)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(self.died(command)),
        }
    }

    /// Whether the process has exited.
    pub(crate) fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// The error for a dead engine, with its last words on standard error.
    pub(crate) fn died(&mut self, command: &str) -> EngineError {
        if !self.dead {
            // Let it finish exiting and the stderr reader collect what it said.
            self.stderr.settle(Duration::from_millis(500));
            self.kill();
        }
        EngineError::Died { command: command.to_string(), stderr: self.stderr.said_by(&self.program) }
    }

    /// Kills the engine for not answering `command` within `timeout`.
    pub(crate) fn timed_out(&mut self, command: &str, timeout: Duration) -> EngineError {
        self.kill();
        EngineError::Timeout { command: command.to_string(), timeout }
    }

    /// Kills the engine; it is dead from now on.
    pub(crate) fn kill(&mut self) {
        self.dead = true;
        kill(&mut self.child);
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        if self.dead {
            self.kill();
        } else {
            // A `bye` is not waited for: the exit is what counts.
            quit_or_kill(&mut self.child, &mut self.stdin);
        }
    }
}

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
