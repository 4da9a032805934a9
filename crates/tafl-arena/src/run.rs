//! Running matches and tournaments: paired games in parallel, with an optional SPRT that
//! stops a two-player match early.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tafl_rules::{Side, Variant};
use tafl_search::Limits;

use crate::game::{PlayedGame, play_game};
use crate::opening::Opening;
use crate::spec::{PlayerFactory, PlayerSpec, SpecError};
use crate::stats::{EloEstimate, Pentanomial, Sprt, SprtDecision, SprtStatus, Wdl};

/// How to run a match or tournament.
#[derive(Clone, Debug)]
pub struct ArenaConfig {
    /// The variant.
    pub variant: &'static Variant,
    /// Openings; pair `p` of every pairing plays opening `p % len`.
    pub openings: Vec<Opening>,
    /// Game pairs per pairing (each pair: one game with each player attacking).
    pub pairs: usize,
    /// Games longer than this many plies (the opening included) are draws.
    pub max_plies: usize,
    /// Games played at once.
    pub threads: usize,
    /// Seed that players with randomness mix with the game number.
    pub seed: u64,
    /// A sequential test for two-player matches: player 0 (A) against player 1 (B).
    pub sprt: Option<Sprt>,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// A player spec is bad or the player could not be built.
    /// (`problem` is not marked as the error's source: the message already holds it, and
    /// error chains would print it twice.)
    #[error("player `{player}`: {problem}")]
    Player {
        /// The spec.
        player: String,
        /// What went wrong.
        problem: SpecError,
    },
    /// Fewer than two players.
    #[error("need at least two players, got {0}")]
    TooFewPlayers(usize),
    /// No openings to play from.
    #[error("no openings")]
    NoOpenings,
    /// An SPRT with other than two players.
    #[error("an SPRT needs exactly two players, got {0}")]
    SprtPlayers(usize),
    /// The games' threads could not start.
    #[error("thread pool: {0}")]
    ThreadPool(#[from] rayon::ThreadPoolBuildError),
    /// A result file could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A plot could not be drawn.
    #[error("plot {}: {message}", path.display())]
    Plot {
        /// The file.
        path: PathBuf,
        /// What the plotting library said.
        message: String,
    },
}

impl ArenaError {
    /// Whether the error is the caller's input (the players, the openings, the options) rather
    /// than the machine's.
    #[must_use]
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Self::Player { .. } | Self::TooFewPlayers(_) | Self::NoOpenings | Self::SprtPlayers(_))
    }

    /// A [`Self::Write`] of `path`.
    pub(crate) fn write(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Write { path: path.to_path_buf(), source }
    }
}

/// One finished game of a run.
#[derive(Clone, Debug)]
pub struct GameResult {
    /// Game number, from 0, in schedule order.
    pub index: usize,
    /// The pair it belongs to (its partner has the sides swapped).
    pub pair: usize,
    /// The opening's index.
    pub opening: usize,
    /// Index of the player who had the attackers.
    pub attackers: usize,
    /// Index of the player who had the defenders.
    pub defenders: usize,
    /// The game.
    pub played: PlayedGame,
}

impl GameResult {
    /// The score of player `p` (1, ½ or 0), if it played.
    #[must_use]
    pub fn score_of(&self, p: usize) -> Option<f64> {
        let side = if p == self.attackers {
            Side::Attackers
        } else if p == self.defenders {
            Side::Defenders
        } else {
            return None;
        };
        Some(match self.played.winner {
            Some(w) if w == side => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        })
    }
}

/// Results between two players, kept per side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PairingStats {
    /// The first player.
    pub a: usize,
    /// The second player.
    pub b: usize,
    /// `a`'s results with the attackers.
    pub a_attacking: Wdl,
    /// `a`'s results with the defenders.
    pub a_defending: Wdl,
    /// `a`'s results per pair of games.
    pub pairs: Pentanomial,
}

