//! The HTP client against tiny fake engines written in `sh`: a good one, one that answers
//! garbage, one that dies, one that hangs and one that plays an illegal move.

use std::time::Duration;

use tafl_protocol::htp::{HtpConfig, HtpError, HtpPlayer};
use tafl_rules::{Game, Variant};

fn fake(script: &str) -> HtpPlayer {
    let config = HtpConfig {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        move_timeout: Duration::from_millis(500),
        command_timeout: Duration::from_millis(500),
        name: Some("fake".into()),
    };
    HtpPlayer::spawn(config).expect("sh starts")
}

/// Answers `=` to everything, and `generate_move` with `REPLY`.
fn engine_answering(reply: &str) -> String {
    format!(
        r#"while read cmd rest; do case "$cmd" in generate_move) echo "log line the client skips"; echo "= {reply}";; *) echo "= "; echo;; esac; done"#
    )
}

#[test]
fn a_good_engine_moves() {
    let mut p = fake(&engine_answering("play attacker d1 d4, score: 1"));
    let game = Game::new(Variant::copenhagen());
    assert_eq!(p.generate(&game).unwrap().to_string(), "d1-d4");
}

#[test]
fn garbage_is_an_error() {
    let mut p = fake(&engine_answering("hello there"));
    let game = Game::new(Variant::copenhagen());
    assert!(matches!(p.generate(&game), Err(HtpError::Garbage { .. })));
}

#[test]
fn an_illegal_move_is_an_error() {
    let mut p = fake(&engine_answering("play attacker a1 a2"));
    let game = Game::new(Variant::copenhagen());
    assert!(matches!(p.generate(&game), Err(HtpError::IllegalMove { .. })));
}

#[test]
fn a_refusal_is_an_error() {
    let mut p = fake(r#"while read l; do echo "? no"; echo; done"#);
    let game = Game::new(Variant::copenhagen());
    assert!(matches!(p.generate(&game), Err(HtpError::Refused { .. })));
}

#[test]
fn an_engine_that_dies_at_once_does_not_start() {
    let config = HtpConfig { program: "sh".into(), args: vec!["-c".into(), "echo 'bad flag' >&2; exit 2".into()], ..HtpConfig::from_command_line("sh").unwrap() };
    let e = HtpPlayer::spawn(config).err().unwrap();
    assert!(matches!(&e, HtpError::Spawn { message, .. } if message.contains("bad flag")), "{e}");
}

#[test]
fn death_is_an_error() {
    let mut p = fake("read l; echo '= fake'; read l; echo 'bye' >&2; exit 3");
    let game = Game::new(Variant::copenhagen());
    let e = p.generate(&game).unwrap_err();
    assert!(matches!(e, HtpError::Died { .. }), "{e}");
}

#[test]
fn silence_times_out() {
    let mut p = fake("read l; echo '= fake'; while read l; do :; done");
    let game = Game::new(Variant::copenhagen());
    assert!(matches!(p.generate(&game), Err(HtpError::Timeout { .. })));
    // Once killed, it stays failed.
    assert!(p.generate(&game).is_err());
}

#[test]
fn resignation_is_reported() {
    let mut p = fake(&engine_answering("play attacker resigns _"));
    let game = Game::new(Variant::copenhagen());
    assert!(matches!(p.generate(&game), Err(HtpError::Resigned)));
}
