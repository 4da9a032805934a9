//! `tafl engine`, `tafl play` and `tafl analyse` driven through the binary with scripted stdin.

use std::path::PathBuf;
use std::process::Output;

mod common;

use common::tafl;

const COPENHAGEN_OTN: &str = "dim:11 name:Copenhagen atkf:y tfr:w sw:s efe:y start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-cli-engine-play-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

#[test]
fn engine_speaks_htp() {
    let out = tafl(
        &["engine", "--protocol", "htp", "--player", "random:seed=1"],
        "protocol_version\ngenerate_move\nplay attacker a1 a2\nfinal_status\nquit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "= 1-beta");
    assert!(lines[1].starts_with("= play attacker "), "{stdout}");
    assert_eq!(lines[2], "? play: it isn't your turn");
    assert_eq!(lines[4], "= ongoing");
}

#[test]
fn engine_speaks_uci() {
    let out = tafl(
        &["engine", "--protocol", "uci", "--player", "alphabeta:depth=2"],
        "uci\nisready\nposition startpos moves d1d4\ngo depth 2\nposition startpos moves d1d1\nquit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("uciok\n") && stdout.contains("readyok\n"), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("bestmove ")), "{stdout}");
    assert!(stdout.contains("info string error: bad move `d1d1`"), "{stdout}");
}

#[test]
fn levels_play_and_serve_with_multipv() {
    let out = tafl(&["play", "--level", "4", "--side", "defenders", "--no-save"], "quit\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("against level-4.") && stdout.contains("level-4 plays "), "{stdout}");
    let out = tafl(
        &["engine", "--protocol", "uci", "--level", "2"],
        // No `quit`: it would stop the search at once; the end of the input lets it finish.
        "setoption name MultiPV value 2\nposition startpos\ngo depth 2\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("info multipv ")).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("info multipv 1 depth 2 ") && lines[1].starts_with("info multipv 2 "), "{stdout}");
    for bad in [["play", "--level", "11"], ["play", "--level", "0"]] {
        let out = tafl(&bad, "");
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    }
    let out = tafl(&["play", "--level", "2", "--player", "random"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn engine_speaks_opentafl() {
    let script = format!(
        "rules {COPENHAGEN_OTN}\nside attackers\nstart\nplay attackers\nclock 60000 60000 0 0 0\nnonsense\ngoodbye\n"
    );
    let out = tafl(&["engine", "--protocol", "opentafl", "--player", "alphabeta:depth=1"], &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "hello");
    assert!(lines[1].starts_with("move ") && lines[1].contains('-'), "{stdout}");
    assert!(stdout.contains("error 0 unknown command `nonsense`"), "{stdout}");

    let out = tafl(
        &["engine", "--protocol", "opentafl", "--player", "random"],
        "rules dim:11 ber:c start:/11/11/11/11/11/5K5/11/11/11/11/11/\ngoodbye\n",
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("error -1 rules not supported"), "{}", text(&out));
}

#[test]
fn engine_prints_the_opentafl_ini() {
    let out = tafl(&["engine", "--protocol", "opentafl", "--player", "alphabeta:depth=3", "--opentafl-ini"], "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(stdout.starts_with("[engine]\n"), "{stdout}");
    assert!(
        stdout.contains("arguments=engine --protocol opentafl --variant copenhagen --player alphabeta:depth=3"),
        "{stdout}"
    );
}

#[test]
fn engine_refuses_bad_specs() {
    let out = tafl(&["engine", "--player", "alphabeta:dpeth=3"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = tafl(&["engine", "--protocol", "gtp"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn our_htp_engine_plays_in_the_arena() {
    // `--repeat-moves`: the random player, as defenders, may repeat a board, which the
    // reference rules (our default) refuse.
    let cmd = format!(
        "htp:cmd={} engine --protocol htp --repeat-moves --player alphabeta:depth=1",
        env!("CARGO_BIN_EXE_tafl")
    );
    let out = tafl(
        &["arena", "--a", "random:seed=1", "--b", &cmd, "--games", "4", "--threads", "1", "--max-plies", "80"],
        "",
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("forfeit"), "{}", text(&out));
}

#[test]
fn play_a_few_moves_then_quit() {
    let save = temp("play.csv");
    let script = "moves d1\nzz9\nd1-d1\nd1-d4\nundo\na4-c4\neval\nhelp\nquit\n";
    let out =
        tafl(&["play", "--player", "random:seed=1", "--side", "attackers", "--save", save.to_str().unwrap()], script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("You play the attackers (X) against random:seed=1"), "{stdout}");
    assert!(stdout.contains("6 legal moves: ") && stdout.contains("d1-d5"), "{stdout}");
    assert!(stdout.contains("`zz9` is neither a move nor a command"), "{stdout}");
    assert!(stdout.contains("illegal:") || stdout.contains("must go somewhere"), "{stdout}");
    assert!(stdout.contains("took back 2 plies"), "{stdout}");
    assert!(stdout.contains("random:seed=1 plays "), "{stdout}");
    assert!(!stdout.contains("\x1b["), "no colours when not a terminal");
    assert!(stdout.contains("Game saved to"), "{stdout}");
    let record = std::fs::read_to_string(&save).expect("the saved game");
    assert!(record.starts_with("a4-c4 "), "{record}");
    assert!(record.trim_end().ends_with(",Ongoing"), "{record}");
    // The record is one `tafl replay` accepts.
    let out = tafl(&["replay", save.to_str().unwrap()], "");
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn the_default_player_is_the_shipped_net_for_copenhagen_and_alpha_beta_elsewhere() {
    let out = tafl(&["play", "--side", "defenders", "--no-save"], "quit\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("You play the defenders (O, K) against builtin:time=1s"), "{stdout}");
    assert!(stdout.contains("builtin:time=1s plays "), "{stdout}");
    let out = tafl(&["play", "--variant", "brandubh", "--no-save"], "quit\n");
    assert!(String::from_utf8_lossy(&out.stdout).contains("against alphabeta:time=1s"), "{}", text(&out));
    let out = tafl(&["engine", "--protocol", "opentafl", "--opentafl-ini"], "");
    assert!(String::from_utf8_lossy(&out.stdout).contains("builtin:time=1s"), "{}", text(&out));
}

#[test]
fn play_as_defenders_shows_dangers() {
    // The king alone near a corner: he sees a1 and k1 along rank 1.
    let out = tafl(
        &[
            "play",
            "--player",
            "random:seed=2",
            "--side",
            "defenders",
            "--fen",
            "11/11/11/11/11/11/11/11/11/11/1a1k7 d",
            "--no-save",
        ],
        "d1-d2\nquit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("the king has an open line to the corner k1"), "{stdout}");
    assert!(stdout.contains("sees two corners"), "{stdout}");
}

#[test]
fn analyse_a_position_and_a_game() {
    let fen = "3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 a";
    let out = tafl(&["analyse", "--player", "alphabeta:depth=2", fen], "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("best:") && stdout.contains("line:"), "{stdout}");

    let record = temp("analyse.csv");
    std::fs::write(&record, "d1-d3 e5-e2 a4-b4 g7-g9,0,0,Ongoing\n").unwrap();
    let out = tafl(&["analyse", "--player", "alphabeta:depth=1", "--record", record.to_str().unwrap()], "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("the player disagrees with"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).count(), 4, "{stdout}");
    let out = tafl(&["analyse", "--player", "alphabeta:depth=1", "--record", record.to_str().unwrap(), "--json"], "");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(rows.as_array().map(Vec::len), Some(4));
    let out = tafl(&["analyse", "--record", record.to_str().unwrap(), "--game", "2"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// A tiny Copenhagen run: one self-play iteration on a b1c16 net, no gate, no evaluation.
const TINY_COPENHAGEN: &str = r#"
[run]
variant = "copenhagen"
iterations = 1
seed = 3
[net]
blocks = 1
channels = 16
global-pool-interval = 0
policy-channels = 4
value-channels = 4
value-hidden = 8
[selfplay]
games-per-iteration = 4
games-in-flight = 4
shard-games = 4
full-visits = 8
fast-visits = 2
max-plies = 40
[optimize]
batch-size = 16
min-steps = 2
max-steps = 4
window-min = 50
window-max = 500
[gate]
enabled = false
[evaluate]
every = 0
"#;

#[test]
fn a_bundle_from_a_trained_run_plays_through_every_protocol_and_in_play() {
    let config = temp("tiny-copenhagen.toml");
    std::fs::write(&config, TINY_COPENHAGEN).unwrap();
    let run = temp("tiny-run");
    let bundle = temp("tiny-bundle");
    let _ = std::fs::remove_dir_all(&run);
    let _ = std::fs::remove_dir_all(&bundle);
    let (run_arg, bundle_arg) = (run.to_str().unwrap(), bundle.to_str().unwrap());
    let out = tafl(&["train", "--config", config.to_str().unwrap(), "--run", run_arg, "--quiet"], "");
    assert!(out.status.success(), "{}", text(&out));
    let out = tafl(&["export", "--run", run_arg, "--out", bundle_arg, "--visits", "16", "--time-per-move", "none"], "");
    assert!(out.status.success(), "{}", text(&out));

    let out = tafl(
        &["engine", "--protocol", "htp", "--player", bundle_arg],
        "play attacker d1 d4\ngenerate_move defender\nplay_undo\nquit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.lines().nth(1).is_some_and(|l| l.starts_with("= play defender ")), "{stdout}");

    let out = tafl(
        &["engine", "--protocol", "uci", "--player", bundle_arg],
        "uci\nisready\nposition startpos moves d1d4\ngo nodes 16\nquit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.lines().any(|l| l.starts_with("bestmove ")), "{stdout}");

    let after_d1_d4 = "/4tttt3/5t5/11/t2t1T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
    let script = format!(
        "rules {COPENHAGEN_OTN}\nside defenders\nstart\nopponent-move d1-d4 {after_d1_d4}\nplay defenders\ngoodbye\n"
    );
    let out = tafl(&["engine", "--protocol", "opentafl", "--player", bundle_arg], &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.lines().any(|l| l.starts_with("move ")), "{stdout}");

    let out = tafl(&["play", "--player", bundle_arg, "--side", "attackers", "--no-save"], "d1-d4\neval\nquit\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains(" plays "), "{stdout}");
    let _ = std::fs::remove_dir_all(&run);
    let _ = std::fs::remove_dir_all(&bundle);
}