impl PairingStats {
    /// `a`'s results over both sides.
    #[must_use]
    pub fn total(&self) -> Wdl {
        self.a_attacking.plus(self.a_defending)
    }
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct ArenaResults {
    /// The players, by index.
    pub players: Vec<PlayerSpec>,
    /// The openings used.
    pub openings: Vec<Opening>,
    /// Games in schedule order.
    pub games: Vec<GameResult>,
    /// One entry per pairing, `a < b`.
    pub pairings: Vec<PairingStats>,
    /// Games the schedule had.
    pub games_planned: usize,
    /// The SPRT and where it ended, for matches run with one.
    pub sprt: Option<(Sprt, SprtStatus)>,
    /// The run stopped before the schedule ended (SPRT decision).
    pub stopped_early: bool,
    /// The config's move cap.
    pub max_plies: usize,
    /// The variant's name.
    pub variant: String,
}

/// Progress after each pair of games.
#[derive(Clone, Debug)]
pub struct Progress {
    /// The games of the pair that just finished, so that callers can keep them at once.
    pub games: Vec<GameResult>,
    /// Games finished.
    pub done: usize,
    /// Games scheduled.
    pub total: usize,
    /// A one-line standing: the score and Elo of A in a match, the leader in a tournament.
    pub message: String,
}

struct State {
    games: Vec<GameResult>,
    pairings: Vec<PairingStats>,
    sprt: Option<SprtStatus>,
    error: Option<ArenaError>,
}

impl State {
    /// Adds the two games of a pair of pairing `k` to the results and the statistics; true when
    /// the SPRT, if any, has decided.
    fn record_pair(&mut self, k: usize, results: &[GameResult], sprt: Option<&Sprt>) -> bool {
        let stats = &mut self.pairings[k];
        let mut pair_points = 0.0;
        for r in results {
            let score = r.score_of(stats.a).unwrap_or(0.5);
            pair_points += score;
            if r.attackers == stats.a { stats.a_attacking.add(score) } else { stats.a_defending.add(score) }
        }
        stats.pairs.add(pair_points);
        let pairs = stats.pairs;
        self.games.extend(results.iter().cloned());
        let Some(sprt) = sprt else { return false };
        let status = next_sprt_status(self.sprt, sprt, &pairs);
        self.sprt = Some(status);
        status.decision != SprtDecision::Continue
    }
}

/// A two-player match: `a` (player 0) against `b` (player 1), `config.pairs` pairs of games.
pub fn run_match(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &ArenaConfig,
    factory: &dyn PlayerFactory,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<ArenaResults, ArenaError> {
    run_tournament(&[a.clone(), b.clone()], config, factory, progress)
}

/// A round robin: every two players meet for `config.pairs` pairs of games. With two players
/// and `config.sprt`, the run stops as soon as the test decides.
pub fn run_tournament(
    players: &[PlayerSpec],
    config: &ArenaConfig,
    factory: &dyn PlayerFactory,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<ArenaResults, ArenaError> {
    let limits = check(players, config, factory)?;
    let mut pairings = Vec::new();
    for a in 0..players.len() {
        for b in a + 1..players.len() {
            pairings.push(PairingStats { a, b, ..PairingStats::default() });
        }
    }
    // Pair p of every pairing before pair p+1 of any: a stopped run stays balanced.
    let jobs: Vec<(usize, usize)> = (0..config.pairs).flat_map(|p| (0..pairings.len()).map(move |k| (p, k))).collect();
    let total = jobs.len() * 2;
    let state = Mutex::new(State { games: Vec::with_capacity(total), pairings, sprt: None, error: None });
    let stop = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(config.threads.max(1)).build()?;
    let names: Vec<String> = players.iter().map(|p| p.name().to_string()).collect();
    // Workers take jobs in schedule order, so that a run stopped by the SPRT is a prefix of it.
    let next = AtomicUsize::new(0);
    let work = || loop {
        let job = next.fetch_add(1, Ordering::Relaxed);
        if job >= jobs.len() || stop.load(Ordering::Relaxed) {
            return;
        }
        let (pair, k) = jobs[job];
        let (a, b) = {
            let s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            (s.pairings[k].a, s.pairings[k].b)
        };
        let opening_index = pair % config.openings.len();
        let opening = &config.openings[opening_index];
        let mut results = Vec::with_capacity(2);
        for (half, (att, def)) in [(a, b), (b, a)].into_iter().enumerate() {
            let index = job * 2 + half;
            let seed = config.seed ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
            let built = factory
                .build(&players[att], seed)
                .map_err(|e| (att, e))
                .and_then(|x| factory.build(&players[def], seed ^ 1).map(|y| (x, y)).map_err(|e| (def, e)));
            let (mut attacker, mut defender) = match built {
                Ok(pair) => pair,
                Err((failed, source)) => {
                    let who = players[failed].name().to_string();
                    let mut s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    s.error.get_or_insert(ArenaError::Player { player: who, problem: source });
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
            };
            let played =
                play_game(opening, attacker.as_mut(), &limits[att], defender.as_mut(), &limits[def], config.max_plies);
            results.push(GameResult {
                index,
                pair: job,
                opening: opening_index,
                attackers: att,
                defenders: def,
                played,
            });
        }
        let mut s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if s.record_pair(k, &results, config.sprt.as_ref()) {
            stop.store(true, Ordering::Relaxed);
        }
        let message = standing(&names, &s.pairings, s.sprt.as_ref());
        progress(&Progress { games: results, done: s.games.len(), total, message });
    };
    pool.scope(|scope| {
        for _ in 0..config.threads.max(1) {
            scope.spawn(|_| work());
        }
    });
    let mut s = state.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(e) = s.error.take() {
        return Err(e);
    }
    s.games.sort_by_key(|g| g.index);
    let stopped_early = s.games.len() < total;
    Ok(ArenaResults {
        players: players.to_vec(),
        openings: config.openings.clone(),
        games: s.games,
        pairings: s.pairings,
        games_planned: total,
        sprt: config.sprt.zip(s.sprt),
        stopped_early,
        max_plies: config.max_plies,
        variant: config.variant.name().to_string(),
    })
}

/// Checks the match's settings and builds every player once before the first game, so that a
/// typo fails at once; returns each player's search limits.
fn check(players: &[PlayerSpec], config: &ArenaConfig, factory: &dyn PlayerFactory) -> Result<Vec<Limits>, ArenaError> {
    if players.len() < 2 {
        return Err(ArenaError::TooFewPlayers(players.len()));
    }
    if config.openings.is_empty() {
        return Err(ArenaError::NoOpenings);
    }
    if config.sprt.is_some() && players.len() != 2 {
        return Err(ArenaError::SprtPlayers(players.len()));
    }
    let mut limits = Vec::with_capacity(players.len());
    for p in players {
        let player_error = |problem| ArenaError::Player { player: p.name().to_string(), problem };
        limits.push(p.limits());
        drop(factory.build(p, config.seed).map_err(player_error)?);
    }
    Ok(limits)
}

/// The SPRT status after a pair finished. A decision is final: pairs that were in flight when
/// the test decided still count in the results, but the status (LLR and decision) stays the one
/// that stopped the match, so a stopped match never reports `continue`.
fn next_sprt_status(previous: Option<SprtStatus>, sprt: &Sprt, pairs: &Pentanomial) -> SprtStatus {
    match previous {
        Some(decided) if decided.decision != SprtDecision::Continue => decided,
        _ => sprt.status_pentanomial(pairs),
    }
}

/// A one-line standing for progress bars.
fn standing(names: &[String], pairings: &[PairingStats], sprt: Option<&SprtStatus>) -> String {
    if let [p] = pairings {
        let total = p.total();
        let elo = EloEstimate::pentanomial(&p.pairs);
        // A 100% (0%) score has no finite Elo: show `+inf` (`-inf`) alone, not `+inf±inf`.
        let elo_text = if elo.elo.is_finite() {
            format!("{:+.0}±{:.0}", elo.elo, elo.margin())
        } else {
            format!("{:+}", elo.elo)
        };
        let mut s = format!("{} {total} ({:.1}%) Elo {elo_text}", names[p.a], 100.0 * total.score());
        if let Some(st) = sprt {
            s += &format!(" LLR {:.2} [{:.2}, {:.2}]", st.llr, st.lower, st.upper);
        }
        s
    } else {
        let mut points = vec![(0.0, 0u64); names.len()];
        for p in pairings {
            let t = p.total();
            points[p.a].0 += t.points();
            points[p.a].1 += t.games();
            points[p.b].0 += t.flipped().points();
            points[p.b].1 += t.games();
        }
        let best = (0..names.len()).max_by(|&x, &y| {
            let score = |i: usize| if points[i].1 == 0 { 0.0 } else { points[i].0 / points[i].1 as f64 };
            score(x).total_cmp(&score(y))
        });
        best.map_or_else(String::new, |i| format!("leader {} {:.1}/{}", names[i], points[i].0, points[i].1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sprt_decision_is_sticky() {
        let sprt: Sprt = "elo0=0,elo1=50".parse().unwrap();
        let mut pairs = Pentanomial([0, 0, 0, 0, 12]);
        let decided = next_sprt_status(None, &sprt, &pairs);
        assert_eq!(decided.decision, SprtDecision::AcceptH1);
        // Pairs in flight when it decided come back with the opposite result: the LLR alone
        // would now say `continue`, but the decision stands.
        for _ in 0..12 {
            pairs.add(0.0);
        }
        assert_eq!(sprt.status_pentanomial(&pairs).decision, SprtDecision::Continue);
        let after = next_sprt_status(Some(decided), &sprt, &pairs);
        assert_eq!(after, decided);
        // Undecided statuses are recomputed.
        let undecided = next_sprt_status(None, &sprt, &Pentanomial([0, 0, 1, 0, 0]));
        assert_eq!(undecided.decision, SprtDecision::Continue);
        assert_eq!(
            next_sprt_status(Some(undecided), &sprt, &Pentanomial([0, 0, 0, 0, 12])).decision,
            SprtDecision::AcceptH1
        );
    }

    #[test]
    fn the_standing_shows_an_infinite_elo_without_nan() {
        let names = ["a".to_string(), "b".to_string()];
        let mut p = PairingStats { a: 0, b: 1, ..PairingStats::default() };
        for _ in 0..3 {
            p.a_attacking.add(1.0);
            p.a_defending.add(1.0);
            p.pairs.add(2.0);
        }
        let line = standing(&names, &[p], None);
        assert!(line.contains("Elo +inf") && !line.contains("NaN"), "{line}");
    }
}
