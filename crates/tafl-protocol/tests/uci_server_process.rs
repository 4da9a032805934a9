//! The UCI client against our own UCI server in a real process: this test binary is the engine
//! too. Run with `--serve-uci`, it serves [`UciServer`] with a 2-ply alpha-beta on its standard
//! input and output; run by `cargo test`, it starts copies of itself that way and plays them.
//!
//! A plain `main` (the test has `harness = false` in Cargo.toml): libtest would write its own
//! lines to the engine's standard output.

use std::time::Duration;

use tafl_protocol::engine::EngineOptions;
use tafl_protocol::uci::UciServer;
use tafl_protocol::uci_client::{UciConfig, UciPlayer};
use tafl_rules::{Game, Variant, parse_move};
use tafl_search::{AlphaBeta, Limits, Player, RandomPlayer};

const SERVE: &str = "--serve-uci";
const NAME: &str = "uci_server_process";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(SERVE) {
        serve();
        return;
    }
    if args.iter().any(|a| a == "--list") {
        println!("{NAME}: test");
        return;
    }
    // `cargo test NAME_PART` passes its filter to every test binary: honour it.
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| NAME.contains(f.as_str())) {
        println!("{NAME}: filtered out");
        return;
    }
    let checks: [(&str, fn()); 4] = [
        ("plays_a_game_against_a_random_player", plays_a_game_against_a_random_player),
        ("two_engines_play_each_other", two_engines_play_each_other),
        ("a_game_from_a_fen_is_followed", a_game_from_a_fen_is_followed),
        ("the_server_is_set_to_the_games_variant", the_server_is_set_to_the_games_variant),
    ];
    for (name, check) in checks {
        check();
        println!("test {name} ... ok");
    }
    println!("test result: ok. {} passed", checks.len());
}

fn serve() {
    let mut server =
        UciServer::new(Box::new(AlphaBeta::with_depth(2)), Variant::copenhagen(), EngineOptions::default());
    let mut output = std::io::stdout();
    server.run(&mut std::io::stdin().lock(), &mut output).expect("stdin and stdout");
}

fn engine() -> UciPlayer {
    let exe = std::env::current_exe().expect("the test binary");
    let config = UciConfig {
        args: vec![SERVE.to_string()],
        movetime: Some(Duration::from_millis(500)),
        move_timeout: Some(Duration::from_secs(20)),
        ..UciConfig::from_command_line(&exe.to_string_lossy()).expect("a command line")
    };
    UciPlayer::spawn(config).expect("our server starts")
}

/// Plays `game` on with the two players up to `plies` more plies; every move goes through
/// the client's referee and ours.
fn play(game: &mut Game, attackers: &mut (dyn Player + 'static), defenders: &mut (dyn Player + 'static), plies: usize) {
    for _ in 0..plies {
        if game.outcome().is_over() {
            return;
        }
        let player = if game.position().side_to_move() == tafl_rules::Side::Attackers {
            &mut *attackers
        } else {
            &mut *defenders
        };
        let choice = player.choose(game, &Limits::default()).unwrap_or_else(|e| panic!("{}: {e}", player.name()));
        game.play(choice.mv).expect("a legal move");
    }
}

fn plays_a_game_against_a_random_player() {
    let mut uci = engine();
    assert!(uci.engine_name().is_some_and(|n| n.starts_with("tafl ")), "{:?}", uci.engine_name());
    let mut random = RandomPlayer::new(7);
    for engine_attacks in [true, false] {
        uci.new_game();
        let mut game = Game::new(Variant::copenhagen());
        if engine_attacks {
            play(&mut game, &mut uci, &mut random, 400);
        } else {
            play(&mut game, &mut random, &mut uci, 400);
        }
        assert!(game.ply() > 4, "{}", game.ply());
    }
    // The server's `info` comes through: a value and a line.
    let game = Game::new(Variant::copenhagen());
    let c = uci.choose(&game, &Limits::default()).expect("a move");
    assert!(c.value.is_some() && c.depth == 2 && c.pv.first() == Some(&c.mv), "{c:?}");
}

fn two_engines_play_each_other() {
    let (mut a, mut b) = (engine(), engine());
    let mut game = Game::new(Variant::copenhagen());
    play(&mut game, &mut a, &mut b, 30);
    assert!(game.ply() >= 10 || game.outcome().is_over(), "{}", game.ply());
}

fn a_game_from_a_fen_is_followed() {
    let mut start = Game::new(Variant::copenhagen());
    for text in ["d1d4", "f4f3", "h1h3"] {
        start.play(parse_move(text, 11).expect("a move").mv).expect("legal");
    }
    // The defenders to move in a game that starts here: sent as `position fen`.
    let mut game = Game::from_position(*start.position());
    let mut uci = engine();
    let mut random = RandomPlayer::new(3);
    play(&mut game, &mut uci, &mut random, 20);
    assert!(game.ply() > 2);
}

fn the_server_is_set_to_the_games_variant() {
    let mut uci = engine();
    let mut random = RandomPlayer::new(5);
    for name in ["brandubh", "tablut"] {
        let variant = Variant::preset(name).expect("a preset");
        uci.new_game();
        let mut game = Game::new(variant);
        play(&mut game, &mut random, &mut uci, 40);
        assert!(game.ply() > 2, "{name}");
    }
}
