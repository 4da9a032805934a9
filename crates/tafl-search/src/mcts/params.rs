//! `SearchParams`: every knob of the MCTS in one documented struct, filled from the config.

use serde::{Deserialize, Serialize};

/// The parameters of one MCTS search. Values are from the side to move's view in [-1, 1].
///
/// In TOML (kebab-case; unknown keys are an error, missing keys take the defaults below):
/// ```toml
/// visits = 32
/// use-gumbel = true
/// gumbel-k = 16
/// temperature-plies = 30
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SearchParams {
    /// Simulations per search (not counting the evaluation of a new root).
    pub visits: u32,
    /// PUCT exploration constant: `Q + c_puct * P * sqrt(N) / (1 + n)`.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus
    /// `fpu_reduction * sqrt(prior mass of the visited children)` (Leela Chess Zero's rule).
    pub fpu_reduction: f32,
    /// Dirichlet noise concentration at the root (PUCT only). Tafl has ~100 moves, so AlphaZero's
    /// rule of thumb (10 / moves) gives about 0.1.
    pub dirichlet_alpha: f32,
    /// Weight of the Dirichlet noise in the root priors (PUCT only); 0 turns the noise off.
    pub dirichlet_weight: f32,
    /// Temperature of the PUCT move choice for the first `temperature_plies` plies of the game:
    /// a move is sampled with probability proportional to `visits^(1 / temperature)`. (The
    /// Gumbel root ignores it: its Gumbel noise already samples the move.)
    pub temperature: f32,
    /// Plies (counted from the start of the game) played at `temperature`.
    pub temperature_plies: u32,
    /// Temperature after `temperature_plies`; 0 plays the best move.
    pub final_temperature: f32,
    /// Use the Gumbel root (Gumbel top-k, sequential halving, completed-Q policy target) and the
    /// deterministic Gumbel MuZero selection below the root, instead of PUCT with Dirichlet noise.
    pub use_gumbel: bool,
    /// Sample the Gumbel noise at the root. Without it the Gumbel root considers the top-k moves
    /// of the prior and plays the best survivor: deterministic, for matches.
    pub gumbel_noise: bool,
    /// Root actions sampled by Gumbel top-k (fewer when fewer moves are legal and not lost).
    pub gumbel_k: u32,
    /// `c_visit` of the monotone transform `sigma(q) = (c_visit + max_b N(b)) * c_scale * q`.
    pub c_visit: f32,
    /// `c_scale` of `sigma`; `q` is first rescaled to [0, 1] by the node's smallest and largest
    /// completed Q, as in mctx (whose default `value_scale` this is).
    pub c_scale: f32,
    /// The most memory one tree may hold, in MiB: a search ends when its tree reaches it, so a
    /// long search (an analysis, a PUCT search given minutes) cannot fill the machine. A node
    /// costs about 1.5 KB with its edges in Copenhagen: the default holds about 350 000 nodes.
    pub max_tree_mib: u32,
}

impl Default for SearchParams {
    fn default() -> SearchParams {
        SearchParams {
            visits: 200,
            c_puct: 1.5,
            fpu_reduction: 0.25,
            dirichlet_alpha: 0.1,
            dirichlet_weight: 0.25,
            temperature: 1.0,
            temperature_plies: 30,
            final_temperature: 0.0,
            use_gumbel: false,
            gumbel_noise: true,
            gumbel_k: 16,
            c_visit: 50.0,
            c_scale: 0.1,
            max_tree_mib: 512,
        }
    }
}

impl SearchParams {
    /// Gumbel search with `visits` simulations and mctx's defaults (k = 16, c_visit = 50,
    /// c_scale = 0.1 on rescaled Q).
    #[must_use]
    pub fn gumbel(visits: u32) -> SearchParams {
        SearchParams { visits, use_gumbel: true, ..SearchParams::default() }
    }

    /// PUCT search with `visits` simulations and Dirichlet noise.
    #[must_use]
    pub fn puct(visits: u32) -> SearchParams {
        SearchParams { visits, ..SearchParams::default() }
    }

    /// The same search without exploration noise: no Dirichlet noise, no Gumbel noise,
    /// temperature 0. For matches, where the strongest move is wanted.
    #[must_use]
    pub fn for_play(self) -> SearchParams {
        SearchParams { dirichlet_weight: 0.0, gumbel_noise: false, temperature: 0.0, final_temperature: 0.0, ..self }
    }

    /// The temperature at `ply` (plies played since the start of the game).
    #[must_use]
    pub fn temperature_at(&self, ply: usize) -> f32 {
        if ply < self.temperature_plies as usize { self.temperature } else { self.final_temperature }
    }
}
