//! `Search`: one MCTS tree over one game, driven from outside one batch of leaves at a time.
//!
//! A simulation walks from the root to a leaf, playing the moves on a scratch copy of the game
//! (a "slot"). A leaf whose game is over, or which is proven, is backed up at once; any other
//! leaf is handed out for evaluation and stays in its slot until [`Search::feed`] brings the
//! evaluation back. Leaves handed out carry a virtual loss along their path, so several can be in
//! flight from one tree.
//!
//! This file is the driver: slots, simulations, handing out leaves, [`Search::feed`], backup and
//! the results. The proofs (what the tree knows exactly, and how it travels up) are in
//! `proof.rs`, the child selection (PUCT, the Gumbel root and interior) in `select.rs`: other
//! `impl Search` blocks over the same fields.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use tafl_rules::{Game, Move, PlayError};

use super::gumbel::{self, Completed};
use super::noise;
use super::params::SearchParams;
use super::tree::{NONE, Node, Proof, ROOT, State, Tree};
use crate::evaluator::{Evaluation, Evaluator};
use crate::player::Line;

/// What a finished (or interrupted) search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move to play, chosen by the parameters' rule (temperature for PUCT, Gumbel survivors
    /// for the Gumbel root; a proven win always). `None` when the game is over.
    pub best_move: Option<Move>,
    /// The policy training target over all legal moves, in `game.legal_moves()` order; sums to
    /// one. PUCT: root visit counts. Gumbel: `softmax(logits + sigma(completed Q))`. A proven
    /// win: all mass on the winning move.
    pub improved_policy: Vec<(Move, f32)>,
    /// The root value for the side to move, in [-1, 1] (exact when proven).
    pub root_value: f32,
    /// The value of `best_move` for the side to move: its child's mean (exact when proven), or
    /// the root value when the move was not visited. Unlike the root's mean, it is not pulled
    /// down by the poor moves the search tried and dropped: what resignation should look at.
    pub best_value: f32,
    /// Simulations made by this search (visits reused from an earlier search not counted).
    pub visits: u32,
    /// Visits of the root, reused ones included.
    pub root_visits: u32,
    /// The proven result for the side to move, when the search proved one.
    pub proof: Option<Proof>,
    /// The principal variation: the proven win if there is one, else the most-visited line.
    pub pv: Vec<Move>,
}

/// Per-search state of the root: Dirichlet noise bookkeeping and the Gumbel plan.
#[derive(Clone, Debug, Default)]
pub(super) struct RootPlan {
    /// Priors before the Dirichlet noise was mixed in, to restore on the next search.
    raw_priors: Option<Vec<f32>>,
    /// Gumbel root: `ln prior` per root edge.
    pub(super) logits: Vec<f32>,
    /// Gumbel root: the Gumbel sample per root edge (all 0 without `gumbel_noise`).
    pub(super) gumbel: Vec<f32>,
    /// Gumbel root: visits given by this search per root edge.
    pub(super) visits: Vec<u32>,
    /// Gumbel root: the sequential-halving schedule (`gumbel::considered_visits`).
    pub(super) sequence: Vec<u32>,
}

