//! The UCI client against scripted engines written in `sh`: one that answers as TaflZero's
//! README says (with `info` lines before `bestmove` and `bye` after `quit`), and ones that die,
//! stall, play an illegal move, answer garbage, write an over-long line, refuse a position or
//! wait for `stop`. Each engine writes the commands it gets to a log, so that the tests see what
//! the client sent.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use tafl_protocol::uci_client::{Score, UciConfig, UciError, UciPlayer};
use tafl_rules::{Game, Move, Variant, parse_move};
use tafl_search::{Limits, Player, PlayerError, Stop};

/// A scratch directory for one test's log.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-uci-client-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir
}

/// An engine in `sh`: it logs each command to `LOG`, answers the handshake by the table, and
/// runs `on_go` for `go`, `on_position` for `position` and `on_stop` for `stop`. `$n` counts
/// the `go`s (1 for the first).
fn script(log: &Path, on_position: &str, on_go: &str, on_stop: &str) -> String {
    format!(
        r#"n=0
while read -r cmd rest; do
  echo "$cmd $rest" >> '{log}'
  case "$cmd" in
    uci) echo "id name scripted"; echo "id author the tests"; echo uciok; echo "option name NNFile type string default ./nn.onnx";;
    isready) echo readyok;;
    position) {on_position} ;;
    go) n=$((n+1)); {on_go} ;;
    stop) {on_stop} ;;
    quit) echo bye; exit 0;;
    *) echo "unknown command";;
  esac
done"#,
        log = log.display()
    )
}

fn config(script: String) -> UciConfig {
    UciConfig {
        program: "sh".into(),
        args: vec!["-c".into(), script],
        movetime: None,
        nodes: None,
        move_timeout: Some(Duration::from_secs(5)),
        command_timeout: Duration::from_secs(5),
        name: Some("scripted".into()),
    }
}

fn spawn(script: String) -> UciPlayer {
    UciPlayer::spawn(config(script)).expect("the scripted engine starts")
}

fn logged(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(|l| l.trim_end().to_string()).collect()
}

fn mv(text: &str) -> Move {
    parse_move(text, 11).expect("a move").mv
}

/// Answers the first `go` with d1d4, the second with f4f3, each after two `info` lines.
const GOOD_GO: &str = r#"if [ $n = 1 ]; then m=d1d4; r=f4f3; else m=f4f3; r=h1h3; fi
      echo "info depth 1 score cp 20 nodes 10 time 1 speed 10000 pv $m"
      echo "info depth 2 score cp 35 nodes 40 time 2 speed 20000 pv $m $r"
      echo "bestmove $m""#;

