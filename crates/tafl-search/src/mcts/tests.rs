//! Tests of the MCTS with hand-written evaluators on small positions.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tafl_rules::{Game, Move, Outcome, Piece, Position, Side, Variant, parse_square};

use super::*;
use crate::clock::ManualClock;
use crate::evaluator::{Evaluation, Evaluator, UniformEvaluator};
use crate::player::{Limits, Player};
use crate::random::RandomPlayer;

fn game(fen: &str) -> Game {
    let position = Position::from_fen(Variant::copenhagen(), fen).expect("test FEN");
    Game::from_position(position)
}

fn mv(text: &str) -> Move {
    let (from, to) = text.split_once('-').expect("from-to");
    Move::new(parse_square(from, 11).expect("square"), parse_square(to, 11).expect("square"))
}

/// Defenders to move; the king on d1 reaches a1 (and k1) at once.
const ESCAPE: &str = "11/11/11/2a5a2/11/11/11/2a5a2/7d3/11/3k7 d";
/// Attackers to move; the king on d1 threatens a1 (f1 holds the other side, d9 the d-file):
/// only c8-c1 and b4-b1 stop him.
const THREAT: &str = "11/11/3a7/2a5a2/11/11/11/1a7a1/7d3/11/3k1a5 a";
/// As `THREAT` without d9: c8-c1 and b4-b1 stop the threat but not d1-d11, which forks a11
/// and k11. Lost for the attackers.
const THREAT_AND_FORK: &str = "11/11/11/2a5a2/11/11/11/1a7a1/7d3/11/3k1a5 a";
/// Defenders to move and win in two: d3-d1 (or d3-a3) forks two corners.
const FORK: &str = "11/11/11/2a5a2/11/11/11/11/3k3d3/11/11 d";
/// Attackers to move; h10-c10 captures the defender on c9 (against c8). The king is walled in
/// by two rings of defenders, so no escape line opens within a few plies.
const CAPTURE: &str = "11/7a3/2d8/2a2d5/5d5/3ddkdd3/5d5/5d5/11/11/11 a";

/// Defenders to move; b9 and j3 shuttle (the king is walled in by his own men), so each
/// position comes back every four plies.
const SHUTTLE: &str = "11/11/1a9/11/5d5/4dkd4/5d5/11/9d1/11/11 d";
const SHUTTLE_MOVES: [&str; 7] = ["j3-j4", "b9-b10", "j4-j3", "b10-b9", "j3-j4", "b9-b10", "j4-j3"];

/// `SHUTTLE` after its first `plies` shuttle moves.
fn shuttled(plies: usize) -> Game {
    let mut g = game(SHUTTLE);
    for m in &SHUTTLE_MOVES[..plies] {
        g.play(mv(m)).expect("a legal shuttle move");
    }
    g
}

fn is_corner_escape(m: Move) -> bool {
    let v = Variant::copenhagen();
    m.from.to_string() == "d1" && v.is_corner(m.to)
}

fn both_roots() -> [SearchParams; 2] {
    [SearchParams::puct(16), SearchParams::gumbel(16)]
}

#[test]
fn finds_an_immediate_king_escape() {
    for params in both_roots() {
        for visits in [0, 1, 16] {
            let mut search = Search::new(game(ESCAPE), SearchParams { visits, ..params.clone() }, 1);
            let result = search.run(&UniformEvaluator, 1);
            let best = result.best_move.expect("a move");
            assert!(is_corner_escape(best), "{best} with {params:?}");
            assert_eq!(result.proof, Some(Proof::Win));
            assert_eq!(result.root_value, 1.0);
            // Proven before any evaluation: the rules alone settle it.
            assert_eq!(search.evaluations(), 0);
            let mass: f32 = result.improved_policy.iter().filter(|(m, _)| *m == best).map(|(_, p)| p).sum();
            assert_eq!(mass, 1.0);
        }
    }
}

#[test]
fn blocks_a_one_move_escape_threat() {
    let blocks = [mv("c8-c1"), mv("b4-b1")];
    for params in both_roots() {
        for (visits, batch) in [(1, 1), (16, 1), (32, 1), (32, 8)] {
            for seed in 0..4 {
                let mut search = Search::new(game(THREAT), SearchParams { visits, ..params.clone() }, seed);
                let result = search.run(&UniformEvaluator, batch);
                let best = result.best_move.expect("a move");
                assert!(blocks.contains(&best), "{best} with {visits} visits, batch {batch}, {params:?}");
                assert_ne!(result.proof, Some(Proof::Loss));
            }
        }
    }
}

