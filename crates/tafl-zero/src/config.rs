//! The run config: every knob of a training run in one TOML file (see `configs/README.md`).
//!
//! Every table denies unknown keys, so a typo is an error that names the key; missing keys take
//! the defaults below (those of `configs/cpu.toml`).

use std::path::Path;

use serde::{Deserialize, Serialize};
use tafl_arena::{PlayerKind, PlayerSpec, Sprt};
use tafl_rules::Variant;
use tafl_search::{Limits, SearchParams};

pub use specs::Opponents;
use specs::optional_spec;

/// The config of the default run (`tafl train` with no arguments): `configs/cpu.toml`.
pub const DEFAULT_CONFIG: &str = include_str!("../../../configs/cpu.toml");

/// The most simulations any search of a run may make (`selfplay.full-visits`, `fast-visits`,
/// the attackers' scaled visits, `gate.visits`, `evaluate.visits`).
pub const MAX_VISITS: u64 = 1_000_000;
/// The most channels of any layer of the net (`net.channels`, `policy-channels`, `value-channels`).
pub const MAX_CHANNELS: u64 = 1024;
/// The most games of one stage (`selfplay.games-per-iteration`, `gate.games`, `evaluate.games`,
/// `warm-start.teacher-games`).
pub const MAX_GAMES: u64 = 1_000_000;
/// The most plies of one game, and of its random opening.
pub const MAX_PLIES: u64 = 10_000;
/// The most leaves of one network call within a search (`leaves-per-search`, `batch`).
pub const MAX_BATCH: u64 = 1024;
/// The most training steps of one round.
pub const MAX_STEPS: u64 = 1_000_000;
/// The most samples of the replay window.
pub const MAX_WINDOW: u64 = 20_000_000;
/// The most games played at once by a match.
pub const MAX_THREADS: u64 = 1024;

/// Why a config is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The TOML does not parse or has an unknown key (the message names it).
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    /// The variant is neither a preset nor a readable variant file.
    #[error("variant `{name}`: {message}")]
    Variant {
        /// What the config says.
        name: String,
        /// Why it does not load.
        message: String,
    },
    /// A value is out of range.
    #[error("`{key}`: {message}")]
    Invalid {
        /// The key, as `table.key`.
        key: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// A whole run config.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunConfig {
    /// The run as a whole.
    pub run: RunSection,
    /// The network's shape.
    pub net: NetSection,
    /// Self-play.
    pub selfplay: SelfPlayConfig,
    /// The trainer.
    pub optimize: OptimizeConfig,
    /// Candidate against best.
    pub gate: GateConfig,
    /// The best model against fixed opponents.
    pub evaluate: EvaluateConfig,
    /// Recorded and teacher games trained on before the first self-play game.
    pub warm_start: WarmStartConfig,
}

/// `[run]`: the variant, length and seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunSection {
    /// A preset (`copenhagen`, `copenhagen-13`, `tablut`, `brandubh`) or a variant TOML file.
    pub variant: String,
    /// Stop when the run has trained this many models (iterations) in all; 0 runs forever.
    pub iterations: u32,
    /// Seed of everything random (mixed with model ids, process ids and game numbers).
    pub seed: u64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection { variant: "copenhagen".into(), iterations: 0, seed: 1 }
    }
}

/// `[net]`: depth and width of the residual network (see `tafl_nn::TaflNetConfig`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct NetSection {
    /// Residual blocks.
    pub blocks: usize,
    /// Channels of the trunk.
    pub channels: usize,
    /// Every n-th block gets a global pooling bias; 0 for none.
    pub global_pool_interval: usize,
    /// Channels of the policy head.
    pub policy_channels: usize,
    /// Channels of the value head.
    pub value_channels: usize,
    /// Hidden width of the value head.
    pub value_hidden: usize,
    /// The net also reads the tactical planes (input encoding version 2: threatened captures,
    /// the king's reach and escape threats); a run started from a net without them grows
    /// them in at zero weight.
    pub tactical_planes: bool,
    /// The net also has an ownership head, trained on who holds each square and where the king
    /// stands when the game ends (issue 32's lever 3); a run started from a net without one
    /// grows it. Play never reads it.
    pub ownership_head: bool,
    /// The net has a policy head and a value head for each side, over one trunk (issue 32's
    /// lever 5); a run started from a net with one pair grows the second as a copy of it.
    pub heads_by_side: bool,
}

