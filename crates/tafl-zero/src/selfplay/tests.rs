//! Tests of [`super`]: kept beside it in a file of their own so that `selfplay.rs` stays a map of
//! the code.

use super::*;
use crate::config::Opponents;
use tafl_search::UniformEvaluator;

fn small_config() -> SelfPlayConfig {
    SelfPlayConfig {
        games_in_flight: 4,
        full_visits: 8,
        fast_visits: 2,
        full_fraction: 0.5,
        max_plies: 60,
        resign_threshold: -2.0,
        ..SelfPlayConfig::default()
    }
}

#[test]
fn plays_games_with_valid_samples_and_records() {
    let variant = Variant::preset("brandubh").unwrap();
    let config = small_config();
    let mut games = Vec::new();
    let stats = SelfPlay::new(variant, &config, 3).play(&UniformEvaluator, 6, &mut |g| games.push(g), &mut |_| true);
    assert_eq!(stats.games, 6);
    assert_eq!(games.len(), 6);
    assert!(stats.evaluations > 0 && stats.moves > 0);
    for g in &games {
        assert!(g.plies <= 60);
        let parsed = tafl_rules::notation::parse_archive_line(&g.record, 7).unwrap();
        assert_eq!(parsed.plies.len(), g.plies);
        for s in &g.samples {
            let total: f32 = s.policy.iter().map(|p| p.1).sum();
            assert!((total - 1.0).abs() < 1e-3);
            let position = s.position(variant).unwrap();
            let legal: Vec<usize> = position.legal_moves().iter().map(|&m| tafl_nn::move_index(m, 7)).collect();
            assert!(s.policy.iter().all(|&(i, _)| legal.contains(&usize::from(i))));
            let expected = match g.winner {
                None => 0.0,
                Some(w) if w == s.side() => 1.0,
                Some(_) => -1.0,
            };
            assert_eq!(s.value, expected);
        }
    }
    assert_eq!(stats.samples, games.iter().map(|g| g.samples.len() as u64).sum::<u64>());
}

#[test]
fn surprise_is_the_divergence_of_the_target_from_the_prior() {
    let moves: Vec<Move> = Game::new(Variant::preset("brandubh").unwrap()).legal_moves().into_iter().take(3).collect();
    let priors = vec![(moves[0], 0.5), (moves[1], 0.25), (moves[2], 0.25)];
    assert!(surprise(&priors, 1.0, &priors).abs() < 1e-6, "a target equal to the prior: no surprise");
    // Unnormalised targets are normalised by `total` first.
    let doubled: Vec<(Move, f32)> = priors.iter().map(|&(m, p)| (m, 2.0 * p)).collect();
    assert!(surprise(&doubled, 2.0, &priors).abs() < 1e-6);
    let sure = surprise(&[(moves[1], 1.0)], 1.0, &priors);
    assert!((sure - 4f32.ln()).abs() < 1e-5, "all mass on a 1/4 move: ln 4, got {sure}");
    assert!(sure > surprise(&[(moves[0], 1.0)], 1.0, &priors), "the less expected move surprises more");
}

#[test]
fn surprise_weights_keep_the_game_total_and_follow_the_surprise() {
    assert_eq!(surprise_weights(&[0.1, 2.0, 0.5], 0.0), vec![1.0; 3]);
    assert_eq!(surprise_weights(&[0.0, 0.0], 0.5), vec![1.0; 2], "no surprise: even weights");
    let w = surprise_weights(&[0.0, 1.0, 3.0], 0.5);
    assert!((w.iter().sum::<f32>() - 3.0).abs() < 1e-5, "{w:?}");
    assert!((w[0] - 0.5).abs() < 1e-6 && (w[1] - 0.875).abs() < 1e-6 && (w[2] - 1.625).abs() < 1e-6, "{w:?}");
    let all = surprise_weights(&[1.0, 3.0], 1.0);
    assert!((all[0] - 0.5).abs() < 1e-6 && (all[1] - 1.5).abs() < 1e-6, "{all:?}");
}

