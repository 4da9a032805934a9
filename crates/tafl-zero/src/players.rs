//! Player specs with a network, for the arena, the gate and the command line.
//!
//! `builtin[:visits=N,...]`: the player that ships with tafl ([`crate::builtin`]), with the keys
//! of a bundle spec as overrides.
//!
//! `mcts:model=PATH[,visits=N][,batch=N][,gumbel=BOOL][,cache=N][,seed=N][,time=DUR][,guard=PLIES]`:
//! an MCTS player guided by the checkpoint at `PATH` (a checkpoint directory, or a run directory,
//! whose `models/best` is used). `model=none` searches with uniform priors. Without noise and
//! with temperature 0: the strongest play. Every other kind goes to
//! [`tafl_arena::netless_player`].
//!
//! Checkpoints are loaded once per factory and shared by every game (the evaluator serialises
//! the forward passes and each uses every core).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tafl_arena::{PlayerFactory, PlayerSpec, SpecError, netless_player};
use tafl_nn::NetEvaluator;
use tafl_nn::evaluator::expected_for;
use tafl_rules::Variant;
use tafl_search::{MctsPlayer, Player, SearchParams, UniformEvaluator};

/// The keys an `mcts` spec takes.
pub const MCTS_KEYS: [&str; 8] = ["model", "visits", "batch", "gumbel", "cache", "seed", "time", "guard"];

/// The kinds [`ZeroFactory`] knows.
pub const KINDS: &str = "builtin, mcts, random, alphabeta, htp";

/// Builds players from specs: `mcts:` with a network, the rest by [`netless_player`].
pub struct ZeroFactory {
    variant: &'static Variant,
    nets: Mutex<HashMap<(PathBuf, usize), Arc<NetEvaluator>>>,
}

impl std::fmt::Debug for ZeroFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZeroFactory").field("variant", &self.variant.name()).finish_non_exhaustive()
    }
}

/// The checkpoint directory a `model=` path names: the shipped net's for `builtin`, the
/// directory itself when it holds a checkpoint, else the best model of a run directory.
#[must_use]
pub fn resolve_model(path: &Path) -> PathBuf {
    if path.as_os_str() == crate::builtin::BUILTIN
        && let Ok(dir) = crate::builtin::bundle_dir()
    {
        return dir.join(crate::export::WEIGHTS);
    }
    if path.join("meta.json").is_file() {
        return path.to_path_buf();
    }
    if crate::export::is_bundle(path) {
        return path.join(crate::export::WEIGHTS);
    }
    if path.join("models").is_dir()
        && let Ok(run) = crate::rundir::RunDir::open(path)
        && let Some(best) = run.best_model()
    {
        return run.model_dir(&best);
    }
    path.to_path_buf()
}

impl ZeroFactory {
    /// A factory for games of `variant`.
    #[must_use]
    pub fn new(variant: &'static Variant) -> ZeroFactory {
        ZeroFactory { variant, nets: Mutex::new(HashMap::new()) }
    }

    /// The evaluator of the checkpoint at `path`, loaded once.
    ///
    /// # Errors
    /// The checkpoint does not load (the message names the file and why).
    pub fn evaluator(&self, path: &Path, cache: usize) -> Result<Arc<NetEvaluator>, String> {
        let dir = resolve_model(path);
        let mut nets = self.nets.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(net) = nets.get(&(dir.clone(), cache)) {
            return Ok(Arc::clone(net));
        }
        let net = NetEvaluator::load(&dir, &expected_for(self.variant)).map_err(|e| format!("{}: {e}", dir.display()))?;
        let net = Arc::new(net.with_cache(cache));
        nets.insert((dir, cache), Arc::clone(&net));
        Ok(net)
    }