#[test]
fn proves_a_win_in_two() {
    let forks = [mv("d3-d1"), mv("d3-d11"), mv("d3-a3"), mv("d3-k3")];
    let params = [SearchParams::puct(300), SearchParams { gumbel_k: 64, ..SearchParams::gumbel(300) }];
    for params in params {
        let mut search = Search::new(game(FORK), params.clone(), 3);
        let result = search.run(&UniformEvaluator, 1);
        assert_eq!(result.proof, Some(Proof::Win), "{params:?}");
        let best = result.best_move.expect("a move");
        assert!(forks.contains(&best), "{best}");
        assert_eq!(result.root_value, 1.0);
        assert_eq!(result.pv.first(), Some(&best));
        assert!(result.pv.len() >= 3, "pv {:?}", result.pv);
        // The search stops as soon as the root is proven.
        assert!(result.visits < 300, "{} visits", result.visits);
    }
}

#[test]
fn a_root_whose_every_move_loses_is_proven_lost() {
    // Attackers to move; the king on f1 has a1 and k1 both open: no single move blocks both.
    let g = game("11/11/11/2a5a2/11/11/11/11/7d3/11/5k5 a");
    for params in both_roots() {
        let mut search = Search::new(g.clone(), params, 0);
        let result = search.run(&UniformEvaluator, 1);
        assert_eq!(result.proof, Some(Proof::Loss));
        assert_eq!(result.root_value, -1.0);
        assert!(result.best_move.is_some());
    }
}

#[test]
fn a_block_that_walks_into_a_fork_is_known_lost() {
    // Each child of the root is opened with the king's line-opening moves: after c8-c1 or b4-b1
    // the fork d1-d11 is found, so the root is proven lost after one evaluation.
    for params in both_roots() {
        let mut search = Search::new(game(THREAT_AND_FORK), params, 0);
        let result = search.run(&UniformEvaluator, 1);
        assert_eq!(result.proof, Some(Proof::Loss));
        assert_eq!(search.evaluations(), 1);
        assert!(result.best_move.is_some());
        assert!(!result.pv.is_empty());
    }
}

#[test]
fn the_attackers_see_a_third_repetition_before_any_evaluation() {
    // After 7 plies b10-b9 brings the start back a third time: the defenders lose.
    for params in both_roots() {
        let mut search = Search::new(shuttled(7), params.clone(), 0);
        let result = search.run(&UniformEvaluator, 1);
        assert_eq!(result.proof, Some(Proof::Win), "{params:?}");
        assert_eq!(result.best_move, Some(mv("b10-b9")), "{params:?}");
        assert_eq!(search.evaluations(), 0, "{params:?}");
    }
}

#[test]
fn the_defenders_know_a_move_that_lets_a_repetition_happen_is_lost() {
    // After 6 plies, j4-j3 would let b10-b9 complete the third repetition. The root's children
    // are opened before any visit, so that move is proven lost and gets no mass.
    let lets_it_happen = mv("j4-j3");
    for visits in [1, 16] {
        let mut search = Search::new(shuttled(6), SearchParams::gumbel(visits), 0);
        let result = search.run(&UniformEvaluator, 1);
        let mass: f32 = result.improved_policy.iter().filter(|(m, _)| *m == lets_it_happen).map(|(_, p)| p).sum();
        assert_eq!(mass, 0.0, "{visits} visits");
        assert_ne!(result.best_move, Some(lets_it_happen));
        assert!(result.improved_policy.iter().any(|&(_, p)| p > 0.0));
    }
}

#[test]
fn the_defenders_play_a_fork_found_on_opening() {
    // The fork d3-d1 / d3-d11 / d3-a3 / d3-k3 is proven when the root is opened: no evaluation.
    let forks = [mv("d3-d1"), mv("d3-d11"), mv("d3-a3"), mv("d3-k3")];
    for params in both_roots() {
        let mut search = Search::new(game(FORK), params, 0);
        let result = search.run(&UniformEvaluator, 1);
        assert_eq!(result.proof, Some(Proof::Win));
        assert_eq!(search.evaluations(), 0);
        assert!(forks.contains(&result.best_move.expect("a move")));
        // The fork, a refuted reply, the escape.
        assert_eq!(result.pv.len(), 3, "{:?}", result.pv);
    }
}

/// Uniform priors; the value is the soldier balance for the side to move, an eighth per soldier.
struct Material;

