//! Whole runs: matches, SPRT stops, tournaments, custom factories, failing engines, records.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use tafl_arena::{
    ArenaConfig, ArenaError, BuiltinFactory, PlayerKind, PlayerSpec, SpecError, SprtDecision, Summary, Termination,
    netless_player, plot_ladder, random_openings, run_match, run_tournament, write_results,
};
use tafl_rules::notation::parse_archive_line;
use tafl_rules::replay::replay;
use tafl_rules::{Game, Position, Side, Variant};
use tafl_search::{Limits, MoveChoice, Player, PlayerError};

fn config(pairs: usize) -> ArenaConfig {
    let variant = Variant::copenhagen();
    ArenaConfig {
        variant,
        openings: random_openings(variant, pairs, 4, 7),
        pairs,
        max_plies: 300,
        threads: 2,
        seed: 3,
        sprt: None,
    }
}

fn spec(s: &str) -> PlayerSpec {
    s.parse().expect("a valid spec")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-arena-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_match_plays_pairs_with_sides_swapped_and_writes_records() {
    let calls = AtomicUsize::new(0);
    let reported = std::sync::Mutex::new(Vec::new());
    let progress = |p: &tafl_arena::Progress| {
        calls.fetch_add(1, Ordering::Relaxed);
        assert!(p.done <= p.total);
        // Each call hands over the pair that just finished.
        assert_eq!(p.games.len(), 2);
        reported.lock().unwrap().extend(p.games.iter().map(|g| g.index));
    };
    let results =
        run_match(&spec("random:seed=1"), &spec("random:seed=2"), &config(6), &BuiltinFactory, &progress).unwrap();
    assert_eq!(results.games.len(), 12);
    assert_eq!(calls.load(Ordering::Relaxed), 6);
    let mut reported = reported.into_inner().unwrap();
    reported.sort_unstable();
    assert_eq!(reported, (0..12).collect::<Vec<_>>());
    for pair in results.games.chunks(2) {
        assert_eq!(pair[0].pair, pair[1].pair);
        assert_eq!((pair[0].attackers, pair[0].defenders), (pair[1].defenders, pair[1].attackers));
        // The same opening: the same first plies.
        assert_eq!(pair[0].played.moves()[..4], pair[1].played.moves()[..4]);
    }
    let p = &results.pairings[0];
    assert_eq!(p.a_attacking.games() + p.a_defending.games(), 12);
    assert_eq!(p.pairs.pairs(), 6);

    let summary = Summary::new(&results);
    let dir = temp_dir("match");
    write_results(&dir, &results, &summary).unwrap();
    plot_ladder(&dir.join("ladder.svg"), &summary.ladder, "test").unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["games_played"], 12);
    assert_eq!(json["match"]["a"], "random:seed=1");
    let csv = std::fs::read_to_string(dir.join("games.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 12);
    for line in lines {
        let g = parse_archive_line(line, 11).unwrap();
        assert!(replay(1, Position::start(Variant::copenhagen()), &g.plies, true).ok(), "{line}");
    }
    assert_eq!(std::fs::read_dir(dir.join("otg")).unwrap().count(), 12);
    let svg = std::fs::read_to_string(dir.join("ladder.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("random:seed=1"));
    let text = summary.to_text();
    assert!(text.contains("A with the attackers") && text.contains("A with the defenders"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_sprt_stops_a_lopsided_match() {
    let mut c = config(200);
    c.sprt = Some("elo0=0,elo1=50,alpha=0.05,beta=0.05".parse().unwrap());
    let results = run_match(&spec("alphabeta:depth=1"), &spec("random:seed=5"), &c, &BuiltinFactory, &|_| {}).unwrap();
    let (_, status) = results.sprt.unwrap();
    assert_eq!(status.decision, SprtDecision::AcceptH1);
    assert!(results.stopped_early, "{} games", results.games.len());
    assert!(results.games.len() < 100, "{} games", results.games.len());
}

/// Always plays the first legal move: stands in for an `mcts` player, which only a higher crate builds.
struct FirstMove;
impl Player for FirstMove {
    fn name(&self) -> String {
        "first".into()
    }
    fn choose(&mut self, game: &Game, _: &Limits) -> Result<MoveChoice, PlayerError> {
        game.legal_moves().first().copied().map(MoveChoice::just).ok_or(PlayerError::NoMoves)
    }
}

#[test]
fn a_tournament_with_a_custom_factory_ranks_the_players() {
    let factory = |s: &PlayerSpec, seed: u64| -> Result<Box<dyn Player>, SpecError> {
        match s.kind() {
            PlayerKind::Mcts { .. } => Ok(Box::new(FirstMove)),
            _ => netless_player(s, seed),
        }
    };
    let players = [
        spec("random:seed=1"),
        spec("alphabeta:depth=2"),
        spec("mcts:model=none,name=first"),
        spec("alphabeta:depth=1"),
    ];
    let results = run_tournament(&players, &config(3), &factory, &|_| {}).unwrap();
    assert_eq!(results.games.len(), 3 * 4 * 3);
    assert_eq!(results.pairings.len(), 6);
    let summary = Summary::new(&results);
    let ladder: Vec<&str> = summary.ladder.iter().map(|e| e.name.as_str()).collect();
    // Alpha-beta beats the players that do not search.
    let rank = |name: &str| ladder.iter().position(|n| *n == name).unwrap();
    assert!(
        rank("alphabeta:depth=2") < rank("random:seed=1") && rank("alphabeta:depth=1") < rank("first"),
        "{ladder:?}"
    );
    assert!(summary.to_text().contains("rank"));
    // An unknown key is refused where the text is read, before any factory sees it.
    let e = "mcts:model=none,x=1".parse::<PlayerSpec>().unwrap_err();
    assert!(e.to_string().contains("`x`"), "{e}");
}

#[test]
fn a_failing_engine_loses_and_the_match_goes_on() {
    // Answers the start-up `name`, then dies at the first real command.
    let dir = temp_dir("dying");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("engine.sh");
    std::fs::write(&script, "read l; echo '= dying'; read l; exit 1\n").unwrap();
    let dying = format!("htp:cmd=sh {}", script.display());
    let results = run_match(&spec("random:seed=1"), &spec(&dying), &config(2), &BuiltinFactory, &|_| {}).unwrap();
    assert_eq!(results.games.len(), 4);
    for g in &results.games {
        let engine_side = if g.attackers == 1 { Side::Attackers } else { Side::Defenders };
        match &g.played.termination {
            Termination::Forfeit { loser, error } => {
                assert_eq!(*loser, engine_side);
                assert!(error.contains("died"), "{error}");
            }
            // The engine gets a turn in every game (no game ends within the opening).
            t => panic!("unexpected {t:?}"),
        }
    }
    assert_eq!(results.pairings[0].total().wins, 4);
    // The record says who forfeited and why; the archive line ends with `timeout`.
    let record = tafl_arena::game_record(&results.games[0], &results.players);
    assert!(record.contains(", forfeit by the ") && record.contains("died"), "{record}");
    assert!(record.lines().last().unwrap().contains(" timeout,"), "{record}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_uci_engine_that_dies_forfeits_its_games() {
    // Answers the handshake by TaflZero's table, then dies at its first `go`.
    let dir = temp_dir("uci-dying");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("engine.sh");
    let text = "while read -r cmd rest; do case \"$cmd\" in uci) echo 'id name dying'; echo uciok;; isready) echo readyok;; go) echo 'no net' >&2; exit 1;; esac; done\n";
    std::fs::write(&script, text).unwrap();
    let dying = format!("uci:movetime=50,cmd=sh {}", script.display());
    let results = run_match(&spec("random:seed=1"), &spec(&dying), &config(1), &BuiltinFactory, &|_| {}).unwrap();
    assert_eq!(results.games.len(), 2);
    for g in &results.games {
        let engine_side = if g.attackers == 1 { Side::Attackers } else { Side::Defenders };
        match &g.played.termination {
            Termination::Forfeit { loser, error } => {
                assert_eq!(*loser, engine_side);
                assert!(error.contains("died") && error.contains("no net"), "{error}");
            }
            t => panic!("unexpected {t:?}"),
        }
    }
    let e =
        run_match(&spec("uci:cmd=/no/such/engine"), &spec("random"), &config(1), &BuiltinFactory, &|_| {}).unwrap_err();
    assert!(e.to_string().contains("/no/such/engine"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_specs_fail_before_any_game() {
    // A misspelt key fails where the spec is read; an engine that does not start, before the
    // first game.
    let e = "alphabeta:depht=2".parse::<PlayerSpec>().unwrap_err();
    assert!(e.to_string().contains("depht"), "{e}");
    let e =
        run_match(&spec("htp:cmd=/no/such/engine"), &spec("random"), &config(1), &BuiltinFactory, &|_| {}).unwrap_err();
    assert!(e.to_string().contains("/no/such/engine"), "{e}");
}

#[test]
fn a_run_that_cannot_work_says_why_and_whose_fault_it_is() {
    let random = spec("random");
    let e = run_tournament(std::slice::from_ref(&random), &config(1), &BuiltinFactory, &|_| {}).unwrap_err();
    assert!(matches!(e, ArenaError::TooFewPlayers(1)) && e.is_bad_input(), "{e}");
    let e = run_match(&random, &random, &ArenaConfig { openings: Vec::new(), ..config(1) }, &BuiltinFactory, &|_| {})
        .unwrap_err();
    assert!(matches!(e, ArenaError::NoOpenings) && e.is_bad_input(), "{e}");
    // A plot where no folder is: the machine's fault, naming the file, and nothing left behind.
    let dir = temp_dir("plot");
    let path = dir.join("missing").join("ladder.svg");
    let e = plot_ladder(&path, &[], "empty").unwrap_err();
    assert!(matches!(e, ArenaError::Write { .. }) && !e.is_bad_input(), "{e}");
    assert!(e.to_string().contains("missing"), "{e}");
    assert!(!dir.exists());
}

/// Alpha-beta against the reference HTP engine; needs `hnefatafl-text-protocol` on the PATH
/// (`cargo install hnefatafl-copenhagen --no-default-features --bin hnefatafl-text-protocol`).
/// Slow: the engine searches 4 plies per move. Run with `cargo test -p tafl-arena --release
/// -- --ignored interop`.
#[test]
#[ignore = "needs hnefatafl-text-protocol installed; slow"]
fn interop_with_the_reference_htp_engine() {
    let engine = spec("htp:timeout=300s,cmd=hnefatafl-text-protocol --repeat-moves");
    let mut c = config(1);
    c.max_plies = 120;
    let results = run_match(&spec("alphabeta:depth=1"), &engine, &c, &BuiltinFactory, &|_| {}).unwrap();
    assert_eq!(results.games.len(), 2);
    let summary = Summary::new(&results);
    println!("{}", summary.to_text());
    // The engine kept in step and answered sensibly in every game: no refused sync move, no
    // garbage, no illegal move, no crash, and no silence (a desynchronised engine that hangs
    // shows as "no answer": 300 s is ten times its slowest move seen here). It resigns lost
    // positions; those forfeits are its own.
    let protocol_failures: Vec<_> = summary.forfeits.iter().filter(|f| !f.error.contains("resigned")).collect();
    assert!(protocol_failures.is_empty(), "{protocol_failures:?}");
}