impl NetSection {
    /// The input planes of the net this section asks for.
    #[must_use]
    pub fn input_planes(&self) -> usize {
        if self.tactical_planes { tafl_nn::TACTICAL_INPUT_PLANES } else { tafl_nn::INPUT_PLANES }
    }
}

impl Default for NetSection {
    fn default() -> Self {
        NetSection {
            blocks: 6,
            channels: 64,
            global_pool_interval: 3,
            policy_channels: 32,
            value_channels: 32,
            value_hidden: 64,
            tactical_planes: false,
            ownership_head: false,
            heads_by_side: false,
        }
    }
}

/// `[selfplay]`: games in flight, search budgets, temperature, resignation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SelfPlayConfig {
    /// New self-play games per iteration (the trainer waits for them).
    pub games_per_iteration: u32,
    /// Games played at once; one leaf of each goes into one network batch.
    pub games_in_flight: usize,
    /// Leaves each search hands out per batch (more fill the batch, at some loss of quality).
    pub leaves_per_search: usize,
    /// Finished games per shard file: a killed process loses at most the games in flight and
    /// the finished games not yet written.
    pub shard_games: usize,
    /// Simulations of a full search (its policy becomes a training target).
    pub full_visits: u32,
    /// Simulations of a cheap search (playout-cap randomisation; not recorded).
    pub fast_visits: u32,
    /// Probability that a move gets a full search.
    pub full_fraction: f64,
    /// The attackers' full and cheap searches make this many times the visits of the
    /// defenders' (rounded, at least 1): a deeper attack wins more games against a sound
    /// defence, so that self-play shows the value head winning attacks to learn from.
    pub attacker_visits_scale: f64,
    /// The attackers' ratio of visits drawn per game (KataGo's asymmetric playouts): each game
    /// multiplies `attacker-visits-scale` by a factor drawn log-uniform in [1/spread, spread],
    /// keeping the sum of the two sides' visits, so that the net sees attacks against defences
    /// of every depth, some deeper than the attack. 1: the same ratio in every game.
    pub attacker_visits_spread: f64,
    /// Moves of the first `temperature-plies` plies are sampled from the improved policy
    /// raised to `1 / temperature`; later moves are the search's choice.
    pub temperature: f32,
    /// See `temperature`.
    pub temperature_plies: u32,
    /// A game longer than this many plies stops: a draw.
    pub max_plies: usize,
    /// A side resigns when its full-search root value stays below this for
    /// `resign-consecutive` of its moves in a row; -1 or below turns resignation off.
    pub resign_threshold: f32,
    /// See `resign-threshold`.
    pub resign_consecutive: u32,
    /// Fraction of games in which nobody resigns: they measure false resignations.
    pub resign_playout_fraction: f64,
    /// Policy-surprise weighting (KataGo): this share of a game's sample weight is spread over
    /// its samples in proportion to how far the search's target moved from the net's policy
    /// (the KL divergence), the rest evenly; a game's samples weigh as much in all as without
    /// it. 0: every sample weighs the same.
    pub policy_surprise_weight: f64,
    /// Positions the evaluator caches (0: no cache).
    pub cache_size: usize,
    /// The search (the `visits` key is replaced by `full-visits` and `fast-visits`).
    pub search: SearchParams,
    /// Player specs (e.g. `alphabeta:depth=3`), one of which, drawn per game, takes one side in
    /// an `opponent-fraction` of the games; none: no opponent. Only the network's side gives
    /// samples, so its moves learn from games against a defence (or attack) it did not make.
    pub opponent: Opponents,
    /// The fraction of games the opponent plays.
    pub opponent_fraction: f64,
    /// The opponent's side in its games: `attackers`, `defenders` or `either` (drawn per game).
    pub opponent_side: OpponentSide,
}