/// An MCTS search over one game, with the tree kept between moves.
///
/// Drive it by hand (self-play with many games in flight):
/// ```
/// # use tafl_rules::{Game, Variant};
/// # use tafl_search::{Evaluator, UniformEvaluator};
/// # use tafl_search::mcts::{Search, SearchParams};
/// let mut search = Search::new(Game::new(Variant::copenhagen()), SearchParams::gumbel(16), 7);
/// while !search.done() {
///     search.next_leaves(1);
///     let evaluations = UniformEvaluator.evaluate(&search.pending_games());
///     search.feed(evaluations);
/// }
/// let result = search.result();
/// search.advance(result.best_move.unwrap()).unwrap();
/// ```
/// or with [`Search::run`] (one game, batches gathered with virtual loss), or
/// [`step_searches`] (one batch across many searches).
#[derive(Clone, Debug)]
pub struct Search {
    pub(super) params: SearchParams,
    rng: StdRng,
    pub(super) tree: Tree,
    /// The game at the root.
    game: Game,
    /// Scratch games: free ones stand at the root, pending ones at their leaf.
    pub(super) slots: Vec<Game>,
    /// The path (root first) of the simulation in each slot.
    paths: Vec<Vec<u32>>,
    /// The root edge the simulation in each slot took (`NONE` for the root itself).
    root_edges: Vec<u32>,
    free: Vec<usize>,
    /// Slots whose leaves wait for an evaluation, in the order they were handed out.
    pending: Vec<usize>,
    /// Simulations this search may make.
    budget: u32,
    /// Simulations started (pending ones included) and finished in this search.
    started: u32,
    finished: u32,
    /// The root has been prepared for this search (children opened, noise, Gumbel plan).
    root_ready: bool,
    pub(super) plan: RootPlan,
    /// The uniform number that samples the move when the temperature is above 0; drawn when
    /// the search starts so that `result` is a pure function.
    choice_u: f64,
    evaluations: u64,
    collisions: u64,
}

impl Search {
    /// A search from `game` with a fresh tree; it makes `params.visits` simulations.
    #[must_use]
    pub fn new(game: Game, params: SearchParams, seed: u64) -> Search {
        let mut search = Search {
            budget: params.visits,
            params,
            rng: StdRng::seed_from_u64(seed),
            tree: Tree::new(),
            game,
            slots: Vec::new(),
            paths: Vec::new(),
            root_edges: Vec::new(),
            free: Vec::new(),
            pending: Vec::new(),
            started: 0,
            finished: 0,
            root_ready: false,
            plan: RootPlan::default(),
            choice_u: 0.0,
            evaluations: 0,
            collisions: 0,
        };
        search.start(search.params.visits);
        search
    }

    /// The parameters.
    #[must_use]
    pub fn params(&self) -> &SearchParams {
        &self.params
    }

    /// Changes the parameters; they apply from the next [`Search::start`].
    pub fn set_params(&mut self, params: SearchParams) {
        self.params = params;
    }