#[test]
fn policy_surprise_weighting_spreads_each_games_weight() {
    let variant = Variant::preset("brandubh").unwrap();
    let play = |share: f64| {
        let config = SelfPlayConfig { policy_surprise_weight: share, ..small_config() };
        let mut games = Vec::new();
        SelfPlay::new(variant, &config, 3).play(&UniformEvaluator, 4, &mut |g| games.push(g), &mut |_| true);
        games
    };
    let (plain, weighted) = (play(0.0), play(0.5));
    assert!(plain.iter().flat_map(|g| &g.samples).all(|s| s.weight == 1.0));
    // The same seed plays the same games: only the weights differ.
    assert_eq!(
        plain.iter().map(|g| &g.record).collect::<Vec<_>>(),
        weighted.iter().map(|g| &g.record).collect::<Vec<_>>()
    );
    let mut spread = false;
    for g in &weighted {
        let total: f32 = g.samples.iter().map(|s| s.weight).sum();
        assert!((total - g.samples.len() as f32).abs() < 1e-3, "a game's weights sum to its samples");
        assert!(g.samples.iter().all(|s| s.weight >= 0.5 - 1e-6), "half the weight is spread evenly");
        spread |= g.samples.iter().any(|s| (s.weight - 1.0).abs() > 1e-3);
    }
    assert!(spread, "a uniform net's policy differs from the search's targets");
}

/// Plays the first legal move: an opponent whose every move a test can check.
struct FirstMove;

impl Player for FirstMove {
    fn name(&self) -> String {
        "first".into()
    }
    fn choose(&mut self, game: &Game, _: &Limits) -> Result<tafl_search::MoveChoice, tafl_search::PlayerError> {
        let mv = *game.legal_moves().first().ok_or(tafl_search::PlayerError::NoMoves)?;
        Ok(tafl_search::MoveChoice::just(mv))
    }
}

/// A spec the test factories tell apart by its name.
fn named(name: &str) -> PlayerSpec {
    format!("random:name={name}").parse().unwrap()
}

fn first_move(_: &PlayerSpec, _: u64) -> Result<Box<dyn Player>, SpecError> {
    Ok(Box::new(FirstMove))
}

/// Plays `games` games against the `FirstMove` opponent.
fn against_first_move(config: &SelfPlayConfig, games: u64) -> (Vec<FinishedGame>, SelfPlayStats) {
    let variant = Variant::preset("brandubh").unwrap();
    let mut played = Vec::new();
    let factory = first_move;
    let stats = SelfPlay::new(variant, config, 5).with_opponent(named("first"), &factory).unwrap().play(
        &UniformEvaluator,
        games,
        &mut |g| played.push(g),
        &mut |_| true,
    );
    (played, stats)
}

#[test]
fn an_opponent_plays_its_side_and_only_the_network_side_gives_samples() {
    for (side, config_side) in [(Side::Defenders, OpponentSide::Defenders), (Side::Attackers, OpponentSide::Attackers)]
    {
        let config = SelfPlayConfig {
            opponent: Opponents(vec![named("first")]),
            opponent_fraction: 1.0,
            opponent_side: config_side,
            ..small_config()
        };
        let (games, stats) = against_first_move(&config, 4);
        assert_eq!((stats.games, stats.against_opponents().games), (4, 4));
        for g in &games {
            assert_eq!(g.opponent, Some(Against { side, index: 0 }));
            assert!(
                g.samples.iter().all(|s| s.side() == side.opponent()),
                "samples of the network's side only: {side:?} {} {}",
                g.record,
                g.reason
            );
            // Every move of the opponent's side is the first legal move of its position.
            let parsed = tafl_rules::notation::parse_archive_line(&g.record, 7).unwrap();
            let mut replay = Game::new(Variant::preset("brandubh").unwrap());
            for ply in &parsed.plies {
                if replay.position().side_to_move() == side {
                    assert_eq!(Some(&ply.mv.mv), replay.legal_moves().first());
                }
                replay.play(ply.mv.mv).unwrap();
            }
        }
        assert!(games.iter().any(|g| !g.samples.is_empty()));
        let net_wins = games.iter().filter(|g| g.winner == Some(side.opponent())).count() as u64;
        assert_eq!(stats.against_opponents().net_wins, net_wins);
    }
}