/// `opponent-side` of `[selfplay]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpponentSide {
    /// The opponent plays the attackers.
    Attackers,
    /// The opponent plays the defenders.
    Defenders,
    /// Drawn per game.
    Either,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig {
            games_per_iteration: 64,
            games_in_flight: 64,
            leaves_per_search: 1,
            shard_games: 16,
            full_visits: 24,
            fast_visits: 8,
            full_fraction: 0.25,
            attacker_visits_scale: 1.0,
            attacker_visits_spread: 1.0,
            temperature: 1.0,
            temperature_plies: 16,
            max_plies: 300,
            resign_threshold: -0.95,
            resign_consecutive: 3,
            resign_playout_fraction: 0.1,
            policy_surprise_weight: 0.0,
            cache_size: 0,
            search: SearchParams { use_gumbel: true, gumbel_k: 16, ..SearchParams::default() },
            opponent: Opponents::default(),
            opponent_fraction: 0.0,
            opponent_side: OpponentSide::Either,
        }
    }
}

/// `optimizer` of `[optimize]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    /// AdamW with decoupled weight decay.
    Adamw,
    /// SGD with momentum and L2 weight decay.
    Sgd,
}

/// `lr-schedule` of `[optimize]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LrSchedule {
    /// `learning-rate` throughout.
    Constant,
    /// Within each round, cosine from `learning-rate` down to `learning-rate * lr-final`.
    Cosine,
    /// `learning-rate * lr-final^(iteration / lr-step-iterations)`, stepped.
    Step,
}

/// `[optimize]`: the replay window, batches, optimiser and learning rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct OptimizeConfig {
    /// Samples per training step.
    pub batch_size: usize,
    /// Each new sample is seen about this many times: steps per round =
    /// `new samples * reuse / batch-size`, clamped to `min-steps..=max-steps`.
    pub reuse: f64,
    /// See `reuse`.
    pub min_steps: u32,
    /// See `reuse`.
    pub max_steps: u32,
    /// The replay window (newest samples trained on) is
    /// `clamp(window-scale * total^window-exponent, window-min, window-max)`, at most `total`.
    pub window_min: u64,
    /// See `window-min`.
    pub window_max: u64,
    /// See `window-min`.
    pub window_scale: f64,
    /// See `window-min`.
    pub window_exponent: f64,
    /// `adamw` or `sgd`.
    pub optimizer: Optimizer,
    /// Base learning rate.
    pub learning_rate: f64,
    /// `constant`, `cosine` or `step`.
    pub lr_schedule: LrSchedule,
    /// Final fraction of the learning rate (cosine), or the factor per step (step).
    pub lr_final: f64,
    /// Iterations between learning-rate steps (`step` schedule).
    pub lr_step_iterations: u32,
    /// Steps of linear warm-up at the start of the run.
    pub lr_warmup_steps: u32,
    /// Weight decay (decoupled for AdamW, L2 for SGD).
    pub weight_decay: f32,
    /// SGD momentum.
    pub momentum: f64,
    /// Weight of the value loss.
    pub value_weight: f32,
    /// Weight of the ownership head's squared error (a net with `[net] ownership-head`).
    pub ownership_weight: f32,
    /// Weight of the cross-entropy of the king's last square (ditto).
    pub king_weight: f32,
    /// Train on one of the eight board symmetries, drawn at random per sample.
    pub symmetries: bool,
    /// Imported samples (`selfplay/import/`: the warm start, `tafl import`) are drawn this many
    /// times as often as a self-play sample. Below 1, the run's own games soon outweigh the
    /// teacher's, whose value targets mostly say "attackers lose".
    pub import_weight: f32,
    /// The value target is `(1 - value-mix) * outcome + value-mix * root value` of the search
    /// that played the position, so that one lost game does not teach each of its positions
    /// the same lesson (imported samples have no search: their root value is the outcome).
    pub value_mix: f32,
    /// Seconds of training between resumable points inside a round (0: after every step), so
    /// that a killed round goes on from its last point.
    pub resume_every_seconds: f64,
    /// Shards played by a model more than this many models older than the newest are left out
    /// of the window (0: none is): with many self-play workers, some still play an old model.
    pub max_model_lag: u32,
}

impl Default for OptimizeConfig {
    fn default() -> Self {
        OptimizeConfig {
            batch_size: 128,
            reuse: 4.0,
            min_steps: 10,
            max_steps: 2000,
            window_min: 20_000,
            window_max: 500_000,
            window_scale: 250.0,
            window_exponent: 0.65,
            optimizer: Optimizer::Adamw,
            learning_rate: 1e-3,
            lr_schedule: LrSchedule::Constant,
            lr_final: 0.1,
            lr_step_iterations: 50,
            lr_warmup_steps: 0,
            weight_decay: 1e-4,
            momentum: 0.9,
            value_weight: 1.0,
            ownership_weight: 1.5,
            king_weight: 0.1,
            symmetries: true,
            import_weight: 1.0,
            value_mix: 0.0,
            resume_every_seconds: 300.0,
            max_model_lag: 0,
        }
    }
}