    /// The game at the root.
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Evaluations asked for so far (over all searches of this tree).
    #[must_use]
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Times a simulation ran into a leaf already waiting for its evaluation (each ends the
    /// gathering of a batch early).
    #[must_use]
    pub fn collisions(&self) -> u64 {
        self.collisions
    }

    /// Visits of the root, reused ones included (0 until the root is evaluated).
    #[must_use]
    pub fn root_visits(&self) -> u32 {
        self.root().visits
    }

    /// Nodes in the tree.
    #[must_use]
    pub fn tree_size(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Starts a new search of `visits` simulations from the current root, keeping the tree.
    /// (Playout-cap randomisation: pass a small or a large budget per move.)
    ///
    /// # Panics
    /// When leaves are still waiting for their evaluations.
    pub fn start(&mut self, visits: u32) {
        assert!(self.pending.is_empty(), "start with leaves still pending");
        if let Some(raw) = self.plan.raw_priors.take() {
            let root = self.tree.nodes[ROOT as usize];
            for (e, p) in root.edges().zip(raw) {
                self.tree.edges[e].prior = p;
            }
        }
        self.plan = RootPlan::default();
        // Whoever asks (a config, a bundle, a protocol): a Gumbel root plans its whole budget
        // up front, so an unbounded one would allocate gigabytes before the first visit.
        self.budget = visits.min(crate::MAX_SEARCH_COUNT as u32);
        self.started = 0;
        self.finished = 0;
        self.root_ready = false;
        self.choice_u = self.rng.random();
    }

    /// Plays `mv` at the root, keeps the subtree under it and starts a new search with
    /// `params.visits` simulations.
    ///
    /// # Errors
    /// When the move is illegal or the game is over; the search is then untouched.
    ///
    /// # Panics
    /// When leaves are still waiting for their evaluations.
    pub fn advance(&mut self, mv: Move) -> Result<(), PlayError> {
        assert!(self.pending.is_empty(), "advance with leaves still pending");
        self.game.play(mv)?;
        for slot in &mut self.slots {
            slot.play_unchecked(mv);
        }
        match self.tree.child_by_move(ROOT, mv) {
            Some(child) => self.tree.reroot(child),
            None => self.tree = Tree::new(),
        }
        self.plan = RootPlan::default();
        self.start(self.params.visits);
        Ok(())
    }

    /// True when the search has nothing more to do: the budget is spent (or the root proven)
    /// and no leaf is waiting for its evaluation.
    #[must_use]
    pub fn done(&self) -> bool {
        self.pending.is_empty() && self.exhausted()
    }

    pub(super) fn root(&self) -> &Node {
        &self.tree.nodes[ROOT as usize]
    }

    fn exhausted(&self) -> bool {
        let root = self.root();
        root.proof.is_some() || (self.root_ready && (self.started >= self.budget || self.tree_full()))
    }

    /// The tree holds as much memory as the parameters allow: no more simulations.
    fn tree_full(&self) -> bool {
        self.tree.bytes() >= (self.params.max_tree_mib as usize) << 20
    }

    /// Runs simulations until `max` leaves wait for an evaluation, the budget is spent or a
    /// simulation runs into a leaf already waiting (then the batch is cut short). Leaves whose
    /// game is over or that are proven are resolved on the way without the evaluator. Returns
    /// the number of leaves waiting: see [`Search::pending_games`] and [`Search::feed`].
    pub fn next_leaves(&mut self, max: usize) -> usize {
        while self.pending.len() < max {
            if !self.root_ready && self.root().state == State::Evaluated && self.root().proof.is_none() {
                self.prepare_root();
            }
            if self.exhausted() || self.root().state == State::Pending {
                break;
            }
            if !self.simulate() {
                break;
            }
        }
        self.pending.len()
    }

    /// The games at the leaves waiting for an evaluation, in the order [`Search::feed`] expects.
    #[must_use]
    pub fn pending_games(&self) -> Vec<&Game> {
        self.pending.iter().map(|&s| &self.slots[s]).collect()
    }

    /// Leaves waiting for an evaluation.
    #[must_use]
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// Hands back the evaluations of the pending leaves, one per leaf in the order of
    /// [`Search::pending_games`], and backs them up.
    ///
    /// # Panics
    /// When the number of evaluations differs from the number of pending leaves.
    pub fn feed(&mut self, evaluations: impl IntoIterator<Item = Evaluation>) {
        let pending = std::mem::take(&mut self.pending);
        let mut count = 0;
        for (&slot, evaluation) in pending.iter().zip(evaluations) {
            count += 1;
            self.feed_one(slot, evaluation);
        }
        assert_eq!(count, pending.len(), "one evaluation per pending leaf");
        self.pending = pending;
        self.pending.clear();
    }

    /// Runs the whole search with `evaluator`, gathering up to `batch` leaves from the tree per
    /// evaluator call (virtual loss keeps them apart).
    pub fn run<E: Evaluator + ?Sized>(&mut self, evaluator: &E, batch: usize) -> SearchResult {
        while !self.done() {
            if self.next_leaves(batch.max(1)) == 0 {
                break;
            }
            let evaluations = evaluator.evaluate(&self.pending_games());
            self.feed(evaluations);
        }
        self.result()
    }

    // ---------------------------------------------------------------- simulations

    fn take_slot(&mut self) -> usize {
        if let Some(s) = self.free.pop() {
            return s;
        }
        self.slots.push(self.game.clone());
        self.paths.push(Vec::with_capacity(64));
        self.root_edges.push(NONE);
        self.slots.len() - 1
    }

    fn release_slot(&mut self, slot: usize) {
        let ply = self.game.ply();
        let game = &mut self.slots[slot];
        while game.ply() > ply {
            game.undo();
        }
        self.free.push(slot);
    }

    /// One simulation. Returns false when it ran into a pending leaf (a collision).
    fn simulate(&mut self) -> bool {
        let slot = self.take_slot();
        let mut path = std::mem::take(&mut self.paths[slot]);
        path.clear();
        path.push(ROOT);
        let mut root_edge = NONE;
        let mut node = ROOT;
        let counted = self.root().state == State::Evaluated;
        loop {
            let n = self.tree.nodes[node as usize];
            if let Some(proof) = n.proof {
                // A terminal or proven node: its value is exact.
                if counted {
                    self.started += 1;
                    self.finished += 1;
                }
                self.backup(&path, proof.value(), root_edge, false);
                self.paths[slot] = path;
                self.release_slot(slot);
                return true;
            }
            match n.state {
                State::New => {
                    self.open(node, slot);
                    // Loop: a proof found by opening resolves the simulation.
                }
                State::Opened => {
                    self.tree.nodes[node as usize].state = State::Pending;
                    for &p in &path {
                        self.tree.nodes[p as usize].in_flight += 1;
                    }
                    if counted {
                        self.started += 1;
                    }
                    self.paths[slot] = path;
                    self.root_edges[slot] = root_edge;
                    self.pending.push(slot);
                    return true;
                }
                State::Pending => {
                    self.collisions += 1;
                    self.paths[slot] = path;
                    self.release_slot(slot);
                    return false;
                }
                State::Evaluated => {
                    let e = self.select(node);
                    if node == ROOT {
                        root_edge = e as u32;
                    }
                    let edge = self.tree.edges[e];
                    let child = self.tree.child_of(e);
                    self.slots[slot].play_unchecked(edge.mv);
                    path.push(child);
                    node = child;
                }
                State::Terminal => unreachable!("terminal nodes are proven"),
            }
        }
    }

    fn feed_one(&mut self, slot: usize, evaluation: Evaluation) {
        let path = std::mem::take(&mut self.paths[slot]);
        let leaf = *path.last().unwrap_or(&ROOT);
        let node = self.tree.nodes[leaf as usize];
        let edges = node.edges();
        let mut policy = evaluation.policy;
        if policy.len() != edges.len() {
            debug_assert!(false, "evaluator gave {} priors for {} moves", policy.len(), edges.len());
            policy = vec![1.0; edges.len()];
        }
        let sum: f32 = policy.iter().map(|p| if p.is_finite() { p.max(0.0) } else { 0.0 }).sum();
        for (e, p) in edges.zip(policy) {
            let p = if p.is_finite() { p.max(0.0) } else { 0.0 };
            self.tree.edges[e].prior = if sum > 0.0 { p / sum } else { 1.0 / node.edge_count as f32 };
        }
        let value = if evaluation.value.is_finite() { evaluation.value.clamp(-1.0, 1.0) } else { 0.0 };
        let n = &mut self.tree.nodes[leaf as usize];
        n.raw_value = value;
        n.state = State::Evaluated;
        self.evaluations += 1;
        if leaf != ROOT {
            self.finished += 1;
        }
        self.backup(&path, value, self.root_edges[slot], true);
        self.paths[slot] = path;
        self.release_slot(slot);
    }

    /// Adds `value` (for the side to move at the leaf) along `path`, removes the virtual loss of
    /// a pending simulation, and propagates proofs upwards.
    fn backup(&mut self, path: &[u32], value: f32, root_edge: u32, was_pending: bool) {
        let mut v = f64::from(value);
        for &p in path.iter().rev() {
            let n = &mut self.tree.nodes[p as usize];
            n.visits += 1;
            n.value_sum += v;
            if was_pending {
                n.in_flight -= 1;
            }
            v = -v;
        }
        if root_edge != NONE
            && self.root_ready
            && let Some(c) = self.plan.visits.get_mut(root_edge as usize)
        {
            *c += 1;
        }
        self.propagate_proofs(path);
    }

    /// Prepares an evaluated root for this search: opens every child (so that moves that let the
    /// opponent win at once are known before any visit), mixes in Dirichlet noise (PUCT) or
    /// samples the Gumbel noise and the halving schedule (Gumbel).
    fn prepare_root(&mut self) {
        self.root_ready = true;
        let root = *self.root();
        let slot = self.take_slot();
        for e in root.edges() {
            let edge = self.tree.edges[e];
            let child = self.tree.child_of(e);
            if self.tree.nodes[child as usize].state == State::New {
                self.slots[slot].play_unchecked(edge.mv);
                self.open(child, slot);
                self.slots[slot].undo();
            }
        }
        self.release_slot(slot);
        if let Some(proof) = self.judge(ROOT) {
            self.tree.nodes[ROOT as usize].proof = Some(proof);
            return;
        }
        let edges = root.edges();
        if self.params.use_gumbel {
            let noisy = self.params.gumbel_noise;
            self.plan.logits = self.tree.edges[edges.clone()].iter().map(|e| e.prior.max(1e-30).ln()).collect();
            self.plan.gumbel = edges.clone().map(|_| if noisy { noise::gumbel(&mut self.rng) } else { 0.0 }).collect();
            self.plan.visits = vec![0; edges.len()];
            let alive = edges.filter(|&e| !self.lost(e)).count();
            let considered = (self.params.gumbel_k as usize).min(alive).max(1);
            self.plan.sequence = gumbel::considered_visits(considered, self.budget as usize);
        } else if self.params.dirichlet_weight > 0.0 {
            let eps = self.params.dirichlet_weight.clamp(0.0, 1.0);
            let noise = noise::dirichlet(&mut self.rng, self.params.dirichlet_alpha, edges.len());
            let mut raw = Vec::with_capacity(edges.len());
            for (e, eta) in edges.zip(noise) {
                let p = self.tree.edges[e].prior;
                raw.push(p);
                self.tree.edges[e].prior = (1.0 - eps) * p + eps * eta;
            }
            self.plan.raw_priors = Some(raw);
        }
    }

    // ---------------------------------------------------------------- results

    /// The edge of a proven win at the root, if any.
    fn winning_edge(&self) -> Option<usize> {
        self.root().edges().find(|&e| self.child_proof(e) == Some(Proof::Loss))
    }

    /// The `count` best root moves with their lines (MultiPV): a winning move first, then by
    /// visits, moves proven lost last. Read off the tree; no search is made.
    #[must_use]
    pub fn lines(&self, count: usize) -> Vec<Line> {
        let mut edges: Vec<usize> = self.root().edges().collect();
        let rank = |e: usize| (self.child_proof(e) == Some(Proof::Loss), !self.lost(e), self.edge_visits(e));
        edges.sort_by_key(|&e| std::cmp::Reverse(rank(e)));
        edges
            .into_iter()
            .take(count)
            .map(|e| {
                let edge = &self.tree.edges[e];
                let (value, visits) = self.edge_q(e);
                Line { pv: self.pv_from(edge.child, vec![edge.mv]), value, nodes: u64::from(visits) }
            })
            .collect()
    }

    /// The net's policy at the root, per root move in `game.legal_moves()` order (the order of
    /// [`SearchResult::improved_policy`]), before any Dirichlet noise: what the search's
    /// target is compared with to tell how much the search learnt. Empty until the root is
    /// evaluated.
    #[must_use]
    pub fn root_priors(&self) -> Vec<(Move, f32)> {
        let edges = &self.tree.edges[self.root().edges()];
        match &self.plan.raw_priors {
            Some(raw) => edges.iter().zip(raw).map(|(e, &p)| (e.mv, p)).collect(),
            None => edges.iter().map(|e| (e.mv, e.prior)).collect(),
        }
    }

    /// What the search found so far.
    #[must_use]
    pub fn result(&self) -> SearchResult {
        let root = *self.root();
        let edges = root.edges();
        let moves: Vec<Move> = self.tree.edges[edges.clone()].iter().map(|e| e.mv).collect();
        let root_value = root.proof.map_or(if root.visits == 0 { root.raw_value } else { root.mean() }, Proof::value);
        let mut result = SearchResult {
            best_move: None,
            improved_policy: Vec::new(),
            root_value,
            best_value: root_value,
            visits: self.finished,
            root_visits: root.visits,
            proof: root.proof,
            pv: Vec::new(),
        };
        if moves.is_empty() {
            return result;
        }
        if let Some(win) = self.winning_edge() {
            let w = win - edges.start;
            result.best_move = Some(moves[w]);
            result.improved_policy =
                moves.iter().enumerate().map(|(i, &m)| (m, if i == w { 1.0 } else { 0.0 })).collect();
            result.pv = self.pv();
            return result;
        }
        let policy = if self.params.use_gumbel && root.state == State::Evaluated {
            let completed = self.completed(ROOT);
            // Moves proven lost get no mass (while another move is left): they must be neither
            // learned nor drawn in the temperature phase.
            let all_lost = edges.clone().all(|e| self.lost(e));
            let mut pi: Vec<f32> = edges
                .clone()
                .zip(&completed.q)
                .map(|(e, &q)| {
                    if self.lost(e) && !all_lost {
                        f32::NEG_INFINITY
                    } else {
                        self.tree.edges[e].prior.max(1e-30).ln() + completed.sigma(q)
                    }
                })
                .collect();
            gumbel::softmax(&mut pi);
            let best = self.gumbel_choice(&completed);
            result.best_move = Some(moves[best]);
            pi
        } else {
            let visits: Vec<f32> = edges.clone().map(|e| self.edge_visits(e) as f32).collect();
            let total: f32 = visits.iter().sum();
            let pi = if total > 0.0 {
                visits.iter().map(|v| v / total).collect()
            } else {
                self.tree.edges[edges.clone()].iter().map(|e| e.prior).collect()
            };
            result.best_move = Some(moves[self.puct_choice()]);
            pi
        };
        if let Some(best) = result.best_move.and_then(|b| moves.iter().position(|&m| m == b))
            && let (Some(q), _) = self.edge_q(edges.start + best)
        {
            result.best_value = q;
        }
        result.improved_policy = moves.into_iter().zip(policy).collect();
        result.pv = self.pv();
        result
    }

    fn edge_visits(&self, e: usize) -> u32 {
        let c = self.tree.edges[e].child;
        if c == NONE { 0 } else { self.tree.nodes[c as usize].visits }
    }

    /// The Gumbel move: among the survivors of sequential halving (the most visited in this
    /// search), the best `g + logits + sigma(completed Q)`. Returns the edge's offset.
    fn gumbel_choice(&self, completed: &Completed) -> usize {
        let edges = self.root().edges();
        let alive: Vec<usize> = edges.clone().filter(|&e| !self.lost(e)).map(|e| e - edges.start).collect();
        let candidates = if alive.is_empty() { (0..edges.len()).collect() } else { alive };
        let search_visits = |i: usize| self.plan.visits.get(i).copied().unwrap_or(0);
        let most = candidates.iter().map(|&i| search_visits(i)).max().unwrap_or(0);
        let score = |i: usize| {
            let g = self.plan.gumbel.get(i).copied().unwrap_or(0.0);
            let logit = self.tree.edges[edges.start + i].prior.max(1e-30).ln();
            g + logit + completed.sigma(completed.q[i])
        };
        candidates
            .into_iter()
            .filter(|&i| search_visits(i) == most)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)))
            .unwrap_or(0)
    }

    /// The PUCT move: by visit counts at the temperature of this ply (the best at 0), moves
    /// proven to lose excluded while another exists. Returns the edge's offset.
    fn puct_choice(&self) -> usize {
        let edges = self.root().edges();
        let alive: Vec<usize> = edges.clone().filter(|&e| !self.lost(e)).map(|e| e - edges.start).collect();
        let candidates = if alive.is_empty() { (0..edges.len()).collect() } else { alive };
        let temperature = self.params.temperature_at(self.game.ply());
        let visits = |i: usize| f64::from(self.edge_visits(edges.start + i));
        let most = candidates.iter().map(|&i| visits(i)).fold(0.0, f64::max);
        if temperature > 0.0 && most > 0.0 {
            let weights: Vec<f64> =
                candidates.iter().map(|&i| (visits(i) / most).powf(1.0 / f64::from(temperature))).collect();
            let total: f64 = weights.iter().sum();
            let mut target = self.choice_u * total;
            for (&i, w) in candidates.iter().zip(&weights) {
                if target < *w && *w > 0.0 {
                    return i;
                }
                target -= w;
            }
        }
        // Most visits; ties by Q, then by prior.
        let key = |i: usize| {
            let e = edges.start + i;
            (visits(i), self.edge_q(e).0.unwrap_or(-2.0), self.tree.edges[e].prior)
        };
        candidates
            .into_iter()
            .max_by(|&a, &b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal))
            .unwrap_or(0)
    }

    /// The proven win when there is one, else the most-visited line (or a refuted move where
    /// every move is refuted).
    fn pv(&self) -> Vec<Move> {
        self.pv_from(ROOT, Vec::new())
    }

    /// `pv` followed by the line below `node`: its proven win, else its most-visited moves.
    fn pv_from(&self, mut node: u32, mut pv: Vec<Move>) -> Vec<Move> {
        while pv.len() < 64 && node != NONE {
            let n = &self.tree.nodes[node as usize];
            let edges = n.edges();
            let winning = edges.clone().find(|&e| self.child_proof(e) == Some(Proof::Loss));
            let visited = || edges.clone().filter(|&e| self.edge_visits(e) > 0).max_by_key(|&e| self.edge_visits(e));
            // A node proven lost before any visit: every move is refuted; show one.
            let refuted = || (n.proof == Some(Proof::Loss)).then(|| edges.clone().find(|&e| self.lost(e))).flatten();
            let next = winning.or_else(visited).or_else(refuted);
            let Some(e) = next else { break };
            pv.push(self.tree.edges[e].mv);
            node = self.tree.edges[e].child;
        }
        pv
    }
}

