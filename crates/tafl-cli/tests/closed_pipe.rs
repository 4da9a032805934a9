//! Output into a pipe whose reader went away (`tafl show | head -3`): every command ends quietly
//! with the status a shell shows for a program that SIGPIPE ended (141), never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, ExitStatus, Stdio};

const ARCHIVE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tafl-rules/tests/data/copenhagen-11x11-archive.csv");
const CLOSED_PIPE: i32 = 141;

fn tafl(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tafl"));
    command.args(args).stdin(Stdio::null());
    command
}

/// A pipe that nobody reads: its reading end is closed before the command starts, so the first
/// write fails, whatever the timing.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

fn assert_quiet(status: ExitStatus, stderr: &str) {
    for trace in ["panicked", "Broken pipe", "backtrace", "failed printing"] {
        assert!(!stderr.contains(trace), "{trace} on stderr: {stderr}");
    }
    assert_eq!(status.code(), Some(CLOSED_PIPE), "{status}: {stderr}");
}

/// Runs `args` with standard output into a closed pipe; returns the status and standard error.
fn with_stdout_closed(args: &[&str]) -> (ExitStatus, String) {
    let out = tafl(args).stdout(closed_pipe()).stderr(Stdio::piped()).output().unwrap();
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn like_head_replay_stops_quietly_after_the_first_line() {
    // Far more than a pipe buffer (64 KiB) of JSON: the writer meets the closed pipe for sure.
    let mut child = tafl(&["replay", "--json", ARCHIVE]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("{\"game\":1"), "{first}");
    drop(stdout);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_quiet(child.wait().unwrap(), &stderr);
}

#[test]
fn printing_commands_end_quietly_on_a_closed_stdout() {
    for args in [
        &["show", "--variant", "tablut"][..],
        &["perft", "--variant", "brandubh", "--depth", "2"],
        &["replay", ARCHIVE],
        // `play` writes through io::Write and returns the error instead of panicking.
        &["play", "--player", "random:seed=1", "--variant", "brandubh"],
    ] {
        let (status, stderr) = with_stdout_closed(args);
        assert_quiet(status, &format!("tafl {}: {stderr}", args.join(" ")));
    }
}

#[test]
fn progress_on_a_closed_stderr_ends_quietly() {
    // The arena writes a line per pair to standard error when it is not a terminal.
    let out = tafl(&[
        "arena",
        "--a",
        "random:seed=1",
        "--b",
        "random:seed=2",
        "--games",
        "20",
        "--threads",
        "1",
        "--max-plies",
        "40",
    ])
    .stdout(Stdio::piped())
    .stderr(closed_pipe())
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(CLOSED_PIPE), "{}", out.status);
    // It stopped at the first progress line, before the results table.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Elo"));
}