impl Evaluator for Material {
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation> {
        games
            .iter()
            .map(|g| {
                let p = g.position();
                let n = g.legal_moves().len().max(1);
                let balance = p.count(Piece::Attacker) as f32 - p.count(Piece::Defender) as f32;
                let balance = if p.side_to_move() == Side::Attackers { balance } else { -balance };
                Evaluation { policy: vec![1.0 / n as f32; n], value: (balance / 8.0).clamp(-1.0, 1.0) }
            })
            .collect()
    }
}

/// Counts the calls to the evaluator it wraps and the positions passed; each call also moves
/// `clock` by `cost`.
struct Counted<E> {
    inner: E,
    calls: AtomicU64,
    positions: AtomicU64,
    clock: Arc<ManualClock>,
    cost: Duration,
}

impl<E> Counted<E> {
    fn new(inner: E) -> Counted<E> {
        Counted::costing(inner, Arc::new(ManualClock::new()), Duration::ZERO)
    }

    fn costing(inner: E, clock: Arc<ManualClock>, cost: Duration) -> Counted<E> {
        Counted { inner, calls: AtomicU64::new(0), positions: AtomicU64::new(0), clock, cost }
    }
}

impl<E: Evaluator> Evaluator for Counted<E> {
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.positions.fetch_add(games.len() as u64, Ordering::Relaxed);
        self.clock.advance(self.cost);
        self.inner.evaluate(games)
    }
}

#[test]
fn gumbel_policy_target_sums_to_one_and_prefers_the_best_move() {
    let capture = mv("h10-c10");
    for seed in 0..3 {
        let params = SearchParams { gumbel_k: 64, ..SearchParams::gumbel(64) };
        let result = Search::new(game(CAPTURE), params.clone(), seed).run(&Material, 1);
        let total: f32 = result.improved_policy.iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-4, "sums to {total}");
        assert_eq!(result.improved_policy.len(), game(CAPTURE).legal_moves().len());
        let (top, _) = result.improved_policy.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)).expect("moves");
        assert_eq!(top, capture);
        let played = Search::new(game(CAPTURE), params.for_play(), seed).run(&Material, 1);
        assert_eq!(played.best_move, Some(capture));
        // The policy target follows the search, not the flat prior.
        let p = result.improved_policy.iter().find(|(m, _)| *m == capture).map_or(0.0, |x| x.1);
        assert!(p > 0.2, "capture gets {p}");
    }
}

#[test]
fn puct_prefers_the_capture_too() {
    let params = SearchParams::puct(200).for_play();
    let result = Search::new(game(CAPTURE), params, 0).run(&Material, 1);
    assert_eq!(result.best_move, Some(mv("h10-c10")));
    let total: f32 = result.improved_policy.iter().map(|(_, p)| p).sum();
    assert!((total - 1.0).abs() < 1e-4);
}

#[test]
fn many_searches_in_flight_match_one_at_a_time() {
    let starts = [Game::new(Variant::copenhagen()), game(THREAT), game(FORK), game(CAPTURE), game(ESCAPE)];
    for params in [SearchParams::puct(24), SearchParams::gumbel(24)] {
        let alone: Vec<SearchResult> = starts
            .iter()
            .enumerate()
            .map(|(i, g)| Search::new(g.clone(), params.clone(), i as u64).run(&Material, 1))
            .collect();
        let mut searches: Vec<Search> =
            starts.iter().enumerate().map(|(i, g)| Search::new(g.clone(), params.clone(), i as u64)).collect();
        let mut rounds = 0;
        while step_searches(searches.iter_mut(), &Material, 1) > 0 {
            rounds += 1;
        }
        assert!(searches.iter().all(Search::done));
        assert!(rounds <= 25, "{rounds} rounds");
        let together: Vec<SearchResult> = searches.iter().map(Search::result).collect();
        assert_eq!(alone, together);
    }
}

#[test]
fn batches_from_one_tree_give_valid_results() {
    for params in [SearchParams::puct(64), SearchParams::gumbel(64)] {
        let g = Game::new(Variant::copenhagen());
        let mut search = Search::new(g.clone(), params, 5);
        let counted = Counted::new(Material);
        let result = search.run(&counted, 16);
        assert_eq!(result.visits, 64);
        assert!(g.legal_moves().contains(&result.best_move.expect("a move")));
        let total: f32 = result.improved_policy.iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-4);
        // Far fewer evaluator calls than leaves: most calls carry many leaves.
        let calls = counted.calls.load(Ordering::Relaxed);
        assert!(search.evaluations() >= 60, "{} evaluations", search.evaluations());
        assert!(calls * 4 <= search.evaluations(), "{calls} calls for {} leaves", search.evaluations());
    }
}

