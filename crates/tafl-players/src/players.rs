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

use tafl_arena::{MAX_GUARD_PLIES, PlayerFactory, PlayerSpec, SpecError, netless_player};
use tafl_nn::NetEvaluator;
use tafl_nn::evaluator::expected_for;
use tafl_rules::Variant;
use tafl_search::{Limits, MAX_SEARCH_COUNT, MctsPlayer, Player, SearchParams, UniformEvaluator};

use crate::bundle::{MANIFEST, WEIGHTS, read_manifest};

/// The keys an `mcts` spec takes.
pub const MCTS_KEYS: [&str; 8] = ["model", "visits", "batch", "gumbel", "cache", "seed", "time", "guard"];

/// The largest `batch=` (leaves per net call) a spec may ask for.
pub const MAX_BATCH: u64 = 1024;
/// The largest `cache=` (positions kept by the evaluator's cache) a spec may ask for: about
/// 2 GB of policies at the most.
pub const MAX_CACHE: u64 = 1 << 20;

/// The kinds [`ZeroFactory`] knows.
pub const KINDS: &str = "builtin, mcts, random, alphabeta, htp, uci";

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
/// directory itself when it holds a checkpoint, else the best model of a run directory (a path
/// or a `file://` URL) or of a run in object storage (`s3://bucket/prefix`, fetched into the
/// cache).
#[must_use]
pub fn resolve_model(path: &Path) -> PathBuf {
    if path.as_os_str() == crate::builtin::BUILTIN
        && let Ok(dir) = crate::builtin::bundle_dir()
    {
        return dir.join(WEIGHTS);
    }
    if path.join("meta.json").is_file() {
        return path.to_path_buf();
    }
    if crate::bundle::is_bundle(path) {
        return path.join(WEIGHTS);
    }
    if tafl_run::RunDir::holds_models(path)
        && let Ok(run) = tafl_run::rundir::RunDir::open(path)
        && let Some(best) = run.best_model()
    {
        return run.model_dir(&best);
    }
    match tafl_run::storage::Location::parse(&path.to_string_lossy()) {
        // A `file://` URL: the directory it names.
        Ok(tafl_run::storage::Location::Local(local)) if local != path => return resolve_model(&local),
        // A run in object storage (`s3://…`): its best model, fetched into the local cache.
        Ok(tafl_run::storage::Location::S3 { .. }) => {
            if let Ok(run) = tafl_run::rundir::RunDir::open(path)
                && let Some(best) = run.best_model()
                && run.fetch_model(&best).unwrap_or(false)
            {
                return run.model_dir(&best);
            }
        }
        _ => {}
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
        let net =
            NetEvaluator::load(&dir, &expected_for(self.variant)).map_err(|e| format!("{}: {e}", dir.display()))?;
        let net = Arc::new(net.with_cache(cache));
        nets.insert((dir, cache), Arc::clone(&net));
        Ok(net)
    }

    fn mcts(&self, spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError> {
        spec.check_keys(&MCTS_KEYS)?;
        let model =
            spec.get("model").ok_or_else(|| SpecError::Missing { kind: spec.kind.clone(), key: "model".into() })?;
        let visits = spec.bounded("visits", MAX_SEARCH_COUNT)?.unwrap_or(200);
        let batch = spec.bounded("batch", MAX_BATCH)?.unwrap_or(8) as usize;
        let cache = spec.bounded("cache", MAX_CACHE)?.unwrap_or(0) as usize;
        let seed = spec.u64("seed")?.unwrap_or(0) ^ game_seed;
        let guard = spec.bounded("guard", MAX_GUARD_PLIES)?.unwrap_or(0) as u32;
        let gumbel = spec.flag("gumbel")?.unwrap_or(true);
        let base = if gumbel { SearchParams::gumbel(visits as u32) } else { SearchParams::puct(visits as u32) };
        let params = base.for_play();
        let asked = spec.limits()?;
        let default = Limits { visits: Some(visits), ..Limits::default() };
        let name = spec.name.clone();
        if model == "none" {
            let inner = MctsPlayer::new(UniformEvaluator, params).with_batch(batch).with_seed(seed).with_guard(guard);
            return Ok(Box::new(SpecPlayer { name, asked, default, gumbel, inner }));
        }
        let net = self
            .evaluator(Path::new(model), cache)
            .map_err(|message| SpecError::Build { spec: spec.name.clone(), message })?;
        let inner = MctsPlayer::new(net, params).with_batch(batch).with_seed(seed).with_guard(guard);
        Ok(Box::new(SpecPlayer { name, asked, default, gumbel, inner }))
    }
}

/// The visits of a PUCT search given a time and no visits: so many that the time, not the
/// count, ends the search (over two hours at 2 000 visits a second).
pub const TIMED_VISITS: u64 = 1 << 24;

/// An MCTS player built from a spec, shown under the spec's name, with the limits the spec
/// asks for and the defaults of its kind.
pub(crate) struct SpecPlayer<P> {
    pub(crate) name: String,
    /// The spec's own limits (`visits=`, `time=`).
    pub(crate) asked: Limits,
    /// When no time is given: the bundle's visits and time per move, or the `mcts` default visits.
    pub(crate) default: Limits,
    /// A Gumbel search plans its sequential halving on its visits, so a time never lifts them.
    pub(crate) gumbel: bool,
    pub(crate) inner: P,
}

impl<P> SpecPlayer<P> {
    /// The limits of one move: the caller's (a clock, `--move-time`), else the spec's. A time
    /// without visits lets a PUCT search run until the time is up, so `builtin:time=1s`
    /// thinks for a second rather than stopping at the bundle's visits; without a time, the
    /// defaults apply.
    pub(crate) fn limits(&self, caller: &Limits) -> Limits {
        let mut limits = caller.clone();
        limits.visits = limits.visits.or(self.asked.visits);
        limits.time = limits.time.or(self.asked.time);
        if limits.time.is_none() {
            limits.time = self.default.time;
            limits.visits = limits.visits.or(self.default.visits);
        } else if self.gumbel {
            limits.visits = limits.visits.or(self.default.visits);
        } else {
            limits.visits = limits.visits.or(Some(TIMED_VISITS));
        }
        limits
    }
}

impl<P: Player> Player for SpecPlayer<P> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn choose(
        &mut self,
        game: &tafl_rules::Game,
        limits: &Limits,
    ) -> Result<tafl_search::MoveChoice, tafl_search::PlayerError> {
        let limits = self.limits(limits);
        self.inner.choose(game, &limits)
    }
    fn new_game(&mut self) {
        self.inner.new_game();
    }
}

