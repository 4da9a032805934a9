//! The alpha-beta baseline: negamax with iterative deepening, principal-variation search, late
//! move reductions, a Zobrist transposition table, move ordering (table move, captures, killers,
//! history) and a hand-written evaluation ([`evaluate`]).
//!
//! The search plays on a [`Game`] (play and undo), so repetition, exit forts, encirclement and
//! "no legal move" are scored exactly. Won and lost positions score `±(WIN - ply)`, so the
//! search prefers the fastest win and the slowest loss. Two one-move tactics are checked exactly
//! at every node, before anything else: with the defenders to move, a king that sees a corner
//! has won; with the attackers to move, an attacker move that captures the king has won. At the
//! horizon the search extends by one ply when the king sees an escape square with the attackers
//! to move, or when the king can be captured next move with the defenders to move, so that the
//! evaluation is never asked about a position whose value hangs on one forced move.

mod eval;
mod ordering;
mod tt;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tafl_rules::{Game, Move, Outcome, Side};

pub use eval::{EvalWeights, evaluate, evaluate_with};
use eval::{Frame, Score, Snapshot};
use ordering::{Heuristics, MAX_PLY, Picker};
use tt::{Bound, Table};

use crate::clock::{Clock, WallClock};
use crate::player::{Limits, Line, MAX_LINES, MoveChoice, Player, PlayerError, Stop};

/// The score of a win at the root; a win `n` plies away scores `WIN - n`.
pub const WIN: i32 = 30_000;
/// Scores beyond this are wins or losses found by the search, not evaluations.
const WIN_BOUND: i32 = WIN - 1_000;
const INFINITY: i32 = WIN + 1;
/// The evaluation never claims more than this, so it never looks like a found win.
const EVAL_CAP: i32 = 20_000;
/// The depth searched when the limits name none of depth, nodes and time.
pub const DEFAULT_DEPTH: u32 = 4;
/// The deepest iteration: the killer and PV tables have room for it plus extensions, and each
/// ply takes about 15 KB of stack (move list, ordering, snapshot).
const MAX_DEPTH: u32 = 32;
/// Default size of the transposition table.
pub const DEFAULT_TT_MIB: usize = 16;
/// Scale of the reported value: `tanh(score / VALUE_SCALE)`.
const VALUE_SCALE: f32 = 400.0;
/// A new iteration starts only within this share of the time limit: the next one would
/// rarely finish.
const SOFT_TIME: f32 = 0.5;
/// How often (in nodes) the clock is read.
const CLOCK_EVERY: u64 = 64;

/// The alpha-beta player.
///
/// Its own [`Limits`] (depth, nodes, time) apply unless the limits passed to
/// [`Player::choose`] set the same field. With none of depth, nodes and time set anywhere, it
/// searches [`DEFAULT_DEPTH`] plies. The transposition table, killers and history live as long
/// as the player and are cleared by [`Player::new_game`]; a fresh player (or one after
/// `new_game`) given the same game and a depth or node limit always returns the same choice.
pub struct AlphaBeta {
    limits: Limits,
    tt_bytes: usize,
    tt: Option<Table>,
    heuristics: Option<Heuristics>,
    frame: Option<Frame>,
    weights: EvalWeights,
    clock: Arc<dyn Clock>,
}

/// Why a parameter string for [`AlphaBeta::from_params`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// A `key=value` pair with a key that is not known.
    #[error("unknown alphabeta parameter `{0}` (known: depth, nodes, time, tt)")]
    UnknownKey(String),
    /// A value that does not parse.
    #[error("bad value `{value}` for alphabeta parameter `{key}`")]
    BadValue {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
}

impl AlphaBeta {
    /// A player with default limits (fields left `None` fall back as described on the type).
    #[must_use]
    pub fn new(limits: Limits) -> AlphaBeta {
        AlphaBeta {
            limits,
            tt_bytes: DEFAULT_TT_MIB << 20,
            tt: None,
            heuristics: None,
            frame: None,
            weights: EvalWeights::default(),
            clock: Arc::new(WallClock),
        }
    }

    /// A player that searches `depth` plies.
    #[must_use]
    pub fn with_depth(depth: u32) -> AlphaBeta {
        AlphaBeta::new(Limits { depth: Some(depth), ..Limits::default() })
    }

