//! The `tafl` binary end to end: output, exit codes and error messages.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::tafl;

const ARCHIVE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tafl-rules/tests/data/copenhagen-11x11-archive.csv");

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("tafl-cli-test-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).expect("write temp file");
    path
}

#[test]
fn perft_prints_the_known_counts() {
    let out = tafl(&["perft", "--variant", "copenhagen", "--depth", "3"], "");
    assert!(out.status.success());
    let s = text(&out.stdout);
    for n in ["116", "6788", "806344"] {
        assert!(s.contains(n), "{s}");
    }
}

#[test]
fn replay_of_the_archive_is_clean() {
    let out = tafl(&["replay", "--json", ARCHIVE], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 876);
    assert!(lines.iter().all(|g| g["legal"] == true && g["capture_mismatches"].as_array().unwrap().is_empty()));
    let fort = &lines[444];
    assert_eq!(fort["outcome"]["reason"], "exit-fort");
    assert_eq!(fort["outcome"]["winner"], "defenders");
}

#[test]
fn replay_json_has_every_field() {
    let out = tafl(&["replay", "--json", "--format", "moves", "-"], "h1-h3 f8-i8\nf10-i10");
    assert_eq!(out.status.code(), Some(0));
    let g: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(g["game"], 1);
    assert_eq!(g["plies"], 3);
    assert_eq!(g["legal"], true);
    assert!(g["error"].is_null());
    assert_eq!(g["captures"].as_array().unwrap().len(), 3);
    assert!(g["outcome"].is_null());
    assert_eq!(g["ended_early"], false);
    assert!(g["legal_moves_after"].as_u64().unwrap() > 0);
    assert!(g["final_fen"].as_str().unwrap().ends_with(" d"));
}

#[test]
fn an_illegal_ply_is_named_and_exits_1() {
    let out = tafl(&["replay", "--format", "moves", "-"], "h1-h3 f8-f6");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("ply 2 (f8-f6)"), "{}", text(&out.stdout));
}

#[test]
fn a_wrong_capture_list_exits_1() {
    let out = tafl(&["replay", "--json", "--format", "moves", "-"], "h1-h3xh5");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("\"recorded\":[\"h5\"]"));
}

#[test]
fn zero_plies_report_a_decided_start() {
    let fen = "11/11/11/11/11/11/11/3a7/2aka6/3a7/11 d";
    let out = tafl(&["replay", "--json", "--format", "moves", "--start", fen, "-"], "");
    let g: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(g["outcome"]["reason"], "king-captured");
    assert_eq!(g["outcome"]["ply"], 0);
}