#[test]
fn the_opponent_plays_its_fraction_of_games_on_both_sides() {
    let config = SelfPlayConfig {
        opponent: Opponents(vec![named("first")]),
        opponent_fraction: 0.5,
        opponent_side: OpponentSide::Either,
        max_plies: 20,
        ..small_config()
    };
    let (games, stats) = against_first_move(&config, 40);
    let against = |side| games.iter().filter(|g| g.opponent.is_some_and(|a| a.side == side)).count();
    let opponent_games = stats.against_opponents().games;
    assert_eq!(opponent_games as usize, against(Side::Attackers) + against(Side::Defenders));
    // 40 games at one half: 20 expected, outside 8..=32 with a chance below 1e-4.
    assert!((8..=32).contains(&opponent_games), "{opponent_games}");
    assert!(against(Side::Attackers) > 0 && against(Side::Defenders) > 0);
    let none = SelfPlayConfig { opponent_fraction: 0.0, ..config };
    assert_eq!(against_first_move(&none, 6).1.against_opponents().games, 0);
}

/// Plays the last legal move: a second opponent that a test can tell from `FirstMove`.
struct LastMove;

impl Player for LastMove {
    fn name(&self) -> String {
        "last".into()
    }
    fn choose(&mut self, game: &Game, _: &Limits) -> Result<tafl_search::MoveChoice, tafl_search::PlayerError> {
        let mv = *game.legal_moves().last().ok_or(tafl_search::PlayerError::NoMoves)?;
        Ok(tafl_search::MoveChoice::just(mv))
    }
}

#[test]
fn several_opponents_are_drawn_per_game_and_each_plays_its_own_moves() {
    let variant = Variant::preset("brandubh").unwrap();
    let config = SelfPlayConfig {
        opponent: Opponents(vec![named("first"), named("last")]),
        opponent_fraction: 1.0,
        opponent_side: OpponentSide::Defenders,
        max_plies: 20,
        ..small_config()
    };
    let factory = |spec: &PlayerSpec, _: u64| -> Result<Box<dyn Player>, SpecError> {
        Ok(if spec.name() == "first" { Box::new(FirstMove) } else { Box::new(LastMove) })
    };
    let mut games = Vec::new();
    let stats = SelfPlay::new(variant, &config, 9)
        .with_opponent(named("first"), &factory)
        .unwrap()
        .with_opponent(named("last"), &factory)
        .unwrap()
        .play(&UniformEvaluator, 24, &mut |g| games.push(g), &mut |_| true);
    // 24 games, each opponent drawn with one half: none for one of them has a chance of 1e-7.
    assert_eq!(stats.opponents.len(), 2);
    assert!(stats.opponents.iter().all(|t| t.games > 0), "{:?}", stats.opponents);
    assert_eq!(stats.against_opponents().games, 24);
    for g in &games {
        let against = g.opponent.expect("every game has an opponent");
        assert_eq!(against.side, Side::Defenders);
        let parsed = tafl_rules::notation::parse_archive_line(&g.record, 7).unwrap();
        let mut replay = Game::new(variant);
        for ply in &parsed.plies {
            if replay.position().side_to_move() == Side::Defenders {
                let legal = replay.legal_moves();
                let expected = if against.index == 0 { legal.first() } else { legal.last() };
                assert_eq!(Some(&ply.mv.mv), expected, "opponent {} in {}", against.index, g.record);
            }
            replay.play(ply.mv.mv).unwrap();
        }
        assert_eq!(
            stats.opponents[against.index].games,
            games.iter().filter(|h| h.opponent.is_some_and(|a| a.index == against.index)).count() as u64
        );
    }
}

