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
        tcp: false,
    };
    HtpPlayer::spawn(config).expect("sh starts")
}

/// A fake engine in the reference's `--host` mode: bash connects to the address it is given
/// (its `$1`, after `$0` = `--host`), reads commands from the socket, answers `generate_move`
/// there with the move alone, `play` not at all, and anything else with `= ` on standard output.
const TCP_ENGINE: &str = r#"exec 3<>/dev/tcp/$1/49152
while read -r cmd rest <&3; do case "$cmd" in play) ;; generate_move) echo "play attacker d1 d4" >&3;; *) echo "= ";; esac; done"#;

fn tcp_config(script: &str) -> HtpConfig {
    HtpConfig {
        program: "bash".into(),
        args: vec!["-c".into(), script.into()],
        move_timeout: Duration::from_millis(2000),
        command_timeout: Duration::from_millis(2000),
        name: Some("fake-tcp".into()),
        tcp: true,
    }
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
    let config = HtpConfig {
        program: "sh".into(),
        args: vec!["-c".into(), "echo 'bad flag' >&2; exit 2".into()],
        ..HtpConfig::from_command_line("sh").unwrap()
    };
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
    // As a player, a resignation is a lost game, not an engine failure.
    let mut p = fake(&engine_answering("play attacker resigns _"));
    let choice = tafl_search::Player::choose(&mut p, &game, &tafl_search::Limits::default());
    assert_eq!(choice, Err(tafl_search::PlayerError::Resigned));
    assert_eq!(tafl_search::PlayerError::Resigned.to_string(), "resigned");
}

#[test]
fn an_engine_that_connects_to_us_plays_a_game_each_run() {
    use tafl_search::{Limits, Player};
    let mut p = HtpPlayer::spawn(tcp_config(TCP_ENGINE)).expect("the fake engine connects");
    let mut game = Game::new(Variant::copenhagen());
    assert_eq!(p.generate(&game).unwrap().to_string(), "d1-d4");
    // A second engine at once gets its own address.
    let mut other = HtpPlayer::spawn(tcp_config(TCP_ENGINE)).expect("a second engine connects");
    assert_eq!(other.generate(&game).unwrap().to_string(), "d1-d4");
    // A new game starts a fresh engine (the reference exits after each game).
    p.new_game();
    game.play(tafl_rules::parse_move("h1-h3", 11).unwrap().mv).unwrap();
    game.play(tafl_rules::parse_move("e5-e2", 11).unwrap().mv).unwrap();
    p.new_game();
    assert_eq!(p.choose(&game, &Limits::default()).unwrap().mv.to_string(), "d1-d4");
}

#[test]
fn an_engine_that_never_connects_fails_to_start() {
    let e = HtpPlayer::spawn(tcp_config("sleep 10")).err().unwrap();
    assert!(matches!(e, HtpError::Timeout { .. }), "{e}");
    let e = HtpPlayer::spawn(tcp_config("echo 'no such flag' >&2; exit 2")).err().unwrap();
    assert!(matches!(&e, HtpError::Died { stderr, .. } if stderr.contains("no such flag")), "{e}");
}