#[test]
fn a_scripted_engine_plays_by_the_table() {
    let dir = scratch("table");
    let log = dir.join("log");
    let mut p = spawn(script(&log, "echo 'position set'", GOOD_GO, ":"));
    assert_eq!(p.engine_name(), Some("scripted"));
    assert_eq!(p.name(), "scripted");
    p.new_game();
    let game = Game::new(Variant::copenhagen());
    let limits = Limits { time: Some(Duration::from_millis(250)), ..Limits::default() };
    let c = p.choose(&game, &limits).expect("a move");
    assert_eq!(c.mv, mv("d1d4"));
    assert_eq!((c.depth, c.nodes, c.pv.clone()), (2, 40, vec![mv("d1d4"), mv("f4f3")]));
    assert_eq!(c.value, Some(Score::Cp(35).value()));
    // A new game from a position after d1d4: the defenders to move, sent as a FEN.
    let mut after = game.clone();
    after.play(mv("d1d4")).unwrap();
    let from_fen = Game::from_position(*after.position());
    p.new_game();
    let c = p.choose(&from_fen, &Limits { nodes: Some(300), ..Limits::default() }).expect("a second move");
    assert_eq!(c.mv, mv("f4f3"));
    drop(p);
    let fen = after.position().to_fen();
    let expected = [
        "uci",
        "isready",
        "ucinewgame",
        "position startpos",
        "isready",
        "go movetime 250",
        "ucinewgame",
        &format!("position fen {fen}"),
        "isready",
        "go nodes 300",
        "quit",
    ];
    assert_eq!(logged(&log), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn moves_are_sent_after_the_start() {
    let dir = scratch("moves");
    let log = dir.join("log");
    let mut p = spawn(script(&log, ":", "echo 'bestmove h1h3'", ":"));
    let mut game = Game::new(Variant::copenhagen());
    game.play(mv("d1d4")).unwrap();
    game.play(mv("f4f3")).unwrap();
    assert_eq!(p.choose(&game, &Limits::default()).unwrap().mv, mv("h1h3"));
    let log = logged(&log);
    assert!(log.contains(&"position startpos moves d1d4 f4f3".to_string()), "{log:?}");
    // No limits: a second a move.
    assert!(log.contains(&"go movetime 1000".to_string()), "{log:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn engine_error(p: &mut UciPlayer) -> String {
    match p.choose(
        &Game::new(Variant::copenhagen()),
        &Limits { time: Some(Duration::from_millis(100)), ..Limits::default() },
    ) {
        Err(PlayerError::Engine(e)) => e,
        other => panic!("expected an engine error, got {other:?}"),
    }
}

#[test]
fn an_engine_that_dies_mid_game_is_an_error() {
    let dir = scratch("dies");
    let mut p = spawn(script(&dir.join("log"), ":", "echo 'out of memory' >&2; exit 3", ":"));
    let e = engine_error(&mut p);
    assert!(e.contains("died") && e.contains("out of memory"), "{e}");
    // It stays failed.
    assert!(engine_error(&mut p).contains("died"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_engine_that_stalls_forfeits_within_its_timeout() {
    let dir = scratch("stalls");
    let mut p = UciPlayer::spawn(UciConfig {
        move_timeout: Some(Duration::from_millis(300)),
        ..config(script(&dir.join("log"), ":", ":", ":"))
    })
    .expect("starts");
    let started = Instant::now();
    let e = engine_error(&mut p);
    assert!(e.contains("no answer to `go movetime 100` within 300ms"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    // Killed: the next move fails at once.
    let started = Instant::now();
    assert!(engine_error(&mut p).contains("died"));
    assert!(started.elapsed() < Duration::from_secs(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_move_timeout_is_the_move_time_and_a_margin() {
    // With movetime 100 ms, an engine that answers after 1 s is still in time.
    let dir = scratch("margin");
    let config =
        UciConfig { move_timeout: None, ..config(script(&dir.join("log"), ":", "sleep 1; echo 'bestmove d1d4'", ":")) };
    let mut p = UciPlayer::spawn(config).expect("starts");
    let c = p.choose(
        &Game::new(Variant::copenhagen()),
        &Limits { time: Some(Duration::from_millis(100)), ..Limits::default() },
    );
    assert_eq!(c.map(|c| c.mv), Ok(mv("d1d4")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_illegal_move_is_an_error() {
    let dir = scratch("illegal");
    let mut p = spawn(script(&dir.join("log"), ":", "echo 'info string I like a1'; echo 'bestmove a1a2'", ":"));
    let e = engine_error(&mut p);
    assert!(e.contains("illegal move a1a2"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn garbage_and_no_move_are_errors() {
    let dir = scratch("garbage");
    let log = dir.join("log");
    let mut p = spawn(script(&log, ":", "echo 'bestmove hello'", ":"));
    let e = engine_error(&mut p);
    assert!(e.contains("`bestmove hello`"), "{e}");
    for none in ["(none)", "0000", ""] {
        let mut p = spawn(script(&log, ":", &format!("echo 'info string error: lost'; echo 'bestmove {none}'"), ":"));
        let e = engine_error(&mut p);
        assert!(e.contains("has no move") && e.contains("lost"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_over_long_line_is_an_error() {
    let dir = scratch("long");
    let on_go = "head -c 100000 /dev/zero | tr '\\0' a; echo; echo 'bestmove d1d4'";
    let mut p = spawn(script(&dir.join("log"), ":", on_go, ":"));
    let e = engine_error(&mut p);
    assert!(e.contains("a line of 65536 bytes"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_refused_position_fails_at_once() {
    let dir = scratch("refused");
    let log = dir.join("log");
    let mut p = spawn(script(&log, "echo 'info string error: no such board'", "echo 'bestmove d1d4'", ":"));
    let e = engine_error(&mut p);
    assert!(e.contains("refused `position`: error: no such board"), "{e}");
    assert!(!logged(&log).iter().any(|l| l.starts_with("go")), "{:?}", logged(&log));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stop_ends_a_search_early() {
    let dir = scratch("stop");
    let log = dir.join("log");
    // The engine answers `go` only when told to stop.
    let mut p = spawn(script(&log, ":", "echo 'info depth 1 nodes 5 pv d1d4'", "echo 'bestmove d1d4'"));
    let stop = Stop::new();
    let limits = Limits { time: Some(Duration::from_secs(60)), stop: stop.clone(), ..Limits::default() };
    let stopper = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        stop.stop();
    });
    let started = Instant::now();
    let c = p.choose(&Game::new(Variant::copenhagen()), &limits).expect("the move so far");
    assert_eq!((c.mv, c.depth, c.nodes), (mv("d1d4"), 1, 5));
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    stopper.join().unwrap();
    assert!(logged(&log).contains(&"stop".to_string()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_handshake_must_end() {
    let dir = scratch("handshake");
    // Never says `uciok`.
    let silent = UciConfig {
        command_timeout: Duration::from_millis(300),
        ..config("while read -r l; do echo 'id name mute'; done".into())
    };
    assert!(matches!(UciPlayer::spawn(silent), Err(UciError::Timeout { .. })));
    let dying = config("echo 'bad flag' >&2; exit 2".into());
    let e = UciPlayer::spawn(dying).err().expect("an error");
    assert!(matches!(&e, UciError::Died { stderr, .. } if stderr.contains("bad flag")), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An engine that offers its variants as our server does.
fn with_variants(log: &Path, vars: &str) -> String {
    script(log, ":", "echo 'bestmove d2c2'", ":")
        .replace("echo uciok;", &format!("echo 'option name Variant type combo default copenhagen{vars}'; echo uciok;"))
}

#[test]
fn an_engine_that_names_its_variants_is_set_to_the_games() {
    let dir = scratch("variants");
    let log = dir.join("log");
    let brandubh = Variant::preset("brandubh").expect("a preset");
    let mut p = spawn(with_variants(&log, " var copenhagen var brandubh"));
    // Brandubh: attackers on d1, d2, a4, b4, f4, g4, d6, d7; d2-c2 is legal.
    let c = p.choose(&Game::new(brandubh), &Limits::default()).expect("a move");
    assert_eq!(c.mv, parse_move("d2c2", 7).expect("a move").mv);
    let sent = logged(&log);
    assert!(sent.contains(&"setoption name Variant value brandubh".to_string()), "{sent:?}");
    assert!(sent.contains(&"position startpos".to_string()), "{sent:?}");
    // A variant it does not offer fails before any position is sent.
    let dir2 = scratch("variants-no");
    let log2 = dir2.join("log");
    let mut p = spawn(with_variants(&log2, " var copenhagen"));
    match p.choose(&Game::new(brandubh), &Limits::default()) {
        Err(PlayerError::Engine(e)) => assert!(e.contains("the engine plays copenhagen, not brandubh"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert!(!logged(&log2).iter().any(|l| l.starts_with("position")));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn an_engine_without_variants_gets_other_boards_as_a_fen() {
    let dir = scratch("fen");
    let log = dir.join("log");
    let mut p = spawn(script(&log, ":", "echo 'bestmove d2c2'", ":"));
    let brandubh = Variant::preset("brandubh").expect("a preset");
    let _ = p.choose(&Game::new(brandubh), &Limits::default());
    let sent = logged(&log);
    assert!(sent.iter().any(|l| *l == format!("position fen {}", Game::new(brandubh).position().to_fen())), "{sent:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