impl PlayerFactory for ZeroFactory {
    fn build(&self, spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError> {
        match spec.kind.as_str() {
            "mcts" => self.mcts(spec, game_seed),
            crate::builtin::BUILTIN => {
                let dir = crate::builtin::bundle_dir()
                    .map_err(|e| SpecError::Build { spec: spec.name.clone(), message: e.to_string() })?;
                bundle_player(self, self.variant, &dir, spec, game_seed)
            }
            // A player bundle directory (`tafl export`), with `mcts` keys as overrides.
            kind if crate::bundle::is_bundle(Path::new(kind)) => {
                bundle_player(self, self.variant, Path::new(kind), spec, game_seed)
            }
            _ => netless_player(spec, game_seed).map_err(|e| match e {
                SpecError::UnknownKind { kind, .. } => SpecError::UnknownKind { kind, known: KINDS.into() },
                e => e,
            }),
        }
    }
}

/// The keys a bundle spec (`DIR:visits=800`) takes as overrides.
pub const BUNDLE_KEYS: [&str; 7] = ["visits", "batch", "gumbel", "cache", "seed", "time", "guard"];

/// Builds the player of the bundle at `dir` for `factory`'s variant, with the overrides of
/// `spec` (a spec whose kind is the bundle's path).
///
/// # Errors
/// `player.toml` does not read; the bundle is for another variant; the weights do not load;
/// an override is unknown or malformed.
pub fn bundle_player(
    factory: &ZeroFactory,
    variant: &'static Variant,
    dir: &Path,
    spec: &PlayerSpec,
    game_seed: u64,
) -> Result<Box<dyn Player>, SpecError> {
    spec.check_keys(&BUNDLE_KEYS)?;
    let build = |message: String| SpecError::Build { spec: spec.name.clone(), message };
    let manifest = read_manifest(dir).map_err(|e| build(e.to_string()))?;
    if manifest.variant != variant.name() {
        return Err(build(format!(
            "{}: variant = {:?}, but the game is {}",
            dir.join(MANIFEST).display(),
            manifest.variant,
            variant.name()
        )));
    }
    let s = &manifest.search;
    let visits = spec.bounded("visits", MAX_SEARCH_COUNT)?.map_or(s.visits, |v| v as u32);
    let batch = spec.bounded("batch", MAX_BATCH)?.map_or(s.batch, |b| b as usize);
    let cache = spec.bounded("cache", MAX_CACHE)?.unwrap_or(0) as usize;
    let seed = spec.u64("seed")?.unwrap_or(0) ^ game_seed;
    let guard = spec.bounded("guard", MAX_GUARD_PLIES)?.map_or(s.guard, |g| g as u32);
    let gumbel = spec.flag("gumbel")?.unwrap_or(s.gumbel);
    let time = s.time().map_err(|e| build(format!("{}: {e}", dir.join(MANIFEST).display())))?;
    let base = if gumbel { SearchParams::gumbel(visits) } else { SearchParams::puct(visits) };
    let net = factory.evaluator(&dir.join(WEIGHTS), cache).map_err(build)?;
    let inner = MctsPlayer::new(net, base.for_play()).with_batch(batch).with_seed(seed).with_guard(guard);
    let asked = spec.limits()?;
    let default = Limits { visits: Some(u64::from(visits)), time, ..Limits::default() };
    Ok(Box::new(SpecPlayer { name: spec.name.clone(), asked, default, gumbel, inner }))
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

    #[test]
    fn a_time_without_visits_lets_a_puct_search_think_until_it_is_up() {
        use std::time::Duration;
        let second = Some(Duration::from_secs(1));
        let player = |asked: Limits, gumbel| SpecPlayer {
            name: "p".into(),
            asked,
            default: Limits { visits: Some(200), time: Some(Duration::from_secs(3)), ..Limits::default() },
            gumbel,
            inner: (),
        };
        let none = Limits::default;
        // Nothing asked: the defaults (a bundle's visits and time per move).
        assert_eq!(
            player(none(), false).limits(&none()),
            Limits { visits: Some(200), time: Some(Duration::from_secs(3)), ..none() }
        );
        // `time=1s` alone: the time ends the search; with `visits=` as well, both do.
        let timed = || Limits { time: second, ..none() };
        assert_eq!(
            player(timed(), false).limits(&none()),
            Limits { visits: Some(TIMED_VISITS), time: second, ..none() }
        );
        let both = || Limits { visits: Some(300), time: second, ..none() };
        assert_eq!(player(both(), false).limits(&none()), both());
        // A Gumbel search keeps its visits, which plan its halving.
        assert_eq!(player(timed(), true).limits(&none()), Limits { visits: Some(200), time: second, ..none() });
        // A caller's clock counts as a time; the caller's limits come before the spec's.
        let clock = Limits { time: Some(Duration::from_millis(500)), ..none() };
        assert_eq!(player(none(), false).limits(&clock), Limits { visits: Some(TIMED_VISITS), ..clock });
        assert_eq!(
            player(both(), false).limits(&Limits { visits: Some(50), ..none() }),
            Limits { visits: Some(50), time: second, ..none() }
        );
    }

    #[test]
    fn an_mcts_spec_with_a_time_searches_past_its_default_visits() {
        let variant = Variant::preset("brandubh").unwrap();
        let factory = ZeroFactory::new(variant);
        let game = tafl_rules::Game::new(variant);
        let searched = |text: &str, limits: Limits| {
            let mut p = factory.build(&text.parse().unwrap(), 1).unwrap();
            p.choose(&game, &limits).unwrap().nodes
        };
        // Uniform priors search many thousands of visits in 300 ms on any machine.
        let timed: PlayerSpec = "mcts:model=none,gumbel=false,time=300ms".parse().unwrap();
        assert!(searched(&timed.name, timed.limits().unwrap()) > 200);
        // Not passed by the caller (`tafl play` passes only --move-time): the spec's own time.
        assert!(searched(&timed.name, Limits::default()) > 200);
        assert_eq!(searched("mcts:model=none,gumbel=false,visits=50,time=10s", Limits::default()), 50);
        assert_eq!(searched("mcts:model=none,gumbel=false", Limits::default()), 200);
    }
}