/// `[gate]`: the candidate plays the best model; promotion on a pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct GateConfig {
    /// Off: every new model becomes the best at once.
    pub enabled: bool,
    /// Games at most (pairs with sides swapped).
    pub games: usize,
    /// Simulations per move (no noise).
    pub visits: u32,
    /// Leaves per network call within one search.
    pub batch: usize,
    /// Random plies from the start that make each pair's opening.
    pub opening_plies: usize,
    /// Longer games are draws.
    pub max_plies: usize,
    /// Games at once.
    pub threads: usize,
    /// Score the candidate needs when the SPRT is off or undecided at the end.
    pub threshold: f64,
    /// Optional SPRT that stops the match early: `{ elo0 = 0, elo1 = 30, alpha = 0.05, beta = 0.05 }`.
    pub sprt: Option<Sprt>,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            enabled: true,
            games: 40,
            visits: 32,
            batch: 8,
            opening_plies: 4,
            max_plies: 300,
            threads: 2,
            threshold: 0.55,
            sprt: None,
        }
    }
}

/// `[evaluate]`: the best model against a ladder of fixed players and earlier checkpoints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct EvaluateConfig {
    /// Every this many iterations (0: never).
    pub every: u32,
    /// Games against each opponent.
    pub games: usize,
    /// Simulations per move of the model.
    pub visits: u32,
    /// Leaves per network call within one search.
    pub batch: usize,
    /// Fixed opponents as player specs, weakest first (e.g. `alphabeta:depth=1`).
    pub opponents: Vec<PlayerSpec>,
    /// Also play this many earlier best models (the oldest, then evenly spread).
    pub previous: usize,
    /// Random plies from the start that make each pair's opening.
    pub opening_plies: usize,
    /// Longer games are draws.
    pub max_plies: usize,
    /// Games at once.
    pub threads: usize,
}

/// `alphabeta:depth=N`.
fn alphabeta(depth: u32) -> PlayerSpec {
    PlayerSpec::from(PlayerKind::AlphaBeta(Limits { depth: Some(depth), ..Limits::default() }))
}

impl Default for EvaluateConfig {
    fn default() -> Self {
        EvaluateConfig {
            every: 5,
            games: 20,
            visits: 32,
            batch: 8,
            opponents: vec![alphabeta(1), alphabeta(2)],
            previous: 1,
            opening_plies: 4,
            max_plies: 300,
            threads: 2,
        }
    }
}

/// `[warm-start]`: games imported once, before the first self-play game, and a longer first
/// training round on them (see [`crate::import`] for why).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct WarmStartConfig {
    /// Archive record files (relative to the working directory), or `human`: the 860 finished
    /// human Copenhagen 11x11 games built into tafl.
    pub records: Vec<String>,
    /// A player spec that plays `teacher-games` games against itself (e.g. `alphabeta:depth=3`);
    /// empty for none.
    #[serde(with = "optional_spec")]
    pub teacher: Option<PlayerSpec>,
    /// When set, a player spec that takes the defenders' side in the teacher games (`teacher`
    /// then plays the attackers only): a weaker one lets the teacher show the attackers winning,
    /// which a teacher against itself almost never does.
    #[serde(with = "optional_spec")]
    pub teacher_defenders: Option<PlayerSpec>,
    /// See `teacher`.
    pub teacher_games: usize,
    /// Random plies before each teacher game (they give no sample), so that the games differ.
    pub teacher_opening_plies: usize,
    /// Teacher games longer than this are draws.
    pub teacher_max_plies: usize,
    /// Teacher games played at once.
    pub threads: usize,
    /// Training steps of the first round, on the imported samples.
    pub steps: u32,
}

impl Default for WarmStartConfig {
    fn default() -> Self {
        WarmStartConfig {
            records: Vec::new(),
            teacher: None,
            teacher_defenders: None,
            teacher_games: 0,
            teacher_opening_plies: 8,
            teacher_max_plies: 300,
            threads: 2,
            steps: 1000,
        }
    }
}