#[test]
fn tree_is_reused_after_advancing() {
    for params in [SearchParams::puct(64), SearchParams::gumbel(64)] {
        let mut search = Search::new(Game::new(Variant::copenhagen()), params, 9);
        let first = search.run(&UniformEvaluator, 1);
        let best = first.best_move.expect("a move");
        search.advance(best).expect("legal");
        assert_eq!(search.game().moves(), &[best]);
        let kept = search.root_visits();
        assert!(kept > 0, "the played child had visits");
        let second = search.run(&UniformEvaluator, 1);
        assert_eq!(second.visits, 64);
        assert_eq!(second.root_visits, kept + 64);
        // An illegal move leaves the search untouched.
        assert!(search.advance(best).is_err());
        assert_eq!(search.game().moves(), &[best]);
    }
}

fn play_out(mut mcts: impl Player, mcts_side: Side, limits: Limits) -> Game {
    let mut random = RandomPlayer::new(11);
    let mut g = Game::new(Variant::copenhagen());
    mcts.new_game();
    while !g.outcome().is_over() && g.ply() < 600 {
        let choice = if g.position().side_to_move() == mcts_side {
            let c = mcts.choose(&g, &limits).expect("a move");
            assert_eq!(c.pv.first(), Some(&c.mv));
            assert!(c.value.is_some_and(|v| (-1.0..=1.0).contains(&v)));
            c
        } else {
            random.choose(&g, &limits).expect("a move")
        };
        g.play(choice.mv).expect("legal move");
    }
    g
}

#[test]
fn mcts_player_plays_whole_games_against_random() {
    let limits = Limits { visits: Some(16), ..Limits::default() };
    // (Gumbel's attackers at 16 visits with no evaluator shuffle past the 600-ply cap against
    // random defenders; PUCT's capture the king.)
    for (params, side) in [(SearchParams::gumbel(16), Side::Defenders), (SearchParams::puct(16), Side::Attackers)] {
        let g = play_out(MctsPlayer::new(UniformEvaluator, params).with_seed(1), side, limits.clone());
        // The game is played to its end by the rules, not cut short by the 600-ply cap.
        assert!(g.outcome().is_over(), "{side}: {:?} after {} plies", g.outcome(), g.ply());
    }
}

#[test]
fn mcts_player_keeps_to_the_time_asked() {
    // Each evaluator call takes 17 ms of a clock that moves only then: the player must stop
    // before a batch that might not fit (six batches would end at 102 ms), but not give up long
    // before.
    let clock = Arc::new(ManualClock::new());
    let evaluator = Counted::costing(Material, Arc::clone(&clock), Duration::from_millis(17));
    let mut player = MctsPlayer::new(evaluator, SearchParams::gumbel(100_000)).with_batch(8).with_clock(clock.clone());
    let g = Game::new(Variant::copenhagen());
    let limits = Limits { time: Some(Duration::from_millis(100)), ..Limits::default() };
    let choice = player.choose(&g, &limits).expect("a move");
    let used = clock.elapsed();
    assert!(used <= Duration::from_millis(100), "used {used:?} of 100 ms");
    assert!(used >= Duration::from_millis(50), "stopped early: {used:?} of 100 ms");
    assert!(choice.nodes > 0);
    assert!(g.legal_moves().contains(&choice.mv));
}

#[test]
fn params_read_from_toml_and_reject_typos() {
    let p: SearchParams =
        toml::from_str("visits = 32\nuse-gumbel = true\ngumbel-k = 8\nc-visit = 40.0").expect("valid");
    assert_eq!(p, SearchParams { visits: 32, use_gumbel: true, gumbel_k: 8, c_visit: 40.0, ..SearchParams::default() });
    let e = toml::from_str::<SearchParams>("visit = 32").expect_err("typo");
    assert!(e.to_string().contains("visit"), "{e}");
    let back: SearchParams = toml::from_str(&toml::to_string(&p).expect("serialises")).expect("round trip");
    assert_eq!(back, p);
}

