//! Self-play: many games in flight, one network batch per step.
//!
//! Each game has its own [`Search`] (its tree kept from move to move); [`step_searches`] takes
//! one leaf from every unfinished search into a single evaluator call. When a search is done its
//! move is played and the next search of that game starts:
//!
//! * **Playout-cap randomisation** (KataGo): a move gets a full search (`full-visits`) with
//!   probability `full-fraction`, else a cheap one (`fast-visits`). Only full searches become
//!   policy targets, so targets stay good while games are played fast.
//! * **Temperature**: during the first `temperature-plies` plies the move is sampled from the
//!   improved policy raised to `1 / temperature` (the Gumbel root's own choice already samples;
//!   this widens the openings). Later moves are the search's choice.
//! * **Resignation**: a side whose full search values its chosen move
//!   (`SearchResult::best_value`) below `resign-threshold` for `resign-consecutive` of its moves
//!   resigns, except in a `resign-playout-fraction` of the games, which are played out to count
//!   how often resigning would have been wrong.
//! * **Length cap**: at `max-plies` the game stops as a draw.
//! * **An opponent** (`opponent`, `opponent-fraction`, `opponent-side`): in a fraction of the
//!   games another player (alpha-beta, say) takes one side and only the network's side gives
//!   samples. Self-play alone teaches a side to beat the network's own play; a net whose attack
//!   beats its own defence and no other learns here against a defence it did not make. With
//!   several opponents one is drawn per game: against a ladder of defences (alpha-beta depths 1
//!   to 3) the attackers win some games and lose others, where against the strongest alone they
//!   lose nearly all, and their value targets tell little apart.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tafl_arena::{PlayerFactory, PlayerSpec, SpecError};
use tafl_rules::notation::{archive_result, ply_text, write_archive_line};
use tafl_rules::{Game, Move, Outcome, Side, Variant};
pub use tafl_run::metrics::OpponentTally;
use tafl_run::metrics::{Results, SelfPlayMetrics};
use tafl_run::shard::Sample;
use tafl_search::mcts::{Search, SearchParams, step_searches};
use tafl_search::{Evaluator, Limits, Player};

use crate::config::{MAX_VISITS, OpponentSide, SelfPlayConfig};

/// A finished self-play game.
#[derive(Clone, Debug)]
pub struct FinishedGame {
    /// Its training samples (full searches only), values filled in.
    pub samples: Vec<Sample>,
    /// The game as an archive line (`moves,attacker_captures,defender_captures,result`).
    pub record: String,
    /// Plies played.
    pub plies: usize,
    /// The winner; `None` for a draw.
    pub winner: Option<Side>,
    /// How it ended: a rule's name, `resigned` or `max-plies`.
    pub reason: String,
    /// In a played-out game: the side that would have resigned, and whether that was wrong
    /// (it did not lose).
    pub false_resignation: Option<bool>,
    /// The opponent, in a game against one.
    pub opponent: Option<Against>,
}

/// The opponent of a game: the side it played and which of the configured opponents it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Against {
    /// The opponent's side.
    pub side: Side,
    /// Its index in `opponent` of the config (the order of [`SelfPlay::with_opponent`] calls).
    pub index: usize,
}

/// Totals of a self-play session.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SelfPlayStats {
    /// Games finished.
    pub games: u64,
    /// Samples recorded.
    pub samples: u64,
    /// Moves played (every search, full or cheap).
    pub moves: u64,
    /// Positions evaluated by the network.
    pub evaluations: u64,
    /// Evaluator calls.
    pub batches: u64,
    /// Wall seconds.
    pub seconds: f64,
    /// The games by result.
    pub results: Results,
    /// Games ended by resignation.
    pub resignations: u64,
    /// Played-out games in which a side would have resigned.
    pub playouts_with_resign: u64,
    /// Of those, games the would-be resigner did not lose.
    pub false_resignations: u64,
    /// Sum of the game lengths in plies.
    pub plies: u64,
    /// Results against each opponent, in the order of the config's `opponent` (an opponent
    /// that played no game yet may be missing at the end).
    pub opponents: Vec<OpponentTally>,
}

