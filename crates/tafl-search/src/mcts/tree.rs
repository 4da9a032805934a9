//! The search tree: nodes and edges in two flat arenas, indexed by `u32`.
//!
//! A node's edges are one contiguous run of the edge arena, created (with the legal moves) the
//! first time the search reaches the node; the child node of an edge is created the first time
//! the edge is followed. Re-rooting copies the kept subtree into fresh arenas, so memory never
//! holds the discarded part of the tree.

use tafl_rules::Move;

/// "No node": an edge not followed yet.
pub(crate) const NONE: u32 = u32::MAX;

/// A proven game-theoretic value, from the view of the side to move at the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Proof {
    /// The side to move wins with best play.
    Win,
    /// The side to move loses whatever it plays.
    Loss,
    /// Neither side can do better than a draw.
    Draw,
}

impl Proof {
    /// The exact value for the side to move.
    #[must_use]
    pub fn value(self) -> f32 {
        match self {
            Proof::Win => 1.0,
            Proof::Loss => -1.0,
            Proof::Draw => 0.0,
        }
    }

    /// The same result seen by the other side.
    #[must_use]
    pub fn flip(self) -> Proof {
        match self {
            Proof::Win => Proof::Loss,
            Proof::Loss => Proof::Win,
            Proof::Draw => Proof::Draw,
        }
    }
}

/// How far a node has been built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Created, never reached with a game: no edges yet.
    New,
    /// Edges exist (priors uniform); waiting for, or not yet asked for, an evaluation.
    Opened,
    /// An evaluation is on its way (a leaf handed out and not fed yet).
    Pending,
    /// Priors and value from the evaluator.
    Evaluated,
    /// The game is over here; `proof` holds the result.
    Terminal,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub first_edge: u32,
    pub edge_count: u32,
    pub visits: u32,
    /// Simulations through this node still waiting for their evaluation (virtual loss).
    pub in_flight: u32,
    /// Sum of backed-up values, for the side to move here.
    pub value_sum: f64,
    /// The evaluator's value, for the side to move here.
    pub raw_value: f32,
    pub proof: Option<Proof>,
    pub state: State,
}

impl Node {
    pub fn new() -> Node {
        Node {
            first_edge: 0,
            edge_count: 0,
            visits: 0,
            in_flight: 0,
            value_sum: 0.0,
            raw_value: 0.0,
            proof: None,
            state: State::New,
        }
    }

    pub fn edges(&self) -> std::ops::Range<usize> {
        self.first_edge as usize..(self.first_edge + self.edge_count) as usize
    }

    /// Mean value for the side to move here (0 when unvisited).
    pub fn mean(&self) -> f32 {
        if self.visits == 0 { 0.0 } else { (self.value_sum / f64::from(self.visits)) as f32 }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub mv: Move,
    pub prior: f32,
    pub child: u32,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Tree {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

/// The root is always node 0.
pub(crate) const ROOT: u32 = 0;

impl Tree {
    pub fn new() -> Tree {
        Tree { nodes: vec![Node::new()], edges: Vec::new() }
    }

    /// The memory the nodes and edges hold (by length: the arenas may have reserved up to twice
    /// as much).
    pub fn bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>() + self.edges.len() * std::mem::size_of::<Edge>()
    }

    pub fn add_node(&mut self, node: Node) -> u32 {
        self.nodes.push(node);
        (self.nodes.len() - 1) as u32
    }

    /// The node edge `e` leads to, created (unexpanded) on first use.
    pub fn child_of(&mut self, e: usize) -> u32 {
        let child = self.edges[e].child;
        if child != NONE {
            return child;
        }
        let c = self.add_node(Node::new());
        self.edges[e].child = c;
        c
    }

    /// A node won at once by `mv` (for the side to move there), with that move as its only
    /// edge: a proven node is never searched, so its other moves are never needed.
    pub fn add_won_by(&mut self, mv: Move) -> u32 {
        let mut end = Node::new();
        end.state = State::Terminal;
        end.proof = Some(Proof::Loss);
        let end = self.add_node(end);
        let first = self.edges.len() as u32;
        self.edges.push(Edge { mv, prior: 1.0, child: end });
        let mut node = Node::new();
        node.first_edge = first;
        node.edge_count = 1;
        node.state = State::Opened;
        node.proof = Some(Proof::Win);
        self.add_node(node)
    }

    /// Keeps only the subtree under `new_root`, which becomes node 0. Nothing may be in flight.
    pub fn reroot(&mut self, new_root: u32) {
        let mut tree = Tree { nodes: Vec::new(), edges: Vec::new() };
        // Breadth-first copy: each node's edges are copied contiguously when the node is popped.
        let mut queue = std::collections::VecDeque::new();
        tree.nodes.push(self.nodes[new_root as usize]);
        queue.push_back((new_root, 0u32));
        while let Some((old, new)) = queue.pop_front() {
            let node = self.nodes[old as usize];
            let first = tree.edges.len() as u32;
            for e in node.edges() {
                let mut edge = self.edges[e];
                if edge.child != NONE {
                    let child = tree.add_node(self.nodes[edge.child as usize]);
                    queue.push_back((edge.child, child));
                    edge.child = child;
                }
                tree.edges.push(edge);
            }
            tree.nodes[new as usize].first_edge = first;
        }
        *self = tree;
    }

    /// The child reached by `mv` from `node`, if it has been created.
    pub fn child_by_move(&self, node: u32, mv: Move) -> Option<u32> {
        let n = &self.nodes[node as usize];
        self.edges[n.edges()].iter().find(|e| e.mv == mv).map(|e| e.child).filter(|&c| c != NONE)
    }
}