/// `cargo test -p tafl-search --release -- --ignored --nocapture mcts_overhead`
#[test]
#[ignore = "a measurement, not a test"]
fn mcts_overhead() {
    for visits in [16, 32, 200] {
        for params in [SearchParams::gumbel(visits), SearchParams::puct(visits)] {
            let kind = if params.use_gumbel { "gumbel" } else { "puct" };
            let start = Game::new(Variant::copenhagen());
            let report = bench::searches_in_flight_with(&UniformEvaluator, &start, &params, 64, 2.0);
            println!(
                "{kind:6} visits {visits:3}: {:8.0} simulations/s, {:8.0} evaluations/s, {:6.1} moves/s, evaluator {:4.1}% of time, batch {:.1}",
                report.simulations_per_s,
                report.evaluations_per_s,
                report.moves_per_s,
                100.0 * report.share_of_time_in_evaluator,
                report.mean_batch
            );
        }
    }
}

#[test]
fn bench_runs_many_searches_in_flight() {
    // The rates must be what the evaluator saw over the time measured, and moves must have been
    // played (8 visits finish many moves in 0.2 s).
    let counted = Counted::new(Material);
    let report = searches_in_flight(&counted, 8, 8, 0.2);
    let calls = counted.calls.load(Ordering::Relaxed) as f64;
    let positions = counted.positions.load(Ordering::Relaxed) as f64;
    assert!((report.evaluations_per_s * report.seconds - positions).abs() < 0.5, "{report:?}, {positions} positions");
    assert!((report.mean_batch - positions / calls).abs() < 1e-9, "{report:?}, {calls} calls");
    assert!(report.moves_per_s * report.seconds >= 8.0, "{report:?}");
    assert!(report.simulations_per_s >= report.evaluations_per_s * 0.5, "{report:?}");
    assert!((0.0..=1.0).contains(&report.share_of_time_in_evaluator));
    assert!(report.mean_batch > 1.0 && report.mean_batch <= 8.0, "{}", report.mean_batch);
}

#[test]
fn dirichlet_noise_is_not_mixed_in_twice() {
    let params = SearchParams::puct(8);
    let mut search = Search::new(Game::new(Variant::copenhagen()), params, 4);
    search.run(&UniformEvaluator, 1);
    let priors = |s: &Search| s.tree.edges[s.tree.nodes[0].edges()].iter().map(|e| e.prior).collect::<Vec<f32>>();
    let noisy = priors(&search);
    search.start(8);
    search.run(&UniformEvaluator, 1);
    let again = priors(&search);
    assert_ne!(noisy, again, "fresh noise each search");
    // Both are one mix of the flat prior with a noise vector that sums to 1.
    let flat = 1.0 / noisy.len() as f32;
    for p in [&noisy, &again] {
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        assert!(p.iter().all(|&x| x >= 0.75 * flat - 1e-6));
    }
}

/// `cargo test -p tafl-search --lib -- --ignored --nocapture mcts_against_random`
#[test]
#[ignore = "a measurement, not a test"]
fn mcts_against_random() {
    for (name, params) in [("gumbel 32", SearchParams::gumbel(32)), ("puct 32", SearchParams::puct(32))] {
        let mut wins = 0;
        let mut plies = 0;
        let games = 8;
        for i in 0..games {
            let side = if i % 2 == 0 { Side::Attackers } else { Side::Defenders };
            let player = MctsPlayer::new(UniformEvaluator, params.clone()).with_seed(i);
            let g = play_out(player, side, Limits::default());
            wins += u32::from(g.outcome().winner() == Some(side));
            plies += g.ply();
        }
        println!("{name}: {wins}/{games} wins against random, {} plies a game", plies / games as usize);
    }
}

#[test]
fn fast_gumbel_interior_scores_match_the_formula() {
    let mut search = Search::new(Game::new(Variant::copenhagen()), SearchParams::gumbel(400), 8);
    search.run(&Material, 4);
    let mut checked = 0;
    for node in 0..search.tree.nodes.len() as u32 {
        let n = search.tree.nodes[node as usize];
        if n.state != tree::State::Evaluated || n.visits < 3 {
            continue;
        }
        let completed = search.completed(node);
        let edges = n.edges();
        let mut pi: Vec<f32> = edges
            .clone()
            .zip(&completed.q)
            .map(|(e, &q)| search.tree.edges[e].prior.max(1e-30).ln() + completed.sigma(q))
            .collect();
        gumbel::softmax(&mut pi);
        let visits: Vec<u32> = edges.clone().map(|e| search.edge_q(e).1).collect();
        let total = 1.0 + visits.iter().sum::<u32>() as f32;
        search.gumbel_interior_scores(node, |e, score| {
            let i = e - edges.start;
            let expected = pi[i] - visits[i] as f32 / total;
            assert!((score - expected).abs() < 1e-4, "node {node} edge {i}: {score} against {expected}");
        });
        checked += 1;
    }
    assert!(checked > 3, "{checked} nodes checked");
}