impl SelfPlayStats {
    /// Adds a finished game.
    pub fn add_game(&mut self, game: &FinishedGame) {
        self.games += 1;
        self.samples += game.samples.len() as u64;
        self.plies += game.plies as u64;
        self.results.add(game.winner);
        if game.reason == "resigned" {
            self.resignations += 1;
        }
        if let Some(wrong) = game.false_resignation {
            self.playouts_with_resign += 1;
            self.false_resignations += u64::from(wrong);
        }
        if let Some(against) = game.opponent {
            if self.opponents.len() <= against.index {
                self.opponents.resize(against.index + 1, OpponentTally::default());
            }
            let tally = &mut self.opponents[against.index];
            tally.games += 1;
            match game.winner {
                None => tally.draws += 1,
                Some(w) if w != against.side => tally.net_wins += 1,
                Some(_) => {}
            }
        }
    }

    /// The results against all opponents together.
    #[must_use]
    pub fn against_opponents(&self) -> OpponentTally {
        self.opponents.iter().fold(OpponentTally::default(), |t, o| OpponentTally {
            games: t.games + o.games,
            net_wins: t.net_wins + o.net_wins,
            draws: t.draws + o.draws,
        })
    }

    /// The totals and rates as a metrics event of `model`'s games.
    #[must_use]
    pub fn metrics(&self, model: &str) -> SelfPlayMetrics {
        let s = self.seconds.max(1e-9);
        let games = self.games.max(1) as f64;
        let against = self.against_opponents();
        SelfPlayMetrics {
            model: model.to_string(),
            games: self.games,
            samples: self.samples,
            moves: self.moves,
            evaluations: self.evaluations,
            seconds: self.seconds,
            games_per_s: self.games as f64 / s,
            moves_per_s: self.moves as f64 / s,
            evals_per_s: self.evaluations as f64 / s,
            samples_per_s: self.samples as f64 / s,
            mean_batch: if self.batches == 0 { 0.0 } else { self.evaluations as f64 / self.batches as f64 },
            mean_plies: self.plies as f64 / games,
            results: self.results,
            resignations: self.resignations,
            playouts_with_resign: self.playouts_with_resign,
            false_resignations: self.false_resignations,
            opponent_games: against.games,
            opponent_net_wins: against.net_wins,
            opponent_draws: against.draws,
            opponents: self.opponents.clone(),
        }
    }
}

/// Games being played, kept from one [`SelfPlay::play_on`] call to the next.
#[derive(Default)]
pub struct InFlight {
    slots: Vec<Slot>,
    /// Games started so far: the next game's number (its search's seed).
    next_game: u64,
}

impl InFlight {
    /// Games in flight.
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// No game in flight.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

struct Slot {
    search: Search,
    /// The running search is a full one.
    full: bool,
    samples: Vec<Sample>,
    /// Per sample, how far the search's target moved from the net's policy ([`surprise`]).
    surprise: Vec<f32>,
    /// No resignation in this game.
    playout: bool,
    /// Consecutive full searches below the threshold, per side (attackers, defenders).
    low: [u32; 2],
    would_resign: Option<Side>,
    resigned: Option<Side>,
    /// This game's factor on each side's visits, by [`side_index`] (`attacker-visits-spread`).
    visits_factor: [f64; 2],
    /// The opponent of this game, its side and index.
    opponent: Option<(Against, Box<dyn Player>)>,
    /// The opponent failed to move: the game ends without samples.
    opponent_failed: bool,
}

/// A player that takes one side in some games, and its idle instances (a slot takes one for
/// a game and gives it back: an alpha-beta player holds a 16 MiB table).
struct Opponent<'a> {
    spec: PlayerSpec,
    factory: &'a dyn PlayerFactory,
    idle: Vec<Box<dyn Player>>,
}

fn side_index(side: Side) -> usize {
    usize::from(side == Side::Defenders)
}

/// Plays self-play games.
pub struct SelfPlay<'a> {
    variant: &'static Variant,
    config: &'a SelfPlayConfig,
    /// The full and cheap searches of each side, by [`side_index`].
    full_params: [SearchParams; 2],
    fast_params: [SearchParams; 2],
    rng: StdRng,
    seed: u64,
    opponents: Vec<Opponent<'a>>,
}

