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
use std::time::Duration;

use tafl_arena::{NetSearch, PlayerFactory, PlayerKind, PlayerSpec, SpecError, netless_player};
use tafl_nn::NetEvaluator;
use tafl_nn::evaluator::expected_for;
use tafl_rules::Variant;
use tafl_search::{Limits, MctsPlayer, Player, SearchParams, UniformEvaluator};

use crate::bundle::{BundleSearch, MANIFEST, WEIGHTS, read_manifest};

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

    /// An MCTS player over the net at `model` (`None`: uniform priors), with the settings of
    /// `search` over the player's own (`own`, and `own_time` a move when the caller gives none).
    fn net_player(
        &self,
        spec: &PlayerSpec,
        model: Option<&Path>,
        (own, own_time): (&BundleSearch, Option<Duration>),
        search: &NetSearch,
        game_seed: u64,
    ) -> Result<Box<dyn Player>, SpecError> {
        let visits = search.visits.map_or(own.visits, |v| v as u32);
        let gumbel = search.gumbel.unwrap_or(own.gumbel);
        let base = if gumbel { SearchParams::gumbel(visits) } else { SearchParams::puct(visits) };
        let batch = search.batch.unwrap_or(own.batch);
        let seed = search.seed.unwrap_or(0) ^ game_seed;
        let guard = search.guard.unwrap_or(own.guard);
        let name = spec.name().to_string();
        let asked = search.limits();
        let default = Limits { visits: Some(u64::from(visits)), time: own_time, ..Limits::default() };
        let Some(model) = model else {
            let inner = MctsPlayer::new(UniformEvaluator, base.for_play()).with_batch(batch).with_seed(seed);
            return Ok(Box::new(SpecPlayer { name, asked, default, gumbel, inner: inner.with_guard(guard) }));
        };
        let net = self
            .evaluator(model, search.cache.unwrap_or(0))
            .map_err(|message| SpecError::Build { spec: name.clone(), message })?;
        let inner = MctsPlayer::new(net, base.for_play()).with_batch(batch).with_seed(seed).with_guard(guard);
        Ok(Box::new(SpecPlayer { name, asked, default, gumbel, inner }))
    }

    /// The player of the bundle at `dir`, with the overrides of `search`.
    fn bundle_player(
        &self,
        spec: &PlayerSpec,
        dir: &Path,
        search: &NetSearch,
        game_seed: u64,
    ) -> Result<Box<dyn Player>, SpecError> {
        let build = |message: String| SpecError::Build { spec: spec.name().to_string(), message };
        let manifest = read_manifest(dir).map_err(|e| build(e.to_string()))?;
        if manifest.variant != self.variant.name() {
            return Err(build(format!(
                "{}: variant = {:?}, but the game is {}",
                dir.join(MANIFEST).display(),
                manifest.variant,
                self.variant.name()
            )));
        }
        let time = manifest.search.time().map_err(|e| build(format!("{}: {e}", dir.join(MANIFEST).display())))?;
        self.net_player(spec, Some(&dir.join(WEIGHTS)), (&manifest.search, time), search, game_seed)
    }
}

/// The settings of an `mcts` spec that sets nothing: 200 visits, Gumbel, 8 leaves a call.
fn mcts_defaults() -> BundleSearch {
    BundleSearch { visits: 200, time_per_move: None, gumbel: true, batch: 8, guard: 0 }
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
        match spec.kind() {
            PlayerKind::Mcts { model, search } => {
                self.net_player(spec, model.as_deref(), (&mcts_defaults(), None), search, game_seed)
            }
            PlayerKind::Builtin(search) => {
                let dir = crate::builtin::bundle_dir()
                    .map_err(|e| SpecError::Build { spec: spec.name().to_string(), message: e.to_string() })?;
                self.bundle_player(spec, &dir, search, game_seed)
            }
            PlayerKind::Bundle { dir, search } => self.bundle_player(spec, dir, search, game_seed),
            _ => netless_player(spec, game_seed),
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
        let choice = p.choose(&game, &spec.limits()).unwrap();
        assert!(game.legal_moves().contains(&choice.mv));
        assert!(factory.build(&"alphabeta:depth=1".parse().unwrap(), 0).is_ok());
        let e = factory.build(&"mcts:model=/nonexistent".parse().unwrap(), 0).err().unwrap();
        assert!(matches!(e, SpecError::Build { .. }), "{e}");
        // Not a bundle: the directory has no player.toml.
        let e = factory.build(&format!("{}:visits=3", std::env::temp_dir().display()).parse().unwrap(), 0);
        assert!(e.err().unwrap().to_string().contains("player.toml"));
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
        assert!(searched(timed.name(), timed.limits()) > 200);
        // Not passed by the caller (`tafl play` passes only --move-time): the spec's own time.
        assert!(searched(timed.name(), Limits::default()) > 200);
        assert_eq!(searched("mcts:model=none,gumbel=false,visits=50,time=10s", Limits::default()), 50);
        assert_eq!(searched("mcts:model=none,gumbel=false", Limits::default()), 200);
    }
}