#[test]
fn a_finished_game_has_no_move() {
    let mut g = game(ESCAPE);
    g.play(mv("d1-a1")).expect("legal");
    assert!(g.outcome().is_over());
    let mut search = Search::new(g.clone(), SearchParams::gumbel(16), 0);
    let result = search.run(&UniformEvaluator, 1);
    assert_eq!(result.best_move, None);
    assert_eq!(result.proof, Some(Proof::Loss));
    assert!(result.improved_policy.is_empty());
    let mut player = MctsPlayer::new(UniformEvaluator, SearchParams::gumbel(16));
    assert_eq!(player.choose(&g, &Limits::default()), Err(crate::player::PlayerError::NoMoves));
}

/// Brute force, independent of the search's shortcuts: with the defenders to move, the king
/// wins within `plies` (1 or 3) whatever the attackers answer. Only king moves are tried, which
/// is all the search's escape proofs rely on.
fn king_wins_within(game: &mut Game, plies: u32) -> bool {
    let Some(king) = game.position().king() else { return false };
    let moves: Vec<Move> = game.legal_moves().iter().copied().filter(|m| m.from == king).collect();
    moves.into_iter().any(|m| {
        game.play_unchecked(m);
        let won = match game.outcome() {
            Outcome::Decided { winner, .. } => winner == Side::Defenders,
            Outcome::Ongoing if plies >= 3 => {
                let replies: Vec<Move> = game.legal_moves().iter().copied().collect();
                !replies.is_empty()
                    && replies.into_iter().all(|r| {
                        game.play_unchecked(r);
                        let lost = match game.outcome() {
                            Outcome::Decided { winner, .. } => winner == Side::Defenders,
                            Outcome::Ongoing => king_wins_within(game, plies - 2),
                            Outcome::Draw { .. } => false,
                        };
                        game.undo();
                        lost
                    })
            }
            _ => false,
        };
        game.undo();
        won
    })
}

#[test]
fn every_root_move_proven_lost_loses_by_brute_force() {
    // Positions from random games, attackers to move: each root move the search marks as lost
    // after one evaluation must let the king win within three plies. Most lose to an escape at
    // once (cheap to check, so all are); the forks take the three-ply check (capped).
    let (mut positions, mut refuted, mut forks) = (0, 0, 0);
    for seed in 0..60 {
        let mut random = RandomPlayer::new(seed);
        let mut g = Game::new(Variant::copenhagen());
        while !g.outcome().is_over() && g.ply() < 160 {
            if g.position().side_to_move() == Side::Attackers && g.position().king_escape_move().is_some() {
                positions += 1;
                let mut search = Search::new(g.clone(), SearchParams::gumbel(1), seed);
                search.run(&UniformEvaluator, 1);
                for e in search.tree.nodes[0].edges() {
                    if search.child_proof(e) != Some(Proof::Win) {
                        continue;
                    }
                    refuted += 1;
                    let mv = search.tree.edges[e].mv;
                    let mut after = g.clone();
                    after.play_unchecked(mv);
                    if king_wins_within(&mut after, 1) || forks >= 150 {
                        continue;
                    }
                    forks += 1;
                    assert!(king_wins_within(&mut after, 3), "{mv} in {}", g.position().to_fen());
                }
            }
            let choice = random.choose(&g, &Limits::default()).expect("a move");
            g.play_unchecked(choice.mv);
        }
    }
    assert!(
        positions >= 20 && refuted >= 500 && forks >= 10,
        "{positions} positions, {refuted} refuted, {forks} forks"
    );
}