impl<'a> SelfPlay<'a> {
    /// Self-play of `variant` under `config`, reproducible from `seed`.
    #[must_use]
    pub fn new(variant: &'static Variant, config: &'a SelfPlayConfig, seed: u64) -> SelfPlay<'a> {
        let params = |visits: u32, side| {
            let scale = if side == Side::Attackers { config.attacker_visits_scale } else { 1.0 };
            // Validated: the scale to (0, 1000], the product to at most config::MAX_VISITS.
            SearchParams { visits: ((f64::from(visits) * scale).round() as u32).max(1), ..config.search.clone() }
        };
        let both = |visits| [params(visits, Side::Attackers), params(visits, Side::Defenders)];
        let (full_params, fast_params) = (both(config.full_visits), both(config.fast_visits));
        SelfPlay {
            variant,
            config,
            full_params,
            fast_params,
            rng: StdRng::seed_from_u64(seed),
            seed,
            opponents: Vec::new(),
        }
    }

    /// Adds `spec` (built by `factory`) to the opponents, one of which takes one side in
    /// `opponent-fraction` of the games (drawn per game when there are several).
    ///
    /// # Errors
    /// The spec does not build.
    pub fn with_opponent(
        mut self,
        spec: PlayerSpec,
        factory: &'a dyn PlayerFactory,
    ) -> Result<SelfPlay<'a>, SpecError> {
        let first = factory.build(&spec, self.seed)?;
        self.opponents.push(Opponent { spec, factory, idle: vec![first] });
        Ok(self)
    }

    fn new_slot(&mut self, game_number: u64) -> Slot {
        let seed = self.seed ^ (game_number + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let search = Search::new(Game::new(self.variant), self.full_params[0].clone(), seed);
        let playout = self.rng.random::<f64>() < self.config.resign_playout_fraction;
        let visits_factor = self.draw_visits_factor();
        let opponent = self.take_opponent(seed);
        let mut slot = Slot {
            search,
            full: false,
            samples: Vec::new(),
            surprise: Vec::new(),
            playout,
            low: [0; 2],
            would_resign: None,
            resigned: None,
            visits_factor,
            opponent,
            opponent_failed: false,
        };
        // An opponent playing the attackers moves first; a game it ends at once is not played.
        if Self::opponent_moves(&mut slot) || slot.search.game().outcome().is_over() {
            self.release_opponent(&mut slot);
            slot.search = Search::new(Game::new(self.variant), self.full_params[0].clone(), seed);
            slot.opponent_failed = false;
        }
        slot.full = self.begin_search(&mut slot.search, slot.visits_factor);
        slot
    }

    /// The factors on the attackers' and defenders' visits of a new game: the ratio of the
    /// attackers' visits to the defenders' is `attacker-visits-scale` times a factor drawn
    /// log-uniform in [1/spread, spread], and their sum stays, so that a game costs what it
    /// did. A spread of 1 draws nothing, so that runs without it keep their random streams.
    fn draw_visits_factor(&mut self) -> [f64; 2] {
        let (scale, spread) = (self.config.attacker_visits_scale, self.config.attacker_visits_spread);
        if spread <= 1.0 {
            return [1.0; 2];
        }
        let factor = spread.powf(self.rng.random_range(-1.0..=1.0));
        // Attackers a = scale·v, defenders d = v; then a' = scale·factor·d' and a' + d' = a + d.
        let defenders = (scale + 1.0) / (scale * factor + 1.0);
        [factor * defenders, defenders]
    }

    /// An opponent and its side for the next game, in `opponent-fraction` of the games.
    fn take_opponent(&mut self, seed: u64) -> Option<(Against, Box<dyn Player>)> {
        if self.opponents.is_empty() || self.rng.random::<f64>() >= self.config.opponent_fraction {
            return None;
        }
        let side = match self.config.opponent_side {
            OpponentSide::Attackers => Side::Attackers,
            OpponentSide::Defenders => Side::Defenders,
            OpponentSide::Either if self.rng.random::<bool>() => Side::Attackers,
            OpponentSide::Either => Side::Defenders,
        };
        // One opponent draws nothing here, so its runs keep the random streams they had.
        let index = if self.opponents.len() > 1 { self.rng.random_range(0..self.opponents.len()) } else { 0 };
        let opponent = &mut self.opponents[index];
        let mut player = match opponent.idle.pop() {
            Some(p) => p,
            // It built once in `with_opponent`; a later failure (an engine that no longer
            // starts) only costs this game its opponent.
            None => opponent.factory.build(&opponent.spec, seed).ok()?,
        };
        player.new_game();
        Some((Against { side, index }, player))
    }

    fn release_opponent(&mut self, slot: &mut Slot) {
        // A game carried over from another SelfPlay of the same config: the same opponents.
        if let Some((against, player)) = slot.opponent.take()
            && let Some(opponent) = self.opponents.get_mut(against.index)
        {
            opponent.idle.push(player);
        }
    }

    /// Plays the opponent's moves while it is to move; true when it failed to move (the game
    /// then ends without samples).
    fn opponent_moves(slot: &mut Slot) -> bool {
        let Some((against, player)) = slot.opponent.as_mut() else { return false };
        while slot.search.game().position().side_to_move() == against.side && !slot.search.game().outcome().is_over() {
            let played = player.choose(slot.search.game(), &Limits::default()).ok().map(|c| slot.search.advance(c.mv));
            if !matches!(played, Some(Ok(()))) {
                slot.opponent_failed = true;
                return true;
            }
        }
        false
    }

    /// Chooses full or cheap for the next search and starts it.
    fn begin_search(&mut self, search: &mut Search, visits_factor: [f64; 2]) -> bool {
        let full = self.rng.random::<f64>() < self.config.full_fraction;
        let side = side_index(search.game().position().side_to_move());
        let mut params = if full { self.full_params[side].clone() } else { self.fast_params[side].clone() };
        if visits_factor[side] != 1.0 {
            let visits = (f64::from(params.visits) * visits_factor[side]).round();
            params.visits = visits.clamp(1.0, MAX_VISITS as f64) as u32;
        }
        let visits = params.visits;
        search.set_params(params);
        search.start(visits);
        full
    }

    /// Plays `games` games with `evaluator`, `games-in-flight` at a time. Each finished game
    /// goes to `on_game`; `on_step` sees the totals after every batch and returns false to stop
    /// (games in flight are then dropped).
    pub fn play<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &E,
        games: u64,
        on_game: &mut dyn FnMut(FinishedGame),
        on_step: &mut dyn FnMut(&SelfPlayStats) -> bool,
    ) -> SelfPlayStats {
        self.play_games(evaluator, games, &mut InFlight::default(), false, on_game, on_step)
    }

    /// [`Self::play`] that goes on with the games `in_flight` (played so far by another net:
    /// their searches start again on `evaluator`), keeps `games-in-flight` games playing until
    /// `games` have finished, and leaves the unfinished ones in `in_flight` for the next call.
    ///
    /// Why: when every game of a call must finish in it, the batch shrinks as games end and
    /// the last long games are played a few at a time (a mean batch of 21 of 64 in the default
    /// run), and a small batch gains little from a second core: self-play evaluated 2 451 and
    /// 2 621 positions a second at 21 games on one and two threads, 3 503 and 5 523 at 64
    /// (`tafl bench mcts --games N --threads T`). Each game
    /// still finishes, so long games are not left out of the samples; a game that spans two
    /// calls is played on by the newer net, as KataGo's self-play does.
    pub fn play_on<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &E,
        games: u64,
        in_flight: &mut InFlight,
        on_game: &mut dyn FnMut(FinishedGame),
        on_step: &mut dyn FnMut(&SelfPlayStats) -> bool,
    ) -> SelfPlayStats {
        for slot in &mut in_flight.slots {
            let seed = self.rng.random();
            slot.search = Search::new(slot.search.game().clone(), self.full_params[0].clone(), seed);
            slot.full = self.begin_search(&mut slot.search, slot.visits_factor);
        }
        self.play_games(evaluator, games, in_flight, true, on_game, on_step)
    }

    /// The loop of [`Self::play`] and [`Self::play_on`]: new games start while fewer than
    /// `games-in-flight` play and, unless `keep_playing`, fewer than `games` have started.
    fn play_games<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &E,
        games: u64,
        in_flight: &mut InFlight,
        keep_playing: bool,
        on_game: &mut dyn FnMut(FinishedGame),
        on_step: &mut dyn FnMut(&SelfPlayStats) -> bool,
    ) -> SelfPlayStats {
        let started = std::time::Instant::now();
        let mut stats = SelfPlayStats::default();
        let mut new_games = 0u64;
        let wanted = self.config.games_in_flight as u64;
        if games == 0 {
            return stats;
        }
        let may_start =
            |playing: usize, new_games: u64| (playing as u64) < wanted && (keep_playing || new_games < games);
        let slots = &mut in_flight.slots;
        while may_start(slots.len(), new_games) {
            slots.push(self.new_slot(in_flight.next_game));
            (in_flight.next_game, new_games) = (in_flight.next_game + 1, new_games + 1);
        }
        let leaves = self.config.leaves_per_search.max(1);
        'play: while !slots.is_empty() {
            let n = step_searches(slots.iter_mut().map(|s| &mut s.search), evaluator, leaves);
            stats.evaluations += n as u64;
            stats.batches += u64::from(n > 0);
            let mut progressed = n > 0;
            let mut i = 0;
            while i < slots.len() {
                if !slots[i].search.done() {
                    i += 1;
                    continue;
                }
                progressed = true;
                stats.moves += 1;
                if let Some(finished) = self.make_move(&mut slots[i]) {
                    stats.add_game(&finished);
                    on_game(finished);
                    if stats.games >= games {
                        slots.swap_remove(i);
                        break 'play;
                    }
                    if may_start(slots.len() - 1, new_games) {
                        slots[i] = self.new_slot(in_flight.next_game);
                        (in_flight.next_game, new_games) = (in_flight.next_game + 1, new_games + 1);
                    } else {
                        slots.swap_remove(i);
                        continue;
                    }
                }
                i += 1;
            }
            stats.seconds = started.elapsed().as_secs_f64();
            if !on_step(&stats) || !progressed {
                slots.clear();
                break;
            }
        }
        stats.seconds = started.elapsed().as_secs_f64();
        stats
    }

    /// Records the finished search, plays its move; returns the game when it ended.
    fn make_move(&mut self, slot: &mut Slot) -> Option<FinishedGame> {
        let result = slot.search.result();
        let game = slot.search.game();
        let side = game.position().side_to_move();
        let size = game.position().size();
        if slot.full && !result.improved_policy.is_empty() {
            let mut sample =
                Sample::of_position(game.position(), game.repetitions(), game.plies_since_capture(), game.ply());
            let kept: Vec<(Move, f32)> = result.improved_policy.iter().copied().filter(|&(_, p)| p >= 1e-4).collect();
            let total: f32 = kept.iter().map(|&(_, p)| p).sum();
            if total > 0.0 {
                sample.policy = kept.iter().map(|&(m, p)| (tafl_nn::move_index(m, size) as u16, p / total)).collect();
                sample.root_value = result.root_value;
                slot.samples.push(sample);
                slot.surprise.push(surprise(&kept, total, &slot.search.root_priors()));
            }
            // Resignation looks at full searches only: cheap ones are too noisy.
            let low = &mut slot.low[side_index(side)];
            *low = if result.best_value < self.config.resign_threshold { *low + 1 } else { 0 };
            if *low >= self.config.resign_consecutive.max(1) && self.config.resign_threshold > -1.0 {
                if slot.playout {
                    slot.would_resign.get_or_insert(side);
                } else {
                    slot.resigned = Some(side);
                    return Some(self.finish(slot));
                }
            }
        }
        let ply = game.ply();
        let mv = if ply < self.config.temperature_plies as usize
            && self.config.temperature > 0.0
            && result.proof.is_none()
        {
            self.sample_move(&result.improved_policy).or(result.best_move)
        } else {
            result.best_move
        };
        let Some(mv) = mv else { return Some(self.finish(slot)) };
        if slot.search.advance(mv).is_err() {
            return Some(self.finish(slot));
        }
        // Ended by the net's move, or the opponent failed, or ended by the opponent's reply.
        if self.game_ends(slot) || Self::opponent_moves(slot) || self.game_ends(slot) {
            return Some(self.finish(slot));
        }
        slot.full = self.begin_search(&mut slot.search, slot.visits_factor);
        None
    }

    fn game_ends(&self, slot: &Slot) -> bool {
        let game = slot.search.game();
        game.outcome().is_over() || game.ply() >= self.config.max_plies
    }

    fn sample_move(&mut self, policy: &[(Move, f32)]) -> Option<Move> {
        let power = 1.0 / f64::from(self.config.temperature);
        let weights: Vec<f64> = policy.iter().map(|&(_, p)| f64::from(p).powf(power)).collect();
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return None;
        }
        let mut target = self.rng.random::<f64>() * total;
        for (&(m, _), w) in policy.iter().zip(&weights) {
            if target < *w {
                return Some(m);
            }
            target -= w;
        }
        policy.last().map(|&(m, _)| m)
    }

    fn finish(&mut self, slot: &mut Slot) -> FinishedGame {
        let opponent = slot.opponent.as_ref().map(|(against, _)| *against);
        self.release_opponent(slot);
        let game = slot.search.game();
        let (winner, reason) = if slot.opponent_failed {
            slot.samples.clear();
            (None, "opponent-failed".to_string())
        } else if let Some(loser) = slot.resigned {
            (Some(loser.opponent()), "resigned".to_string())
        } else {
            match game.outcome() {
                Outcome::Decided { winner, reason } => (Some(winner), reason.name().to_string()),
                Outcome::Draw { reason } => (None, reason.name().to_string()),
                Outcome::Ongoing => (None, "max-plies".to_string()),
            }
        };
        let mut samples = std::mem::take(&mut slot.samples);
        let weights = surprise_weights(&std::mem::take(&mut slot.surprise), self.config.policy_surprise_weight);
        for (s, w) in samples.iter_mut().zip(weights) {
            s.set_outcome(winner, game.position());
            s.weight *= w;
        }
        let false_resignation = slot.would_resign.map(|side| winner != Some(side.opponent()));
        FinishedGame {
            samples,
            record: archive_line(game, winner),
            plies: game.ply(),
            winner,
            reason,
            false_resignation,
            opponent,
        }
    }
}