    /// A player that thinks for `time` per move.
    #[must_use]
    pub fn with_time(time: Duration) -> AlphaBeta {
        AlphaBeta::new(Limits { time: Some(time), ..Limits::default() })
    }

    /// Sets the transposition table size in MiB (allocated on the first move).
    #[must_use]
    pub fn tt_mib(mut self, mib: usize) -> AlphaBeta {
        self.tt_bytes = mib.max(1) << 20;
        self.tt = None;
        self
    }

    /// Sets the evaluation's weights (for tuning; the defaults are the hand-set values).
    #[must_use]
    pub fn eval_weights(mut self, weights: EvalWeights) -> AlphaBeta {
        self.weights = weights;
        self.frame = None;
        self
    }

    /// Reads the time from `clock` (tests drive a [`crate::ManualClock`]; the default is the
    /// wall clock).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> AlphaBeta {
        self.clock = clock;
        self
    }

    /// The player's own limits.
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.limits.clone()
    }

    /// A player from comma-separated `key=value` parameters, as in the spec
    /// `alphabeta:depth=3,time=1s`: `depth` (plies), `nodes`, `time` (`1.5s`, `200ms`, or plain
    /// seconds) and `tt` (MiB). An empty string gives the defaults.
    pub fn from_params(text: &str) -> Result<AlphaBeta, ParamError> {
        let mut limits = Limits::default();
        let mut tt = DEFAULT_TT_MIB;
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let bad = || ParamError::BadValue { key: key.to_owned(), value: value.to_owned() };
            match key {
                "depth" => limits.depth = Some(value.parse().map_err(|_| bad())?),
                "nodes" => limits.nodes = Some(value.parse().map_err(|_| bad())?),
                "time" => limits.time = Some(parse_duration(value).ok_or_else(bad)?),
                "tt" => tt = value.parse().map_err(|_| bad())?,
                _ => return Err(ParamError::UnknownKey(key.to_owned())),
            }
        }
        Ok(AlphaBeta::new(limits).tt_mib(tt))
    }
}

fn parse_duration(text: &str) -> Option<Duration> {
    let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 1e-3)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1.0)
    } else {
        (text, 1.0)
    };
    let v: f64 = number.parse().ok()?;
    // `try_`: a finite but huge number of seconds does not fit a Duration.
    Duration::try_from_secs_f64(v * scale).ok()
}

fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) && ms > 0 { format!("{}s", ms / 1000) } else { format!("{ms}ms") }
}

impl AlphaBeta {
    /// Whether the side to move in `game` wins by force within `depth` plies (and the search's
    /// extensions): a proof, not a judgement. The MCTS guard asks it of the position after each
    /// move it considers ([`crate::MctsPlayer::with_guard`]). A game already decided answers
    /// by its winner.
    pub fn wins_by_force(&mut self, game: &Game, depth: u32) -> bool {
        self.wins_by_force_within(game, &Limits { depth: Some(depth), ..Limits::default() })
    }

    /// [`AlphaBeta::wins_by_force`] within `limits` (their depth, and a time or a stop flag):
    /// a search cut short by them proves nothing and answers false.
    pub fn wins_by_force_within(&mut self, game: &Game, limits: &Limits) -> bool {
        match game.outcome() {
            Outcome::Ongoing => {}
            Outcome::Decided { winner, .. } => return winner == game.position().side_to_move(),
            Outcome::Draw { .. } => return false,
        }
        self.search(game, limits).is_ok_and(|(_, score)| score.is_some_and(|s| s > WIN_BOUND))
    }