#[test]
fn gumbel_targets_give_moves_proven_lost_no_mass_and_rescale_q() {
    // Attackers to move while the king sees a corner: most moves are proven lost at once.
    let mut checked = 0;
    for seed in 0..40 {
        let mut random = RandomPlayer::new(seed);
        let mut g = Game::new(Variant::copenhagen());
        while !g.outcome().is_over() && g.ply() < 160 && checked < 12 {
            if g.position().side_to_move() == Side::Attackers && g.position().king_escape_move().is_some() {
                let mut search = Search::new(g.clone(), SearchParams::gumbel(32), seed);
                let result = search.run(&Material, 4);
                let edges = search.tree.nodes[0].edges();
                let lost: Vec<bool> = edges.clone().map(|e| search.child_proof(e) == Some(Proof::Win)).collect();
                if lost.iter().any(|&l| l) && !lost.iter().all(|&l| l) && result.proof.is_none() {
                    checked += 1;
                    for ((m, p), &l) in result.improved_policy.iter().zip(&lost) {
                        assert!(!l || *p == 0.0, "{m} is proven lost but has mass {p}");
                    }
                    // sigma spans [0, scale] over the moves not proven lost.
                    let completed = search.completed(0);
                    let alive: Vec<f32> =
                        completed.q.iter().zip(&lost).filter(|&(_, &l)| !l).map(|(&q, _)| completed.sigma(q)).collect();
                    let (lo, hi) =
                        alive.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &s| (a.min(s), b.max(s)));
                    assert!(lo.abs() < 1e-4, "lowest sigma {lo}");
                    assert!(
                        alive.len() < 2
                            || completed.spread <= gumbel::MIN_SPREAD
                            || (hi - completed.scale).abs() < 1e-3,
                        "highest sigma {hi}"
                    );
                }
            }
            let choice = random.choose(&g, &Limits::default()).expect("a move");
            g.play_unchecked(choice.mv);
        }
    }
    assert!(checked >= 5, "{checked} positions with both lost and open moves");
}

/// Defenders to move. The king on c5 has attackers on b5, d5 and c4: c9-c6 would capture him.
/// The other defender, boxed in on j10, can only go to j11, which leaves the king to it; the
/// king's own moves up the c-file (c6, c7, c8) escape the net.
const KING_TRAP: &str = "11/8ada/2a6a1/11/11/11/1aka7/2a8/11/11/11 d";

/// A search result that chose `chosen` with all the policy on it.
fn chose(game: &Game, chosen: Move) -> SearchResult {
    let improved_policy = game.legal_moves().iter().map(|&m| (m, if m == chosen { 1.0 } else { 0.0 })).collect();
    SearchResult {
        best_move: Some(chosen),
        improved_policy,
        root_value: 0.0,
        best_value: 0.0,
        visits: 0,
        root_visits: 0,
        proof: None,
        pv: vec![chosen],
    }
}

#[test]
fn the_guard_replaces_a_move_it_proves_lost() {
    // The search itself sees a capture one ply away (its root's children are checked), so the
    // guard is handed the search's choice directly: a net sure of j10-j11.
    let trap = mv("j10-j11");
    let start = game(KING_TRAP);
    let mut after = start.clone();
    after.play(trap).expect("legal");
    assert!(crate::AlphaBeta::with_depth(1).wins_by_force(&after, 1), "c9-c6 captures the king");
    let mut unguarded = MctsPlayer::new(UniformEvaluator, SearchParams::puct(0));
    assert_eq!(unguarded.guarded(&start, trap, &chose(&start, trap), &Limits::default()), trap, "no guard, no change");
    for depth in [1, 3] {
        let mut player = MctsPlayer::new(UniformEvaluator, SearchParams::puct(0)).with_guard(depth);
        let chosen = player.guarded(&start, trap, &chose(&start, trap), &Limits::default());
        assert_eq!(chosen.from, parse_square("c5", 11).expect("square"), "{chosen}: a king move at depth {depth}");
        let mut next = start.clone();
        next.play(chosen).expect("legal");
        assert!(!crate::AlphaBeta::with_depth(3).wins_by_force(&next, 3), "{chosen} is lost too");
        // A search that proved its move wins is not second-guessed.
        let proven = SearchResult { proof: Some(Proof::Win), ..chose(&start, trap) };
        assert_eq!(player.guarded(&start, trap, &proven, &Limits::default()), trap);
    }
}

#[test]
fn the_guard_keeps_a_move_that_is_not_lost_and_a_proven_win() {
    // The king on d1 escapes at once: nothing to guard against.
    let mut player = MctsPlayer::new(UniformEvaluator, SearchParams::puct(16).for_play()).with_guard(3);
    let chosen = player.choose(&game(ESCAPE), &Limits::default()).expect("a move").mv;
    assert!(is_corner_escape(chosen), "{chosen}");
    // In the threat, only the two blocks are not lost, and the guard keeps the search's block.
    let mut player = MctsPlayer::new(UniformEvaluator, SearchParams::puct(32).for_play()).with_guard(2);
    let chosen = player.choose(&game(THREAT), &Limits::default()).expect("a move").mv;
    assert!([mv("c8-c1"), mv("b4-b1")].contains(&chosen), "{chosen}");
    assert_eq!(player.name(), "mcts:puct,visits=32,guard=2");
}