/// How much a search learnt at the root: the KL divergence of its target (`kept`, summing to
/// `total`) from the net's policy there (`priors`, the root's moves in the same order or a
/// superset of them).
fn surprise(kept: &[(Move, f32)], total: f32, priors: &[(Move, f32)]) -> f32 {
    let prior = |m: Move| priors.iter().find(|&&(p, _)| p == m).map_or(0.0, |&(_, p)| p);
    let kl: f32 = kept
        .iter()
        .map(|&(m, p)| {
            let target = p / total;
            target * (target / prior(m).max(1e-6)).ln()
        })
        .sum();
    // A target of rounded probabilities can come out a hair below zero.
    kl.max(0.0)
}

/// Sample weights of one game under policy-surprise weighting: `share` of the game's total
/// weight (one per sample) spread in proportion to `surprise`, the rest evenly. With no
/// surprise at all every sample keeps weight 1.
fn surprise_weights(surprise: &[f32], share: f64) -> Vec<f32> {
    let total: f64 = surprise.iter().map(|&s| f64::from(s)).sum();
    if share == 0.0 || total <= 0.0 || !total.is_finite() {
        return vec![1.0; surprise.len()];
    }
    let n = surprise.len() as f64;
    surprise.iter().map(|&s| ((1.0 - share) + share * n * f64::from(s) / total) as f32).collect()
}

/// A game as an archive line: plies with their captures, capture counts per side, the result
/// (`Black` attackers won, `White` defenders won, `Draw`).
#[must_use]
pub fn archive_line(game: &Game, winner: Option<Side>) -> String {
    let mut replay = Game::from_position(*game.start());
    let mut plies = Vec::new();
    let mut captures = [0usize; 2];
    for &m in game.moves() {
        let mover = replay.position().side_to_move();
        let played = replay.play_unchecked(m);
        let mut caps = played.captured.to_vec();
        caps.sort();
        captures[side_index(mover)] += caps.len();
        plies.push(ply_text(m, &caps));
    }
    write_archive_line(&plies, false, captures, archive_result(Some(winner)))
}

#[cfg(test)]
mod tests;