#[test]
fn bad_input_exits_2_with_a_located_message() {
    let bad_line = temp_file("bad.csv", "# comment\nh1-h3 f8-z8,0,0,Ongoing\n");
    let out = tafl(&["replay", bad_line.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(":2:10:") && err.contains("file a..k"), "{err}");

    let out = tafl(&["show", "--fen", "3aaaaa3/5a5 a"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("bad --fen"));

    let variant = temp_file("v.toml", "base = 'copenhagen'\n[rules]\nshieldwal = true\n");
    let out = tafl(&["perft", "--variant", variant.to_str().unwrap(), "--depth", "1"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("shieldwal"), "{}", text(&out.stderr));

    let out = tafl(&["replay", "/no/such/file.csv"], "");
    assert_eq!(out.status.code(), Some(2));
    let out = tafl(&["perft", "--variant", "chess"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn show_prints_a_labelled_board() {
    let out = tafl(&["show", "--variant", "brandubh"], "");
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("a b c d e f g"));
    assert!(s.contains(" 7  + . . X . . +  7"), "{s}");
    assert!(s.contains("FEN: 3a3/3a3/3d3/aadkdaa/3d3/3a3/3a3 a"), "{s}");
}

#[test]
fn arena_writes_records_and_logs_each_pair_without_a_terminal() {
    let dir = std::env::temp_dir().join(format!("tafl-cli-arena-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = tafl(
        &[
            "arena",
            "--a",
            "random:seed=1",
            "--b",
            "random:seed=2",
            "--games",
            "4",
            "--threads",
            "1",
            "--max-plies",
            "60",
            "--out",
            dir.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Not a terminal: one line per finished pair instead of a bar.
    let stderr = text(&out.stderr);
    assert!(stderr.contains("2/4 games: ") && stderr.contains("4/4 games: "), "{stderr}");
    let csv = std::fs::read_to_string(dir.join("games.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| !l.starts_with('#')).count(), 4);
    // The running file is gone once games.csv is written.
    assert!(!dir.join("games.partial.csv").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ladder_measures_a_player_against_each_rung_and_writes_the_games() {
    let dir = std::env::temp_dir().join(format!("tafl-cli-ladder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ladder = temp_file(
        "ladder.toml",
        "[[player]]\nspec = \"random:seed=1\"\nname = \"random\"\n[[player]]\nspec = \"alphabeta:depth=1\"\n",
    );
    let args = [
        "ladder",
        "--player",
        "alphabeta:depth=2",
        "--variant",
        "brandubh",
        "--ladder",
        ladder.to_str().unwrap(),
        "--games",
        "4",
        "--threads",
        "1",
        "--max-plies",
        "80",
        "--seed",
        "9",
    ];
    let out = tafl(&[&args[..], &["--out", dir.to_str().unwrap()]].concat(), "");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("alphabeta:depth=2 on brandubh: 4 games per opponent"), "{stdout}");
    for header in ["opponent", "games", "score", "Elo [95%]", "as attackers", "as defenders"] {
        assert!(stdout.contains(header), "{stdout}");
    }
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row for {name}: {stdout}"))
            .to_string()
    };
    for name in ["random ", "alphabeta:depth=1 "] {
        let row = row(name);
        assert_eq!(row.split_whitespace().nth(1), Some("4"), "{row}");
        assert!(row.contains('%') && row.contains('['), "{row}");
    }
    // The games of each rung, the table with its command, and the numbers.
    for rung in ["01-random", "02-alphabeta_depth_1"] {
        let csv = std::fs::read_to_string(dir.join(rung).join("games.csv")).unwrap();
        assert_eq!(csv.lines().filter(|l| !l.starts_with('#')).count(), 4);
    }
    let table = std::fs::read_to_string(dir.join("ladder.txt")).unwrap();
    assert!(table.starts_with("$ tafl ladder --player alphabeta:depth=2 "), "{table}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ladder.json")).unwrap()).unwrap();
    assert_eq!(json["rungs"].as_array().unwrap().len(), 2);
    assert_eq!(json["rungs"][1]["opponent"], "alphabeta:depth=1");
    // Two games per side against each rung.
    for rung in json["rungs"].as_array().unwrap() {
        for side in ["attacking", "defending"] {
            let games: u64 = ["wins", "draws", "losses"].iter().map(|k| rung[side][k].as_u64().unwrap()).sum();
            assert_eq!(games, 2, "{rung}");
        }
    }

    // The rungs' games put all three players on one scale, the anchor at 0.
    let plot = dir.join("scale.svg");
    let rated = tafl(&["ratings", dir.to_str().unwrap(), "--anchor", "random", "--plot", plot.to_str().unwrap()], "");
    let table = text(&rated.stdout);
    assert!(rated.status.success(), "{}", text(&rated.stderr));
    assert!(table.contains("random is 0") && table.contains("8 games from 2 summaries (brandubh)"), "{table}");
    for name in ["random ", "alphabeta:depth=1 ", "alphabeta:depth=2 "] {
        assert!(table.lines().any(|l| l.split_whitespace().nth(1) == name.split_whitespace().next()), "{table}");
    }
    assert!(std::fs::read_to_string(&plot).unwrap().contains("<svg"));
    // A broken summary is named; an anchor that never played is refused.
    std::fs::write(dir.join("01-random/summary.json"), "{\"variant\": 1}").unwrap();
    let broken = tafl(&["ratings", dir.to_str().unwrap()], "");
    assert_eq!(broken.status.code(), Some(2));
    assert!(text(&broken.stderr).contains("01-random/summary.json: not a match summary"), "{}", text(&broken.stderr));
    let lone = tafl(&["ratings", dir.join("02-alphabeta_depth_1").to_str().unwrap(), "--anchor", "random"], "");
    assert_eq!(lone.status.code(), Some(2));
    assert!(text(&lone.stderr).contains("the anchor `random` played no game"), "{}", text(&lone.stderr));

    // A previous player named like a rung is refused before any game.
    let clash = tafl(&[&args[..], &["--previous", "random:seed=1,name=random"]].concat(), "");
    assert_eq!(clash.status.code(), Some(2));
    assert!(text(&clash.stderr).contains("--previous"), "{}", text(&clash.stderr));
    let help = tafl(&["ladder", "--help"], "");
    assert!(text(&help.stdout).contains("Examples:\n  tafl ladder --player"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_nn_compares_training_paths_in_one_run() {
    let args = ["bench", "nn", "--blocks", "1", "--channels", "4", "--batches", "1", "--seconds", "0"];
    let out = tafl(&[&args[..], &["--train", "--train-batch", "2", "--train-conv", "stock,fast"]].concat(), "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let rows: Vec<&str> = s.lines().filter(|l| l.starts_with("train step at batch 2, conv")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    assert!(rows[0].contains("conv stock:") && rows[0].ends_with(", 1.00x"), "{s}");
    assert!(rows[1].contains("conv  fast:") && rows[1].contains(" samples/s "), "{s}");
}