#[test]
fn wins_by_force_proves_escapes_and_forks_and_nothing_else() {
    let mut ab = crate::AlphaBeta::with_depth(3);
    assert!(ab.wins_by_force(&game(ESCAPE), 1), "the king escapes in one");
    assert!(ab.wins_by_force(&game(FORK), 3), "the fork wins in three");
    let mut blocked = game(THREAT_AND_FORK);
    blocked.play(mv("c8-c1")).expect("legal");
    assert!(ab.wins_by_force(&blocked, 3), "d1-d11 forks a11 and k11");
    assert!(!ab.wins_by_force(&game(CAPTURE), 3), "a capture is not a win");
    assert!(!ab.wins_by_force(&Game::new(Variant::copenhagen()), 2), "nor is the start");
}

#[test]
fn a_stop_flag_ends_an_mcts_search_after_its_first_batch() {
    let start = Game::new(Variant::copenhagen());
    let stop = crate::Stop::new();
    stop.stop();
    for params in [SearchParams::puct(1 << 20), SearchParams::gumbel(1 << 20)] {
        let mut player = MctsPlayer::new(UniformEvaluator, params).with_guard(2);
        let choice = player.choose(&start, &Limits { stop: stop.clone(), ..Limits::default() }).expect("a move");
        assert!(start.legal_moves().contains(&choice.mv));
        assert!(choice.nodes <= 1, "{} visits after the stop", choice.nodes);
    }
}

#[test]
fn a_tree_stops_growing_at_its_memory_bound() {
    let start = Game::new(Variant::copenhagen());
    // A million visits asked, one MiB allowed: the search ends when the tree is full.
    let params = SearchParams { max_tree_mib: 1, ..SearchParams::puct(1 << 20) };
    let mut search = Search::new(start, params, 1);
    search.start(1 << 20);
    while !search.done() {
        if search.next_leaves(8) == 0 {
            break;
        }
        let evaluations = UniformEvaluator.evaluate(&search.pending_games());
        search.feed(evaluations);
    }
    let result = search.result();
    assert!(result.best_move.is_some());
    assert!(result.visits > 100 && result.visits < 10_000, "{} visits in a 1 MiB tree", result.visits);
    // Bounded by length, within what one more node's edges add.
    assert!(search.tree.bytes() < (1 << 20) + (1 << 16), "{} bytes", search.tree.bytes());
    // Visits far beyond the bound on counts are cut to it, not allocated.
    let mut huge =
        Search::new(Game::new(Variant::preset("brandubh").expect("brandubh")), SearchParams::gumbel(u32::MAX), 1);
    huge.start(u32::MAX);
    assert!(huge.next_leaves(1) <= 1);
}

#[test]
fn multipv_reads_the_lines_off_the_tree_chosen_move_first() {
    let g = Game::new(Variant::copenhagen());
    for params in [SearchParams::puct(300), SearchParams::gumbel(300)] {
        let mut player = MctsPlayer::new(UniformEvaluator, params).with_seed(3);
        let choice = player.choose(&g, &Limits { lines: Some(4), ..Limits::default() }).expect("a move");
        assert_eq!(choice.lines.len(), 4);
        assert_eq!(choice.lines[0].pv[0], choice.mv);
        let mut firsts: Vec<Move> = choice.lines.iter().map(|l| l.pv[0]).collect();
        for line in &choice.lines {
            let mut replay = g.clone();
            for &m in &line.pv {
                replay.play(m).expect("a legal line");
            }
            assert!(line.value.is_some_and(|v| (-1.0..=1.0).contains(&v)));
        }
        // After the chosen move, the most visited first.
        let visits: Vec<u64> = choice.lines[1..].iter().map(|l| l.nodes).collect();
        assert!(visits.windows(2).all(|w| w[0] >= w[1]), "{visits:?}");
        firsts.sort();
        firsts.dedup();
        assert_eq!(firsts.len(), 4);
        let total: u64 = choice.lines.iter().map(|l| l.nodes).sum();
        assert!(total <= 300 + 1, "{total}");
        assert!(player.choose(&g, &Limits::default()).expect("a move").lines.is_empty());
    }
}

#[test]
fn multipv_puts_the_proven_win_first() {
    let g = game(ESCAPE);
    let mut player = MctsPlayer::new(UniformEvaluator, SearchParams::puct(50));
    let choice = player.choose(&g, &Limits { lines: Some(3), ..Limits::default() }).expect("a move");
    assert_eq!(choice.lines[0].value, Some(1.0));
    assert!([mv("d1-a1"), mv("d1-k1")].contains(&choice.lines[0].pv[0]), "{:?}", choice.lines[0]);
}