impl WarmStartConfig {
    /// True when there is anything to import.
    #[must_use]
    pub fn enabled(&self) -> bool {
        !self.records.is_empty() || (self.teacher.is_some() && self.teacher_games > 0)
    }
}

impl RunConfig {
    /// Parses and checks a config.
    ///
    /// # Errors
    /// TOML errors (an unknown key is named) and out-of-range values.
    pub fn from_toml(text: &str) -> Result<RunConfig, ConfigError> {
        let config: RunConfig = toml::from_str(text)?;
        config.check()?;
        Ok(config)
    }

    /// The config as TOML.
    #[must_use]
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }

    /// The embedded default (`configs/cpu.toml`).
    ///
    /// # Panics
    /// Never: a unit test checks that the embedded file parses.
    #[must_use]
    pub fn default_config() -> RunConfig {
        #[allow(clippy::expect_used)]
        RunConfig::from_toml(DEFAULT_CONFIG).expect("configs/cpu.toml parses")
    }

    /// Checks the ranges of the values.
    ///
    /// # Errors
    /// The first bad value, with its key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let bad = |key, message: &str| Err(ConfigError::Invalid { key, message: message.into() });
        if let Some((key, value)) = self.floats().into_iter().find(|(_, v)| !v.is_finite()) {
            return bad(key, &format!("must be a finite number, found {value}"));
        }
        let s = &self.selfplay;
        if self.net.blocks == 0 && self.net.channels == 0 {
            return bad("net.channels", "must be above 0");
        }
        if self.net.channels == 0 {
            return bad("net.channels", "must be above 0");
        }
        if s.games_per_iteration == 0 {
            return bad("selfplay.games-per-iteration", "must be above 0");
        }
        if s.games_in_flight == 0 {
            return bad("selfplay.games-in-flight", "must be above 0");
        }
        if s.shard_games == 0 {
            return bad("selfplay.shard-games", "must be above 0");
        }
        if s.full_visits == 0 || s.fast_visits == 0 {
            return bad("selfplay.full-visits", "full-visits and fast-visits must be above 0");
        }
        if !(0.0..=1.0).contains(&s.full_fraction) || s.full_fraction == 0.0 {
            return bad("selfplay.full-fraction", "must be in (0, 1]");
        }
        if !(s.attacker_visits_scale.is_finite() && s.attacker_visits_scale > 0.0 && s.attacker_visits_scale <= 1000.0)
        {
            return bad("selfplay.attacker-visits-scale", "must be above 0 and at most 1000");
        }
        if !(1.0..=1000.0).contains(&s.attacker_visits_spread) {
            return bad("selfplay.attacker-visits-spread", "must be at least 1 and at most 1000");
        }
        if !(0.0..=1.0).contains(&s.resign_playout_fraction) {
            return bad("selfplay.resign-playout-fraction", "must be in [0, 1]");
        }
        if !(0.0..=1.0).contains(&s.policy_surprise_weight) {
            return bad("selfplay.policy-surprise-weight", "must be in [0, 1]");
        }
        if s.max_plies == 0 {
            return bad("selfplay.max-plies", "must be above 0");
        }
        if !(0.0..=1.0).contains(&s.opponent_fraction) {
            return bad("selfplay.opponent-fraction", "must be in [0, 1]");
        }
        if s.opponent.is_empty() && s.opponent_fraction > 0.0 {
            return bad("selfplay.opponent-fraction", "is above 0 but selfplay.opponent is empty");
        }
        let o = &self.optimize;
        if o.batch_size == 0 {
            return bad("optimize.batch-size", "must be above 0");
        }
        if o.min_steps > o.max_steps {
            return bad("optimize.min-steps", "must not exceed max-steps");
        }
        if o.window_min > o.window_max {
            return bad("optimize.window-min", "must not exceed window-max");
        }
        if o.learning_rate <= 0.0 {
            return bad("optimize.learning-rate", "must be above 0");
        }
        if !(o.resume_every_seconds.is_finite() && o.resume_every_seconds >= 0.0) {
            return bad("optimize.resume-every-seconds", "must be 0 or more");
        }
        if self.gate.enabled && self.gate.games < 2 {
            return bad("gate.games", "must be at least 2 (a pair)");
        }
        if !(0.0..=1.0).contains(&self.gate.threshold) {
            return bad("gate.threshold", "must be a score in [0, 1]");
        }
        let w = &self.warm_start;
        if w.enabled() && w.steps == 0 {
            return bad("warm-start.steps", "must be above 0 when there is anything to import");
        }
        if let Some((key, value, max)) = self.sizes().into_iter().find(|&(_, value, max)| value > max) {
            return bad(key, &format!("must be at most {max}, found {value}"));
        }
        if f64::from(s.full_visits) * s.attacker_visits_scale > MAX_VISITS as f64 {
            return bad(
                "selfplay.attacker-visits-scale",
                &format!("times full-visits must be at most {MAX_VISITS} (the attackers' visits)"),
            );
        }
        Ok(())
    }

    /// Every float of the config with its key: none may be NaN or infinite (a NaN learning rate
    /// trains a NaN net, and a NaN compares false with every bound).
    fn floats(&self) -> Vec<(&'static str, f64)> {
        let (s, p, o) = (&self.selfplay, &self.selfplay.search, &self.optimize);
        let mut floats = vec![
            ("selfplay.full-fraction", s.full_fraction),
            ("selfplay.attacker-visits-scale", s.attacker_visits_scale),
            ("selfplay.attacker-visits-spread", s.attacker_visits_spread),
            ("selfplay.temperature", f64::from(s.temperature)),
            ("selfplay.resign-threshold", f64::from(s.resign_threshold)),
            ("selfplay.resign-playout-fraction", s.resign_playout_fraction),
            ("selfplay.policy-surprise-weight", s.policy_surprise_weight),
            ("selfplay.opponent-fraction", s.opponent_fraction),
            ("selfplay.search.c-puct", f64::from(p.c_puct)),
            ("selfplay.search.fpu-reduction", f64::from(p.fpu_reduction)),
            ("selfplay.search.dirichlet-alpha", f64::from(p.dirichlet_alpha)),
            ("selfplay.search.dirichlet-weight", f64::from(p.dirichlet_weight)),
            ("selfplay.search.temperature", f64::from(p.temperature)),
            ("selfplay.search.final-temperature", f64::from(p.final_temperature)),
            ("selfplay.search.c-visit", f64::from(p.c_visit)),
            ("selfplay.search.c-scale", f64::from(p.c_scale)),
            ("optimize.reuse", o.reuse),
            ("optimize.window-scale", o.window_scale),
            ("optimize.window-exponent", o.window_exponent),
            ("optimize.learning-rate", o.learning_rate),
            ("optimize.lr-final", o.lr_final),
            ("optimize.weight-decay", f64::from(o.weight_decay)),
            ("optimize.momentum", o.momentum),
            ("optimize.value-weight", f64::from(o.value_weight)),
            ("optimize.ownership-weight", f64::from(o.ownership_weight)),
            ("optimize.king-weight", f64::from(o.king_weight)),
            ("optimize.import-weight", f64::from(o.import_weight)),
            ("optimize.value-mix", f64::from(o.value_mix)),
            ("optimize.resume-every-seconds", o.resume_every_seconds),
            ("gate.threshold", self.gate.threshold),
        ];
        if let Some(sprt) = &self.gate.sprt {
            floats.extend([
                ("gate.sprt.elo0", sprt.elo0),
                ("gate.sprt.elo1", sprt.elo1),
                ("gate.sprt.alpha", sprt.alpha),
                ("gate.sprt.beta", sprt.beta),
            ]);
        }
        floats
    }

    /// Every size and count that memory or time grows with, its key and its bound (see
    /// `configs/README.md`): generous, but finite, so that no config aborts a run on an
    /// allocation or makes it wait forever.
    fn sizes(&self) -> [(&'static str, u64, u64); 36] {
        let (n, s, o, g, e, w) =
            (&self.net, &self.selfplay, &self.optimize, &self.gate, &self.evaluate, &self.warm_start);
        let size = |v: usize| v as u64;
        [
            ("net.blocks", size(n.blocks), 64),
            ("net.channels", size(n.channels), MAX_CHANNELS),
            ("net.policy-channels", size(n.policy_channels), MAX_CHANNELS),
            ("net.value-channels", size(n.value_channels), MAX_CHANNELS),
            ("net.value-hidden", size(n.value_hidden), 4096),
            ("selfplay.games-per-iteration", u64::from(s.games_per_iteration), MAX_GAMES),
            ("selfplay.games-in-flight", size(s.games_in_flight), 4096),
            ("selfplay.leaves-per-search", size(s.leaves_per_search), MAX_BATCH),
            ("selfplay.shard-games", size(s.shard_games), 100_000),
            ("selfplay.full-visits", u64::from(s.full_visits), MAX_VISITS),
            ("selfplay.fast-visits", u64::from(s.fast_visits), MAX_VISITS),
            ("selfplay.max-plies", size(s.max_plies), MAX_PLIES),
            ("selfplay.cache-size", size(s.cache_size), 10_000_000),
            ("optimize.batch-size", size(o.batch_size), 8192),
            ("optimize.min-steps", u64::from(o.min_steps), MAX_STEPS),
            ("optimize.max-steps", u64::from(o.max_steps), MAX_STEPS),
            ("optimize.window-min", o.window_min, MAX_WINDOW),
            ("optimize.window-max", o.window_max, MAX_WINDOW),
            ("gate.games", size(g.games), MAX_GAMES),
            ("gate.visits", u64::from(g.visits), MAX_VISITS),
            ("gate.batch", size(g.batch), MAX_BATCH),
            ("gate.opening-plies", size(g.opening_plies), MAX_PLIES),
            ("gate.max-plies", size(g.max_plies), MAX_PLIES),
            ("gate.threads", size(g.threads), MAX_THREADS),
            ("evaluate.games", size(e.games), MAX_GAMES),
            ("evaluate.visits", u64::from(e.visits), MAX_VISITS),
            ("evaluate.batch", size(e.batch), MAX_BATCH),
            ("evaluate.previous", size(e.previous), 1000),
            ("evaluate.opening-plies", size(e.opening_plies), MAX_PLIES),
            ("evaluate.max-plies", size(e.max_plies), MAX_PLIES),
            ("evaluate.threads", size(e.threads), MAX_THREADS),
            ("warm-start.teacher-games", size(w.teacher_games), MAX_GAMES),
            ("warm-start.teacher-opening-plies", size(w.teacher_opening_plies), MAX_PLIES),
            ("warm-start.teacher-max-plies", size(w.teacher_max_plies), MAX_PLIES),
            ("warm-start.threads", size(w.threads), MAX_THREADS),
            ("warm-start.steps", u64::from(w.steps), MAX_STEPS),
        ]
    }

    /// The variant the run plays: a preset by name or a variant file (relative paths are taken
    /// from `base`, the directory of the config file or the current directory).
    ///
    /// # Errors
    /// [`ConfigError::Variant`] when it is neither.
    pub fn variant(&self, base: Option<&Path>) -> Result<&'static Variant, ConfigError> {
        load_variant(&self.run.variant, base)
    }

    /// The network config for a board of side `size`.
    #[must_use]
    pub fn net_config(&self, size: u8) -> tafl_nn::TaflNetConfig {
        let n = &self.net;
        tafl_nn::TaflNetConfig::new(usize::from(size), n.input_planes(), n.blocks, n.channels)
            .with_global_pool_interval(n.global_pool_interval)
            .with_policy_channels(n.policy_channels)
            .with_value_channels(n.value_channels)
            .with_value_hidden(n.value_hidden)
            .with_ownership_head(Some(n.ownership_head))
            .with_heads_by_side(Some(n.heads_by_side))
    }
}

/// A preset by name, or a variant TOML file (relative to `base` when given and the path is not
/// found as is).
///
/// # Errors
/// [`ConfigError::Variant`] when it is neither.
pub fn load_variant(name: &str, base: Option<&Path>) -> Result<&'static Variant, ConfigError> {
    if let Some(v) = Variant::preset(name) {
        return Ok(v);
    }
    let mut path = Path::new(name).to_path_buf();
    if !path.exists()
        && let Some(base) = base
    {
        path = base.join(name);
    }
    let err = |message: String| ConfigError::Variant { name: name.to_string(), message };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| err(format!("not a preset ({}) and not a readable file: {e}", tafl_rules::PRESETS.join(", "))))?;
    let variant = Variant::from_toml(&text).map_err(|e| err(e.to_string()))?;
    Ok(variant.leak())
}

mod specs;
#[cfg(test)]
mod tests;