    /// The move and, when an iteration finished, the score of the side to move.
    fn search(&mut self, game: &Game, limits: &Limits) -> Result<(MoveChoice, Option<Score>), PlayerError> {
        let start = self.clock.now();
        let moves = game.legal_moves();
        if moves.is_empty() {
            return Err(PlayerError::NoMoves);
        }
        let mut depth = limits.depth.or(self.limits.depth);
        let nodes = limits.nodes.or(self.limits.nodes);
        let time = limits.time.or(self.limits.time);
        if depth.is_none() && nodes.is_none() && time.is_none() {
            depth = Some(DEFAULT_DEPTH);
        }
        let tt_bytes = self.tt_bytes;
        let tt = self.tt.get_or_insert_with(|| Table::new(tt_bytes));
        tt.next_age();
        let heuristics = self.heuristics.get_or_insert_with(Heuristics::new);
        if self
            .frame
            .as_ref()
            .is_none_or(|f| !std::ptr::eq(f.variant(), game.variant()) || *f.weights() != self.weights)
        {
            self.frame = Some(Frame::new(game.variant(), self.weights.clone()));
        }
        let frame = self.frame.as_ref().expect("just set");
        heuristics.age();
        let mut search = Search {
            clock: self.clock.as_ref(),
            game: game.clone(),
            frame,
            tt,
            heuristics,
            nodes: 0,
            node_limit: nodes.unwrap_or(u64::MAX),
            deadline: time.map(|t| start + t.saturating_sub(time_margin(t))),
            stop: &limits.stop,
            aborted: false,
            pv: Box::new([[Move::default(); MAX_PLY]; MAX_PLY]),
            pv_len: [0; MAX_PLY],
            extension_cap: 0,
            root_best: 0,
            excluded: Vec::new(),
        };
        let lines = limits.lines.map_or(0, |n| n.clamp(1, MAX_LINES.min(moves.len())));
        Ok(search.iterate(
            depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH),
            time.map(|t| start + t.mul_f32(SOFT_TIME)),
            &moves,
            lines,
        ))
    }
}

impl Player for AlphaBeta {
    fn name(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.limits.depth {
            parts.push(format!("depth={d}"));
        }
        if let Some(n) = self.limits.nodes {
            parts.push(format!("nodes={n}"));
        }
        if let Some(t) = self.limits.time {
            parts.push(format!("time={}", format_duration(t)));
        }
        if parts.is_empty() {
            parts.push(format!("depth={DEFAULT_DEPTH}"));
        }
        format!("alphabeta:{}", parts.join(","))
    }

    fn choose(&mut self, game: &Game, limits: &Limits) -> Result<MoveChoice, PlayerError> {
        self.search(game, limits).map(|(choice, _)| choice)
    }

    fn new_game(&mut self) {
        if let Some(tt) = &mut self.tt {
            tt.clear();
        }
        if let Some(h) = &mut self.heuristics {
            h.clear();
        }
    }
}

/// A score as a value in [-1, 1] for the side to move.
fn score_value(score: Score) -> f32 {
    (score as f32 / VALUE_SCALE).tanh()
}

/// What is kept back from a time limit for returning the move.
fn time_margin(t: Duration) -> Duration {
    (t / 20).clamp(Duration::from_micros(200), Duration::from_millis(30))
}

/// Stores mate scores relative to the node, so that they stay right at another ply.
fn to_tt(score: Score, ply: usize) -> Score {
    if score > WIN_BOUND {
        score + ply as Score
    } else if score < -WIN_BOUND {
        score - ply as Score
    } else {
        score
    }
}

fn from_tt(score: Score, ply: usize) -> Score {
    if score > WIN_BOUND {
        score - ply as Score
    } else if score < -WIN_BOUND {
        score + ply as Score
    } else {
        score
    }
}

/// One call's search state.
struct Search<'a> {
    clock: &'a dyn Clock,
    game: Game,
    frame: &'a Frame,
    tt: &'a mut Table,
    heuristics: &'a mut Heuristics,
    nodes: u64,
    node_limit: u64,
    /// Stop searching at once after this.
    deadline: Option<Instant>,
    /// Or once this is set.
    stop: &'a Stop,
    aborted: bool,
    /// Triangular principal-variation table.
    pv: Box<[[Move; MAX_PLY]; MAX_PLY]>,
    pv_len: [usize; MAX_PLY],
    /// Horizon extensions are allowed below this ply.
    extension_cap: usize,
    /// The best score at the root so far in this iteration.
    root_best: Score,
    /// Root moves left out: the lines already found at this depth (MultiPV).
    excluded: Vec<Move>,
}