    fn mcts(&self, spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError> {
        spec.check_keys(&MCTS_KEYS)?;
        let model = spec.get("model").ok_or_else(|| SpecError::Missing { kind: spec.kind.clone(), key: "model".into() })?;
        let visits = spec.u64("visits")?.unwrap_or(200);
        let batch = spec.u64("batch")?.unwrap_or(8) as usize;
        let cache = spec.u64("cache")?.unwrap_or(0) as usize;
        let seed = spec.u64("seed")?.unwrap_or(0) ^ game_seed;
        let guard = u32::try_from(spec.u64("guard")?.unwrap_or(0)).unwrap_or(u32::MAX);
        let gumbel = match spec.get("gumbel") {
            None | Some("true" | "yes" | "1") => true,
            Some("false" | "no" | "0") => false,
            Some(v) => return Err(SpecError::BadValue { key: "gumbel".into(), value: v.into(), expected: "true or false".into() }),
        };
        let base = if gumbel { SearchParams::gumbel(visits as u32) } else { SearchParams::puct(visits as u32) };
        let params = base.for_play();
        if model == "none" {
            return Ok(Box::new(Named(spec.name.clone(), MctsPlayer::new(UniformEvaluator, params).with_batch(batch).with_seed(seed).with_guard(guard))));
        }
        let net = self.evaluator(Path::new(model), cache).map_err(|message| SpecError::Build { spec: spec.name.clone(), message })?;
        Ok(Box::new(Named(spec.name.clone(), MctsPlayer::new(net, params).with_batch(batch).with_seed(seed).with_guard(guard))))
    }
}

/// A player shown under the spec's name.
struct Named<P>(String, P);

impl<P: Player> Player for Named<P> {
    fn name(&self) -> String {
        self.0.clone()
    }
    fn choose(&mut self, game: &tafl_rules::Game, limits: &tafl_search::Limits) -> Result<tafl_search::MoveChoice, tafl_search::PlayerError> {
        self.1.choose(game, limits)
    }
    fn new_game(&mut self) {
        self.1.new_game();
    }
}

impl PlayerFactory for ZeroFactory {
    fn build(&self, spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError> {
        match spec.kind.as_str() {
            "mcts" => self.mcts(spec, game_seed),
            crate::builtin::BUILTIN => {
                let dir = crate::builtin::bundle_dir().map_err(|e| SpecError::Build { spec: spec.name.clone(), message: e.to_string() })?;
                crate::export::bundle_player(self, self.variant, &dir, spec, game_seed)
            }
            // A player bundle directory (`tafl export`), with `mcts` keys as overrides.
            kind if crate::export::is_bundle(Path::new(kind)) => crate::export::bundle_player(self, self.variant, Path::new(kind), spec, game_seed),
            _ => netless_player(spec, game_seed).map_err(|e| match e {
                SpecError::UnknownKind { kind, .. } => SpecError::UnknownKind { kind, known: KINDS.into() },
                e => e,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_mcts_and_netless_players() {
        let factory = ZeroFactory::new(Variant::preset("brandubh").unwrap());
        let spec: PlayerSpec = "mcts:model=none,visits=8".parse().unwrap();
        let mut p = factory.build(&spec, 1).unwrap();
        let game = tafl_rules::Game::new(Variant::preset("brandubh").unwrap());
        let choice = p.choose(&game, &spec.limits().unwrap()).unwrap();
        assert!(game.legal_moves().contains(&choice.mv));
        assert!(factory.build(&"alphabeta:depth=1".parse().unwrap(), 0).is_ok());
        let e = factory.build(&"mcts:model=none,vists=3".parse().unwrap(), 0).err().unwrap();
        assert!(e.to_string().contains("vists"), "{e}");
        let e = factory.build(&"mcts:model=/nonexistent".parse().unwrap(), 0).err().unwrap();
        assert!(matches!(e, SpecError::Build { .. }), "{e}");
        let e = factory.build(&"nope".parse().unwrap(), 0).err().unwrap();
        assert!(e.to_string().contains("mcts"), "{e}");
    }
}
