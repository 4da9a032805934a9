//! What the binary's integration tests share.
#![allow(clippy::expect_used, dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the `tafl` binary with `args`, `stdin` written to it and then closed, and waits for it.
pub fn tafl(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tafl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tafl");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    child.wait_with_output().expect("wait for tafl")
}