#[test]
fn the_attackers_search_with_their_scale_of_visits() {
    // The scripted opponent takes one side, so only the other side's searches evaluate.
    let evaluations = |scale: f64, opponent_side| {
        let config = SelfPlayConfig {
            full_fraction: 1.0,
            max_plies: 20,
            attacker_visits_scale: scale,
            opponent: Opponents(vec![named("first")]),
            opponent_fraction: 1.0,
            opponent_side,
            ..small_config()
        };
        against_first_move(&config, 4).1.evaluations
    };
    // The attackers' searches grow with the scale: 8 visits, then 32.
    let (plain, scaled) = (evaluations(1.0, OpponentSide::Defenders), evaluations(4.0, OpponentSide::Defenders));
    assert!(scaled > 3 * plain, "{plain} evaluations at scale 1, {scaled} at scale 4");
    assert!(evaluations(0.25, OpponentSide::Defenders) < plain);
    // The defenders' do not: the same games, evaluation for evaluation.
    assert_eq!(evaluations(4.0, OpponentSide::Attackers), evaluations(1.0, OpponentSide::Attackers));
}

#[test]
fn a_spread_draws_each_games_ratio_of_visits_for_both_sides() {
    // As above: only the side without the scripted opponent searches.
    let evaluations = |spread: f64, opponent_side, games| {
        let config = SelfPlayConfig {
            full_fraction: 1.0,
            max_plies: 20,
            attacker_visits_scale: 4.0,
            attacker_visits_spread: spread,
            opponent: Opponents(vec![named("first")]),
            opponent_fraction: 1.0,
            opponent_side,
            ..small_config()
        };
        against_first_move(&config, games).1.evaluations
    };
    // Both sides' searches change with the spread, and the same seed draws the same ratios.
    for side in [OpponentSide::Defenders, OpponentSide::Attackers] {
        let (fixed, spread) = (evaluations(1.0, side, 6), evaluations(64.0, side, 6));
        assert_ne!(fixed, spread, "{side:?}");
        assert_eq!(spread, evaluations(64.0, side, 6), "{side:?}");
    }
    // The sum of the two sides' visits stays 32 + 8 a move pair, so neither side searches more
    // than 40 visits a move: at most 12 games of 10 searches each.
    let attackers = evaluations(64.0, OpponentSide::Defenders, 12);
    assert!(attackers <= 12 * 10 * 40, "{attackers}");
}

#[test]
fn stops_when_asked() {
    let variant = Variant::preset("brandubh").unwrap();
    let config = small_config();
    let stats = SelfPlay::new(variant, &config, 3).play(&UniformEvaluator, 100, &mut |_| {}, &mut |_| false);
    assert_eq!(stats.games, 0);
}

#[test]
fn games_in_flight_go_on_from_call_to_call_and_keep_the_batch_full() {
    let variant = Variant::preset("brandubh").unwrap();
    let config = SelfPlayConfig { games_in_flight: 6, ..small_config() };
    let mut in_flight = InFlight::default();
    let mut games = Vec::new();
    for call in 0..4 {
        // A new SelfPlay per call, as each iteration of a run makes one for its model.
        let stats = SelfPlay::new(variant, &config, 20 + call).play_on(
            &UniformEvaluator,
            3,
            &mut in_flight,
            &mut |g| games.push(g),
            &mut |_| true,
        );
        assert_eq!(stats.games, 3, "call {call}");
        // Only 3 games were wanted, yet 6 played: one leaf from each in every batch.
        assert!(stats.metrics("m").mean_batch > 5.0, "call {call}: {}", stats.metrics("m").mean_batch);
        assert!(in_flight.len() >= 5, "call {call}: {} in flight", in_flight.len());
    }
    // Every game started has finished or is still playing; none was dropped.
    assert_eq!(in_flight.next_game, games.len() as u64 + in_flight.len() as u64);
    for g in &games {
        let parsed = tafl_rules::notation::parse_archive_line(&g.record, 7).unwrap();
        assert_eq!(parsed.plies.len(), g.plies);
        let mut replay = Game::new(variant);
        for ply in &parsed.plies {
            replay.play(ply.mv.mv).unwrap();
        }
    }
}

#[test]
fn a_stop_drops_the_games_in_flight() {
    let variant = Variant::preset("brandubh").unwrap();
    let config = small_config();
    let mut in_flight = InFlight::default();
    let mut steps = 0;
    let stats =
        SelfPlay::new(variant, &config, 3).play_on(&UniformEvaluator, 100, &mut in_flight, &mut |_| {}, &mut |_| {
            steps += 1;
            steps < 5
        });
    assert_eq!(stats.games, 0);
    assert!(in_flight.is_empty());
}
