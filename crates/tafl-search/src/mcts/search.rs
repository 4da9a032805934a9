//! `Search`: one MCTS tree over one game, driven from outside one batch of leaves at a time.
//!
//! A simulation walks from the root to a leaf, playing the moves on a scratch copy of the game
//! (a "slot"). A leaf whose game is over, or which is proven, is backed up at once; any other
//! leaf is handed out for evaluation and stays in its slot until [`Search::feed`] brings the
//! evaluation back. Leaves handed out carry a virtual loss along their path, so several can be in
//! flight from one tree.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tafl_rules::{Game, Move, Outcome, PlayError, Side};

use super::gumbel::{self, Completed};
use super::noise;
use super::params::SearchParams;
use super::tree::{Edge, NONE, Node, Proof, ROOT, State, Tree};
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
struct RootPlan {
    /// Priors before the Dirichlet noise was mixed in, to restore on the next search.
    raw_priors: Option<Vec<f32>>,
    /// Gumbel root: `ln prior` per root edge.
    logits: Vec<f32>,
    /// Gumbel root: the Gumbel sample per root edge (all 0 without `gumbel_noise`).
    gumbel: Vec<f32>,
    /// Gumbel root: visits given by this search per root edge.
    visits: Vec<u32>,
    /// Gumbel root: the sequential-halving schedule (`gumbel::considered_visits`).
    sequence: Vec<u32>,
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
    params: SearchParams,
    rng: StdRng,
    pub(super) tree: Tree,
    /// The game at the root.
    game: Game,
    /// Scratch games: free ones stand at the root, pending ones at their leaf.
    slots: Vec<Game>,
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
    plan: RootPlan,
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

    fn root(&self) -> &Node {
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
        // Proofs: each parent is re-judged while the node under it is proven.
        for w in path.windows(2).rev() {
            let (parent, child) = (w[0], w[1]);
            if self.tree.nodes[child as usize].proof.is_none() || self.tree.nodes[parent as usize].proof.is_some() {
                break;
            }
            match self.judge(parent) {
                Some(proof) => self.tree.nodes[parent as usize].proof = Some(proof),
                None => break,
            }
        }
    }

    /// The MCTS-solver rule: a win when some move leads to a proven loss for the opponent; a
    /// loss when every move leads to a proven win for the opponent; a draw when every move is
    /// proven and the best is a draw.
    fn judge(&self, node: u32) -> Option<Proof> {
        let n = &self.tree.nodes[node as usize];
        if n.edge_count == 0 {
            return n.proof;
        }
        let mut all_proven = true;
        let mut draw = false;
        for e in n.edges() {
            let child = self.tree.edges[e].child;
            match (child != NONE).then(|| self.tree.nodes[child as usize].proof).flatten() {
                Some(Proof::Loss) => return Some(Proof::Win),
                Some(Proof::Draw) => draw = true,
                Some(Proof::Win) => {}
                None => all_proven = false,
            }
        }
        match (all_proven, draw) {
            (false, _) => None,
            (true, true) => Some(Proof::Draw),
            (true, false) => Some(Proof::Loss),
        }
    }

    /// Builds the edges of a node reached for the first time, with `slot`'s game standing on
    /// it: its legal moves with uniform priors, or its result when the game is over. Moves that
    /// might end the game at once (the king's moves for the defenders; moves next to the king
    /// for the attackers; every move when one may bring a position back a third time) are
    /// played to find immediate results: a node with a win is proven and needs no evaluation,
    /// so a king one move from the corner is never missed, and neither is a repetition that the
    /// attackers complete. Without that, a defence at few visits walks into repetitions it
    /// cannot see (most attacker wins between nets ended so; against alpha-beta, hardly any).
    fn open(&mut self, node: u32, slot: usize) {
        let game = &mut self.slots[slot];
        let mover = game.position().side_to_move();
        if let Some(proof) = outcome_proof(game.outcome(), mover) {
            let n = &mut self.tree.nodes[node as usize];
            n.state = State::Terminal;
            n.proof = Some(proof);
            return;
        }
        let moves = game.legal_moves();
        if moves.is_empty() {
            // Unreachable under rules that decide "no moves"; a draw is the safe reading.
            let n = &mut self.tree.nodes[node as usize];
            n.state = State::Terminal;
            n.proof = Some(Proof::Draw);
            return;
        }
        let first = self.tree.edges.len() as u32;
        let prior = 1.0 / moves.len() as f32;
        self.tree.edges.extend(moves.iter().map(|&mv| Edge { mv, prior, child: NONE }));
        {
            let n = &mut self.tree.nodes[node as usize];
            n.first_edge = first;
            n.edge_count = moves.len() as u32;
            n.state = State::Opened;
        }
        let Some(king) = game.position().king() else { return };
        let repeats = game.a_move_may_repeat_thrice();
        for (i, &mv) in moves.iter().enumerate() {
            let candidate = repeats
                || match mover {
                    Side::Defenders => mv.from == king,
                    Side::Attackers => king.file().abs_diff(mv.to.file()) + king.rank().abs_diff(mv.to.rank()) == 1,
                };
            if !candidate {
                continue;
            }
            game.play_unchecked(mv);
            let proof = outcome_proof(game.outcome(), mover.opponent());
            game.undo();
            if let Some(proof) = proof {
                let mut child = Node::new();
                child.state = State::Terminal;
                child.proof = Some(proof);
                let c = self.tree.add_node(child);
                self.tree.edges[first as usize + i].child = c;
                if proof == Proof::Loss {
                    self.tree.nodes[node as usize].proof = Some(Proof::Win);
                    return;
                }
            }
        }
        match mover {
            Side::Attackers => self.refute_open_lines(node, slot),
            Side::Defenders => self.find_fork(node, slot),
        }
    }