impl Search<'_> {
    /// Iterative deepening up to `max_depth`; a new iteration starts only before `soft_deadline`.
    /// With `lines` > 0, each iteration also searches the next best root moves, each with the
    /// ones before it left out, and the lines of the last iteration that found them all are
    /// reported.
    fn iterate(
        &mut self,
        max_depth: u32,
        soft_deadline: Option<Instant>,
        root_moves: &[Move],
        lines: usize,
    ) -> (MoveChoice, Option<Score>) {
        let mut best: Option<(Score, Vec<Move>, u32)> = None;
        // The score of the last iteration that finished: an aborted one proves nothing.
        let mut finished: Option<Score> = None;
        let mut reported: Vec<Line> = Vec::new();
        for depth in 1..=max_depth {
            // Each extension searches every move of its side, so a path gets at most two.
            self.extension_cap = (depth as usize + 2).min(MAX_PLY - 2);
            self.excluded.clear();
            let score = self.negamax(depth as i32, 0, -INFINITY, INFINITY);
            // An aborted iteration still leaves the best of the root moves it finished: the
            // first one searched is the last iteration's choice, searched deeper, and any move
            // that beat it did so at the new depth. The depth reported is the last completed.
            let pv: Vec<Move> = self.pv[0][..self.pv_len[0]].to_vec();
            if !pv.is_empty() {
                if self.aborted {
                    best = Some((self.root_best, pv, depth - 1));
                } else {
                    if lines > 0 {
                        let found = self.more_lines(depth, score, pv.clone(), lines);
                        // A depth cut short leaves the last full set; the first depth, what it found.
                        if found.len() == lines || reported.is_empty() {
                            reported = found;
                        }
                    }
                    best = Some((score, pv, depth));
                    finished = Some(score);
                }
            }
            let decided = score.abs() > WIN_BOUND;
            let out_of_time = soft_deadline.is_some_and(|t| self.clock.now() >= t) || self.stop.is_set();
            if self.aborted || decided || out_of_time || self.nodes >= self.node_limit {
                break;
            }
        }
        match best {
            Some((score, pv, depth)) => {
                let value = Some(score_value(score));
                let choice = MoveChoice { mv: pv[0], value, pv, depth, nodes: self.nodes, lines: Vec::new() };
                (choice.with_lines(reported), finished)
            }
            // Aborted inside the first iteration before any move was scored.
            None => (MoveChoice { nodes: self.nodes, ..MoveChoice::just(root_moves[0]) }, None),
        }
    }

    /// The best line at `depth` (already searched: `score`, `pv`) and the next best ones up to
    /// `lines` in all, each searched with the root moves of the lines before it left out; stops
    /// early when the search is cut short.
    fn more_lines(&mut self, depth: u32, score: Score, pv: Vec<Move>, lines: usize) -> Vec<Line> {
        let mut found = vec![Line { value: Some(score_value(score)), pv, nodes: self.nodes }];
        while found.len() < lines {
            self.excluded = found.iter().map(|line| line.pv[0]).collect();
            let score = self.negamax(depth as i32, 0, -INFINITY, INFINITY);
            if self.aborted || self.pv_len[0] == 0 {
                break;
            }
            let pv = self.pv[0][..self.pv_len[0]].to_vec();
            found.push(Line { value: Some(score_value(score)), pv, nodes: self.nodes });
        }
        self.excluded.clear();
        found
    }

    fn check_limits(&mut self) {
        if self.nodes >= self.node_limit {
            self.aborted = true;
        }
        if self.nodes.is_multiple_of(CLOCK_EVERY)
            && (self.stop.is_set() || self.deadline.is_some_and(|d| self.clock.now() >= d))
        {
            self.aborted = true;
        }
    }

    fn leaf_win(&mut self, ply: usize, mv: Move) -> Score {
        self.pv[ply][ply] = mv;
        self.pv_len[ply] = ply + 1;
        WIN - (ply as Score + 1)
    }

    /// One node of the search: the game's end and a won next move, mate-distance pruning, a
    /// ply more at the horizon when the king is about to escape or be taken, the transposition
    /// table, then a principal variation search with late-move reductions. Over 100 lines on
    /// purpose: the steps share the node's bounds and position, and this is the inner loop.
    fn negamax(&mut self, mut depth: i32, ply: usize, mut alpha: Score, mut beta: Score) -> Score {
        self.nodes += 1;
        self.pv_len[ply] = ply;
        if ply > 0 {
            self.check_limits();
            if self.aborted {
                return 0;
            }
        }
        let position = *self.game.position();
        let side = position.side_to_move();
        match self.game.outcome() {
            Outcome::Ongoing => {}
            Outcome::Decided { winner, .. } => {
                return if winner == side { WIN - ply as Score } else { -(WIN - ply as Score) };
            }
            Outcome::Draw { .. } => return 0,
        }
        let snap = Snapshot::new(self.frame, &position);
        match side {
            Side::Defenders => {
                if let Some(m) = snap.king_escape_move().filter(|&m| !self.left_out(ply, m)) {
                    return self.leaf_win(ply, m);
                }
            }
            Side::Attackers => {
                if let Some(m) = snap.king_capture_move().filter(|&m| !self.left_out(ply, m)) {
                    return self.leaf_win(ply, m);
                }
            }
        }
        if ply >= MAX_PLY - 2 {
            return snap.evaluate().clamp(-EVAL_CAP, EVAL_CAP);
        }
        // Mate-distance pruning: no line from here beats a win next move.
        alpha = alpha.max(-(WIN - ply as Score));
        beta = beta.min(WIN - ply as Score - 1);
        if alpha >= beta {
            return alpha;
        }
        if depth <= 0 {
            let forced = match side {
                Side::Attackers => snap.king_routes() > 0,
                Side::Defenders => snap.king_capture_threat(),
            };
            if forced && ply < self.extension_cap {
                depth = 1;
            } else {
                return snap.evaluate().clamp(-EVAL_CAP, EVAL_CAP);
            }
        }

        let pv_node = beta - alpha > 1;
        let key = position.hash();
        let entry = self.tt.probe(key);
        // A position met before on this path may be judged differently (repetition), so its
        // stored score is not trusted.
        if let Some(e) = entry
            && ply > 0
            && !pv_node
            && e.depth as i32 >= depth
            && self.game.repetitions() <= 1
        {
            let s = from_tt(e.score as Score, ply);
            let cut = match e.bound {
                Bound::Exact => true,
                Bound::Lower => s >= beta,
                Bound::Upper => s <= alpha,
                Bound::None => false,
            };
            if cut {
                return s;
            }
        }

        let moves = position.legal_moves();
        let mut picker = Picker::new(&moves, &snap, self.heuristics, side, entry.and_then(|e| e.best_move()), ply);
        let original_alpha = alpha;
        let mut best_score = -INFINITY;
        let mut best_move = None;
        let mut index = 0;
        while let Some(s) = picker.next() {
            let m = s.mv;
            if self.left_out(ply, m) {
                continue;
            }
            self.game.play_unchecked(m);
            let quiet = !s.capture && !s.killer && !s.king;
            let reduction = if depth >= 3 && index >= 3 && quiet && best_move.is_some() {
                if index >= 12 && depth >= 5 { 2 } else { 1 }
            } else {
                0
            };
            let mut score;
            if index == 0 {
                score = -self.negamax(depth - 1, ply + 1, -beta, -alpha);
            } else {
                score = -self.negamax(depth - 1 - reduction, ply + 1, -alpha - 1, -alpha);
                if score > alpha && reduction > 0 && !self.aborted {
                    score = -self.negamax(depth - 1, ply + 1, -alpha - 1, -alpha);
                }
                if score > alpha && score < beta && !self.aborted {
                    score = -self.negamax(depth - 1, ply + 1, -beta, -alpha);
                }
            }
            self.game.undo();
            if self.aborted {
                return 0;
            }
            index += 1;
            if score > best_score {
                best_score = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    if ply == 0 {
                        self.root_best = score;
                    }
                    self.pv[ply][ply] = m;
                    let (upper, lower) = self.pv.split_at_mut(ply + 1);
                    let child_len = self.pv_len[ply + 1].max(ply + 1);
                    upper[ply][ply + 1..child_len].copy_from_slice(&lower[0][ply + 1..child_len]);
                    self.pv_len[ply] = child_len;
                    if alpha >= beta {
                        if !s.capture {
                            self.heuristics.reward(side, m, ply, depth);
                        }
                        break;
                    }
                }
            }
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        // A root searched with moves left out has no true score to keep.
        if ply > 0 || self.excluded.is_empty() {
            self.tt.store(key, depth as u8, to_tt(best_score, ply), bound, best_move);
        }
        best_score
    }

    /// True for a root move left out of this search (a line already found).
    fn left_out(&self, ply: usize, m: Move) -> bool {
        ply == 0 && self.excluded.contains(&m)
    }
}
