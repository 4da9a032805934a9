//! Drives our HTP server and the reference engine (`hnefatafl-text-protocol` of the
//! `hnefatafl-copenhagen` crate) with the same command scripts and compares every reply.
//!
//! Needs the reference installed, so it is ignored by default: `scripts/htp-reference.sh`
//! installs it (cached) and runs this test, which fails when the engine is missing (set
//! `HTP_REFERENCE=/path/to/hnefatafl-text-protocol` to use another copy).
//!
//! Compared: every command but `name`, `version` and `generate_move` (the engines differ by
//! design there). Replies whose order is arbitrary in the reference (captured squares,
//! `play_from`, `play_to`) are compared as sets of words.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use tafl_protocol::htp::{HtpServer, HtpServerOptions, role_name};
use tafl_rules::{Game, Move, Variant};
use tafl_search::{Limits, Player, RandomPlayer};

fn reference() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("HTP_REFERENCE") {
        return Some(PathBuf::from(path));
    }
    let home = std::env::var("HOME").ok()?;
    let path = PathBuf::from(home).join(".cargo/bin/hnefatafl-text-protocol");
    path.exists().then_some(path)
}

fn run_reference(path: &PathBuf, script: &str) -> String {
    let mut child = Command::new(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the reference");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(script.as_bytes()).expect("write the script");
    drop(stdin);
    // The script ends with `quit` (the reference spins on a closed stdin otherwise), so the
    // reference exits by itself; its output is read while it runs.
    let output = child.wait_with_output().expect("wait for the reference");
    String::from_utf8(output.stdout).expect("utf-8")
}

fn run_ours(script: &str) -> String {
    let mut server = HtpServer::new(Box::new(RandomPlayer::new(0)), Variant::copenhagen(), HtpServerOptions::default());
    let mut out = Vec::new();
    server.run(&mut script.as_bytes(), &mut out).expect("in-memory io");
    String::from_utf8(out).expect("utf-8")
}

fn normalize(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| match line.strip_prefix("= ") {
            Some(rest) if !rest.is_empty() => {
                let mut words: Vec<&str> = rest.split_whitespace().collect();
                words.sort_unstable();
                format!("= {}", words.join(" "))
            }
            _ => line.trim_end().to_string(),
        })
        .collect()
}

/// A script: a random game from `seed` with probes of every command along the way.
fn script(seed: u64, plies: usize) -> String {
    let variant = Variant::copenhagen();
    let mut game = Game::new(variant);
    let mut player = RandomPlayer::new(seed);
    let mut s = String::from(
        "protocol_version\nlist_commands\nknown_command play_to\nknown_command xyzzy\nshow_board\nshow_board_open_tafl\n",
    );
    s.push_str("play attacker\nplay attacker z1 a1\nplay x d1 d4\nplay attacker d1 e2\nplay attacker d1 d1\nplay defender f4 f3\nfoo\n# comment only\n\n");
    let mut boards = vec![game.position().to_setup().board];
    for ply in 0..plies {
        if game.outcome().is_over() {
            break;
        }
        let side = game.position().side_to_move();
        let role = role_name(side);
        // The reference forbids defender moves to earlier boards: keep to moves both accept.
        let moves: Vec<Move> = game.legal_moves().iter().copied().collect();
        let allowed: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|m| {
                let mut setup = game.position().to_setup();
                let piece = setup.get(m.from);
                setup.set(m.from, None);
                setup.set(m.to, piece);
                side == tafl_rules::Side::Attackers || !boards.contains(&setup.board)
            })
            .collect();
        if allowed.is_empty() {
            break;
        }
        let mut m = player.choose(&game, &Limits::default()).expect("a move").mv;
        if !allowed.contains(&m) {
            m = allowed[ply % allowed.len()];
        }
        // Steer two games in three towards game ends and captures, so that the rules of both
        // engines are tried: a winning move when there is one, else a capture every other ply.
        let after = |m: Move| {
            let mut g = game.clone();
            let played = g.play_unchecked(m);
            (g.outcome().is_over(), !played.captured.is_empty() || played.king_captured)
        };
        let steer = !seed.is_multiple_of(3);
        let winning = allowed.iter().copied().find(|&c| after(c).0);
        let capturing = allowed.iter().copied().find(|&c| after(c).1);
        if steer && let Some(w) = winning.or(capturing.filter(|_| ply % 2 == 0)) {
            m = w;
        }
        if ply % 7 == 0 {
            s.push_str(&format!("play_from\nplay_to {role} {}\nplay_to {role} {}\n", m.from, m.to));
            // A blocked or crooked move by the same piece.
            s.push_str(&format!(
                "play {role} {} {}\n",
                m.from,
                tafl_rules::Square::new((m.from.file() + 1) % 11, (m.from.rank() + 1) % 11)
            ));
        }
        if ply % 11 == 5 {
            // Play, take back, play again.
            s.push_str(&format!("play {role} {} {}\nplay_undo\n", m.from, m.to));
        }
        s.push_str(&format!("play {role} {} {}\n", m.from, m.to));
        game.play(m).expect("legal");
        boards.push(game.position().to_setup().board);
        if ply % 10 == 9 {
            s.push_str("show_board\nfinal_status\nshow_board_open_tafl\n");
        }
    }
    s.push_str("final_status\nshow_board\nplay_undo\nfinal_status\nboard_size 13\nshow_board\nplay attacker g2 g3\nplay_from\nboard_size 9\nboard_size 7\nshow_board\nplay_from\nfirst_move attacker\nplay_from\n");
    s.push_str("time_settings fischer 10 5\ntime_settings fischer x 5\ntime_settings\ntime_settings un-timed\nquit\n");
    s
}

#[test]
#[ignore = "needs the reference engine hnefatafl-text-protocol"]
fn our_htp_server_answers_like_the_reference() {
    // Asked for by name (`--ignored`): a missing engine is a failure, not a pass.
    let path = reference().expect("no reference engine: run scripts/htp-reference.sh, or set HTP_REFERENCE");
    let mut compared = 0;
    let mut endings = std::collections::BTreeMap::new();
    for seed in 1..=60 {
        let script = script(seed, 200);
        let theirs = normalize(&run_reference(&path, &script));
        let ours = normalize(&run_ours(&script));
        let commands: Vec<&str> = script.lines().collect();
        let _ = std::fs::write(format!("/tmp/htp_script_{seed}.txt"), &script);
        for (i, (a, b)) in theirs.iter().zip(&ours).enumerate() {
            if a != b {
                let from = i.saturating_sub(12);
                panic!(
                    "seed {seed}, output line {i} differs\nreference: {a}\nours:      {b}\n--- reference before:\n{}\n--- ours before:\n{}\n--- script ({} commands) saved to /tmp/htp_script_{seed}.txt",
                    theirs[from..=i].join("\n"),
                    ours[from..=i].join("\n"),
                    commands.len()
                );
            }
        }
        assert_eq!(theirs.len(), ours.len(), "seed {seed}: reply counts differ");
        assert!(!theirs.is_empty(), "seed {seed}: the reference said nothing");
        compared += theirs.len();
        // The first `final_status` after the game: how the reference ended it.
        if let Some(status) = theirs.iter().find(|l| l.ends_with("_wins") || l.ends_with("draw")) {
            *endings.entry(status.clone()).or_insert(0) += 1;
        }
    }
    eprintln!("{compared} reply lines identical over 60 scripted games; endings: {endings:?}");
}