/// Advances many searches at once: each not yet done hands out up to `leaves_per_search` leaves,
/// the evaluator gets them all in one batch, and each search gets its evaluations back.
/// Returns the number of positions evaluated (0 when every search is done or stalled).
///
/// The searches' own work (selection, expansion, backing up) runs on rayon's threads: each
/// search is independent, and on one thread it was a sixth of self-play's time on two cores.
pub fn step_searches<'a, E: Evaluator + ?Sized>(
    searches: impl IntoIterator<Item = &'a mut Search>,
    evaluator: &E,
    leaves_per_search: usize,
) -> usize {
    let mut searches: Vec<&mut Search> = searches.into_iter().filter(|s| !s.done()).collect();
    searches.par_iter_mut().for_each(|s| {
        s.next_leaves(leaves_per_search.max(1));
    });
    let games: Vec<&Game> = searches.iter().flat_map(|s| s.pending_games()).collect();
    if games.is_empty() {
        return 0;
    }
    let evaluations = evaluator.evaluate(&games);
    let n = games.len();
    drop(games);
    let mut evaluations = evaluations.into_iter();
    let shares: Vec<Vec<Evaluation>> =
        searches.iter().map(|s| evaluations.by_ref().take(s.pending_count()).collect()).collect();
    searches.par_iter_mut().zip(shares).for_each(|(s, share)| s.feed(share));
    n
}
