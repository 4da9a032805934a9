//! The child selection of a [`Search`]: which edge a simulation follows at each node. PUCT with
//! first-play urgency, Gumbel MuZero's deterministic interior rule, and the Gumbel root with
//! sequential halving; with them the Q-values (virtual loss counted) and completed Q-values that
//! all three read.
//!
//! Kept apart from the driver in `search.rs` because these formulas follow the papers (and
//! `mctx`) and are checked against them side by side, without the slot and batch bookkeeping
//! around them.

use super::gumbel::{self, Completed};
use super::search::Search;
use super::tree::{NONE, ROOT};

impl Search {
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

    pub(super) fn select(&self, node: u32) -> usize {
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
}