    /// Attackers to move while the king sees an escape square: each move that leaves him one is
    /// lost, and its child is proven with the escape as its only edge, so no simulation is spent
    /// on it. The node is lost when no move closes every line.
    fn refute_open_lines(&mut self, node: u32, slot: usize) {
        if self.slots[slot].position().king_escape_move().is_none() {
            return;
        }
        let mut lost = true;
        for e in self.tree.nodes[node as usize].edges() {
            let edge = self.tree.edges[e];
            if edge.child != NONE {
                lost &= self.lost(e);
                continue;
            }
            let game = &mut self.slots[slot];
            game.play_unchecked(edge.mv);
            let escape = if game.outcome().is_over() { None } else { winning_escape(game) };
            game.undo();
            match escape {
                Some(escape) => self.tree.edges[e].child = self.tree.add_won_by(escape),
                None => lost = false,
            }
        }
        if lost {
            self.tree.nodes[node as usize].proof = Some(Proof::Loss);
        }
    }

    /// Defenders to move: a king move that opens a line to an escape square has its child opened
    /// at once, which proves the node won when the attackers cannot close every line (a fork).
    /// Opened at the root's children, this keeps the attackers out of forks two moves deep.
    fn find_fork(&mut self, node: u32, slot: usize) {
        let Some(king) = self.slots[slot].position().king() else { return };
        for e in self.tree.nodes[node as usize].edges() {
            let edge = self.tree.edges[e];
            // A king move that ends the game already has its (terminal) child from `open`.
            if edge.mv.from != king || edge.child != NONE {
                continue;
            }
            self.slots[slot].play_unchecked(edge.mv);
            let fork = self.slots[slot].position().king_escape_move().is_some() && {
                let child = self.tree.child_of(e);
                self.open(child, slot);
                self.tree.nodes[child as usize].proof == Some(Proof::Loss)
            };
            self.slots[slot].undo();
            if fork {
                self.tree.nodes[node as usize].proof = Some(Proof::Win);
                return;
            }
        }
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

    // ---------------------------------------------------------------- selection

    /// The child's proof, if the edge has been followed.
    pub(super) fn child_proof(&self, e: usize) -> Option<Proof> {
        let c = self.tree.edges[e].child;
        if c == NONE { None } else { self.tree.nodes[c as usize].proof }
    }

    /// The move of edge `e` is proven to lose (the child is a proven win for the opponent).
    fn lost(&self, e: usize) -> bool {
        self.child_proof(e) == Some(Proof::Win)
    }

    /// Q of edge `e` for the side choosing it (virtual losses counted as losses) and its visit
    /// count with the simulations in flight. Proven children give their exact value.
    pub(super) fn edge_q(&self, e: usize) -> (Option<f32>, u32) {
        let c = self.tree.edges[e].child;
        if c == NONE {
            return (None, 0);
        }
        let child = &self.tree.nodes[c as usize];
        let n = child.visits + child.in_flight;
        if let Some(proof) = child.proof {
            return (Some(-proof.value()), n.max(1));
        }
        if n == 0 {
            return (None, 0);
        }
        let w = child.value_sum + f64::from(child.in_flight);
        (Some((-w / f64::from(n)) as f32), n)
    }

    fn select(&self, node: u32) -> usize {
        if self.params.use_gumbel {
            if node == ROOT && !self.plan.sequence.is_empty() {
                return self.select_gumbel_root();
            }
            self.select_gumbel_interior(node)
        } else {
            self.select_puct(node)
        }
    }

    fn select_puct(&self, node: u32) -> usize {
        let n = &self.tree.nodes[node as usize];
        let edges = n.edges();
        let mut visited_prior = 0.0f32;
        for e in edges.clone() {
            if self.edge_q(e).1 > 0 {
                visited_prior += self.tree.edges[e].prior;
            }
        }
        let fpu = n.mean() - self.params.fpu_reduction * visited_prior.sqrt();
        let sqrt_n = ((n.visits + n.in_flight).max(1) as f32).sqrt();
        let mut best = (edges.start, f32::NEG_INFINITY);
        for e in edges {
            if self.lost(e) {
                continue;
            }
            let (q, visits) = self.edge_q(e);
            let u = self.params.c_puct * self.tree.edges[e].prior * sqrt_n / (1.0 + visits as f32);
            let score = q.unwrap_or(fpu) + u;
            if score > best.1 {
                best = (e, score);
            }
        }
        best.0
    }

    /// Completed Q-values of `node`'s children and the scale of `sigma`.
    pub(super) fn completed(&self, node: u32) -> Completed {
        let n = &self.tree.nodes[node as usize];
        let edges = n.edges();
        let mut qs = Vec::with_capacity(edges.len());
        let mut visits = Vec::with_capacity(edges.len());
        for e in edges.clone() {
            let (q, v) = self.edge_q(e);
            qs.push(q);
            visits.push(v);
        }
        let priors: Vec<f32> = self.tree.edges[edges.clone()].iter().map(|e| e.prior).collect();
        let v_mix = gumbel::mixed_value(n.raw_value, &priors, &qs, &visits);
        let max_n = visits.iter().copied().max().unwrap_or(0);
        let q: Vec<f32> = qs.into_iter().map(|q| q.unwrap_or(v_mix)).collect();
        let (mut low, mut high) = (f32::INFINITY, f32::NEG_INFINITY);
        for (e, &q) in edges.zip(&q) {
            if !self.lost(e) {
                low = low.min(q);
                high = high.max(q);
            }
        }
        if low > high {
            (low, high) = (-1.0, 1.0); // every move is lost
        }
        Completed {
            q,
            scale: (self.params.c_visit + max_n as f32) * self.params.c_scale,
            low,
            spread: (high - low).max(gumbel::MIN_SPREAD),
        }
    }

    /// Gumbel MuZero's deterministic interior selection: the child whose visit share lags most
    /// behind the improved policy, `argmax pi'(a) - N(a) / (1 + sum N)`.
    fn select_gumbel_interior(&self, node: u32) -> usize {
        let mut best = (self.tree.nodes[node as usize].first_edge as usize, f32::NEG_INFINITY);
        self.gumbel_interior_scores(node, |e, score| {
            if score > best.1 {
                best = (e, score);
            }
        });
        best.0
    }

    /// Calls `f(edge, pi'(a) - N(a) / (1 + sum N))` for each move not proven lost, where
    /// `pi' = softmax(logits + sigma(completed Q))`. Written without allocation, as it runs at
    /// every interior node of every simulation: `pi'(a)` is proportional to
    /// `prior(a) * exp(sigma(q(a)) - sigma(v_mix))`, which is `prior(a)` for unvisited moves.
    pub(super) fn gumbel_interior_scores(&self, node: u32, mut f: impl FnMut(usize, f32)) {
        let n = &self.tree.nodes[node as usize];
        let edges = n.edges();
        let (mut sum_n, mut max_n, mut sum_p, mut sum_pq) = (0u32, 0u32, 0.0f32, 0.0f32);
        for e in edges.clone() {
            let (q, visits) = self.edge_q(e);
            max_n = max_n.max(visits);
            if let Some(q) = q
                && visits > 0
            {
                let p = self.tree.edges[e].prior.max(f32::MIN_POSITIVE);
                sum_n += visits;
                sum_p += p;
                sum_pq += p * q;
            }
        }
        let v_mix =
            if sum_n == 0 { n.raw_value } else { (n.raw_value + sum_n as f32 * sum_pq / sum_p) / (1.0 + sum_n as f32) };
        // The completed Q-values' range over moves not proven lost, as in `completed`.
        let (mut low, mut high) = (f32::INFINITY, f32::NEG_INFINITY);
        for e in edges.clone() {
            if !self.lost(e) {
                let q = match self.edge_q(e) {
                    (Some(q), v) if v > 0 => q,
                    _ => v_mix,
                };
                low = low.min(q);
                high = high.max(q);
            }
        }
        let spread = if low > high { 2.0 } else { (high - low).max(gumbel::MIN_SPREAD) };
        let scale = (self.params.c_visit + max_n as f32) * self.params.c_scale / spread;
        // The largest exponent (0 for the unvisited), subtracted to keep exp finite.
        let mut top = 0.0f32;
        for e in edges.clone() {
            if let (Some(q), v) = self.edge_q(e)
                && v > 0
            {
                top = top.max(scale * (q - v_mix));
            }
        }
        let weight = |e: usize| {
            if self.lost(e) {
                return 0.0;
            }
            let prior = self.tree.edges[e].prior;
            match self.edge_q(e) {
                (Some(q), v) if v > 0 => prior * (scale * (q - v_mix) - top).exp(),
                _ => prior * (-top).exp(),
            }
        };
        let total_weight: f32 = edges.clone().map(weight).sum();
        let total_visits = 1.0 + sum_n as f32;
        for e in edges {
            if self.lost(e) {
                continue;
            }
            let pi = if total_weight > 0.0 { weight(e) / total_weight } else { 0.0 };
            f(e, pi - self.edge_q(e).1 as f32 / total_visits);
        }
    }

    /// The Gumbel root: sequential halving among the Gumbel-top-k actions. Simulation `i`
    /// visits the best-scoring action (`g + logits + sigma(q)`) among those with exactly
    /// `sequence[i]` visits in this search.
    fn select_gumbel_root(&self) -> usize {
        let root = self.root();
        let edges = root.edges();
        let completed = self.completed(ROOT);
        let in_flight = |e: usize| {
            let c = self.tree.edges[e].child;
            if c == NONE { 0 } else { self.tree.nodes[c as usize].in_flight }
        };
        let index: u32 = edges.clone().map(|e| self.plan.visits[e - edges.start] + in_flight(e)).sum();
        let considered = self.plan.sequence[(index as usize).min(self.plan.sequence.len() - 1)];
        let mut best = (None, f32::NEG_INFINITY);
        let mut fallback = (edges.start, f32::NEG_INFINITY);
        for (i, e) in edges.enumerate() {
            if self.lost(e) {
                continue;
            }
            // The first visits pick the Gumbel-top-k by `g + logits` alone, so that Q-values
            // kept from an earlier search do not bend the sample.
            let sigma = if considered == 0 { 0.0 } else { completed.sigma(completed.q[i]) };
            let score = self.plan.gumbel[i] + self.plan.logits[i] + sigma;
            if self.plan.visits[i] + in_flight(e) == considered && score > best.1 {
                best = (Some(e), score);
            }
            if score > fallback.1 {
                fallback = (e, score);
            }
        }
        best.0.unwrap_or(fallback.0)
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

/// The king's move onto an escape square when it wins at once (the defenders to move).
fn winning_escape(game: &mut Game) -> Option<Move> {
    let escape = game.position().king_escape_move()?;
    game.play_unchecked(escape);
    let won = game.outcome().winner() == Some(Side::Defenders);
    game.undo();
    won.then_some(escape)
}

/// The proof of an outcome for `side_to_move` there, or `None` while the game goes on.
fn outcome_proof(outcome: Outcome, side_to_move: Side) -> Option<Proof> {
    match outcome {
        Outcome::Ongoing => None,
        Outcome::Decided { winner, .. } => Some(if winner == side_to_move { Proof::Win } else { Proof::Loss }),
        Outcome::Draw { .. } => Some(Proof::Draw),
    }
}

/// Advances many searches at once: each not yet done hands out up to `leaves_per_search` leaves,
/// the evaluator gets them all in one batch, and each search gets its evaluations back.
/// Returns the number of positions evaluated (0 when every search is done or stalled).
pub fn step_searches<'a, E: Evaluator + ?Sized>(
    searches: impl IntoIterator<Item = &'a mut Search>,
    evaluator: &E,
    leaves_per_search: usize,
) -> usize {
    let mut searches: Vec<&mut Search> = searches.into_iter().filter(|s| !s.done()).collect();
    for s in &mut searches {
        s.next_leaves(leaves_per_search.max(1));
    }
    let games: Vec<&Game> = searches.iter().flat_map(|s| s.pending_games()).collect();
    if games.is_empty() {
        return 0;
    }
    let evaluations = evaluator.evaluate(&games);
    let n = games.len();
    drop(games);
    let mut evaluations = evaluations.into_iter();
    for s in &mut searches {
        let k = s.pending_count();
        s.feed(evaluations.by_ref().take(k));
    }
    n
}
