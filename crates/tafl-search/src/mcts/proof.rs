//! The proofs of a [`Search`]: exact wins, losses and draws found in the tree (MCTS-solver) and
//! carried up it. A node is judged when it is first opened (the moves that could end the game
//! at once are played, open lines refuted, forks found) and again on every backup through a
//! proven child.
//!
//! Kept apart from the driver in `search.rs` because it is game knowledge, not bookkeeping: it
//! reads positions and proves nodes, while the driver only walks, hands out and backs up. Both
//! are `impl Search` blocks over the same tree.

use tafl_rules::{Game, Move, Outcome, Side};

use super::search::Search;
use super::tree::{Edge, NONE, Node, Proof, State};

impl Search {
    /// The child's proof, if the edge has been followed.
    pub(super) fn child_proof(&self, e: usize) -> Option<Proof> {
        let c = self.tree.edges[e].child;
        if c == NONE { None } else { self.tree.nodes[c as usize].proof }
    }

    /// The move of edge `e` is proven to lose (the child is a proven win for the opponent).
    pub(super) fn lost(&self, e: usize) -> bool {
        self.child_proof(e) == Some(Proof::Win)
    }

    /// Proofs: each parent on `path` is re-judged while the node under it is proven.
    pub(super) fn propagate_proofs(&mut self, path: &[u32]) {
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
    pub(super) fn judge(&self, node: u32) -> Option<Proof> {
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
    pub(super) fn open(&mut self, node: u32, slot: usize) {
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
