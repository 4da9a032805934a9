//! [`NetEvaluator`]: the network behind the search's [`Evaluator`] trait.
//!
//! A batch of games becomes one forward pass: the games are encoded
//! ([`crate::encoding`]), the net predicts logits and values, and each game gets the softmax of
//! its legal moves' logits, in `game.legal_moves()` order, with the value for the side to move.
//!
//! An optional cache ([`NetEvaluator::with_cache`]) remembers evaluations by position hash,
//! repetition count and step of the plies plane: everything the encoding reads, so a cached
//! evaluation is the one the net would give. Positions repeated inside one batch (all games
//! of a self-play batch start from the same position) go through the net once.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use burn::module::Module;
use tafl_rules::{Game, Variant};
use tafl_search::{Evaluation, Evaluator};

use crate::backend::Device;
use crate::checkpoint::{self, CheckpointError, Expected};
use crate::encoding::{ENCODING_VERSION, encode_games, move_index, planes_of, plies_bucket, version_of};
use crate::model::{PlanesLengthError, Prediction, TaflNet, TaflNetConfig};
use crate::packed::{InferencePath, PackedNet};
use crate::policy::softmax_at;

/// What [`checkpoint::load`] should require of a checkpoint for `variant` under this build's
/// encodings (the newest and every one before it).
#[must_use]
pub fn expected_for(variant: &Variant) -> Expected {
    Expected { variant: variant.name().to_owned(), encoding_version: ENCODING_VERSION }
}

/// A network that evaluates batches of games for the search.
///
/// On the CPU the positions go through a [`PackedNet`] (see [`crate::packed`]); on a GPU,
/// or with [`InferencePath::Stock`], through Burn's forward. Burn modules are `Send` but not
/// `Sync`, so the net sits behind a mutex: one forward pass at a time, each using every core
/// through the backend's own threads.
#[derive(Debug)]
pub struct NetEvaluator {
    net: Mutex<TaflNet>,
    /// The net packed for [`PackedNet::predict`], when the path is not `Stock`.
    packed: Option<PackedNet>,
    path: InferencePath,
    config: TaflNetConfig,
    device: Device,
    cache: Option<EvalCache>,
}

impl NetEvaluator {
    /// Wraps `net` (built from `config`, on `device`) for inference: batch norm in evaluation
    /// mode, no autodiff, on [`InferencePath::default_for_backend`].
    ///
    /// # Panics
    /// If no encoding version has `config.input_planes` planes ([`version_of`]): such a net
    /// cannot be fed.
    #[must_use]
    pub fn new(net: TaflNet, config: TaflNetConfig, device: Device) -> Self {
        assert!(version_of(config.input_planes).is_some(), "no encoding has {} input planes", config.input_planes);
        let net = net.valid();
        let path = InferencePath::default_for_backend();
        let packed = pack(&net, &config, path, &device);
        Self { net: Mutex::new(net), packed, path, config, device, cache: None }
    }

    /// This evaluator on another forward pass (`tafl bench` compares them); the cache, which
    /// any path fills with the same evaluations up to rounding, is kept.
    #[must_use]
    pub fn with_path(mut self, path: InferencePath) -> Self {
        let packed = pack(&self.lock(), &self.config, path, &self.device);
        self.packed = packed;
        self.path = path;
        self
    }

    /// The forward pass in use.
    #[must_use]
    pub fn path(&self) -> InferencePath {
        self.path
    }

    /// Loads the checkpoint in `dir` onto [`crate::backend::device`].
    ///
    /// # Errors
    /// Any [`CheckpointError`] of [`checkpoint::load`]; [`CheckpointError::WrongEncoding`] when
    /// the checkpoint was trained on an encoding newer than [`ENCODING_VERSION`], whatever
    /// `expected` says; [`CheckpointError::Corrupt`] when its config reads another number of
    /// input planes than its encoding has.
    pub fn load(dir: &Path, expected: &Expected) -> Result<Self, CheckpointError> {
        let device = crate::backend::device();
        Self::checked(dir, checkpoint::load(dir, expected, &device)?, device)
    }

    /// [`NetEvaluator::load`] of a checkpoint's files already in memory (`dir` names them in
    /// errors).
    ///
    /// # Errors
    /// As [`NetEvaluator::load`], less the I/O errors.
    pub fn decode(
        dir: &Path,
        files: checkpoint::CheckpointFiles,
        expected: &Expected,
    ) -> Result<Self, CheckpointError> {
        let device = crate::backend::device();
        Self::checked(dir, checkpoint::decode(dir, files, expected, &device)?, device)
    }

    fn checked(dir: &Path, loaded: checkpoint::Checkpoint, device: Device) -> Result<Self, CheckpointError> {
        let version = loaded.meta.encoding_version;
        let Some(planes) = planes_of(version) else {
            return Err(CheckpointError::WrongEncoding { expected: ENCODING_VERSION, found: version });
        };
        if loaded.config.input_planes != planes {
            return Err(CheckpointError::Corrupt {
                path: dir.join("config.json"),
                reason: format!(
                    "{} input planes under encoding version {version}, which has {planes}",
                    loaded.config.input_planes
                ),
            });
        }
        Ok(Self::new(loaded.model, loaded.config, device))
    }

    /// Adds an evaluation cache of about `capacity` entries (emptied whenever it fills up);
    /// 0 removes the cache.
    #[must_use]
    pub fn with_cache(mut self, capacity: usize) -> Self {
        self.cache = (capacity > 0).then(|| EvalCache::new(capacity));
        self
    }

    /// The net's config.
    #[must_use]
    pub fn config(&self) -> &TaflNetConfig {
        &self.config
    }

    /// The device the net runs on.
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A copy of the network (for saving, or for a trainer to start from).
    #[must_use]
    pub fn net(&self) -> TaflNet {
        self.lock().clone()
    }

    /// Hits, misses and entries of the cache; `None` without a cache.
    #[must_use]
    pub fn cache_stats(&self) -> Option<CacheStats> {
        self.cache.as_ref().map(EvalCache::stats)
    }

    /// Empties the cache (after the weights it remembers have changed hands, say).
    pub fn clear_cache(&self) {
        if let Some(cache) = &self.cache {
            cache.clear();
        }
    }

    fn lock(&self) -> MutexGuard<'_, TaflNet> {
        // The net is never mutated through the lock, so a panic elsewhere cannot leave it broken.
        self.net.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the net on already encoded positions (`[batch][plane][rank][file]`, see
    /// [`crate::encoding`]): raw logits over the whole policy layout and values. For callers
    /// that encode themselves, for example under a random symmetry.
    ///
    /// # Errors
    /// [`PlanesLengthError`] when `planes` is not a whole number of positions.
    pub fn evaluate_planes(&self, planes: &[f32]) -> Result<Prediction, PlanesLengthError> {
        if planes.is_empty() {
            return Ok(Prediction { policy_logits: Vec::new(), values: Vec::new() });
        }
        match &self.packed {
            Some(packed) => packed.predict(planes),
            None => self.lock().predict(&self.config, planes, &self.device),
        }
    }

    /// Evaluates `games` with the net, bypassing the cache.
    fn evaluate_with_net(&self, games: &[&Game]) -> Vec<Evaluation> {
        if games.is_empty() {
            return Vec::new();
        }
        let size = u8::try_from(self.config.board_size).unwrap_or(u8::MAX);
        let planes = encode_games(games, size, self.config.input_planes);
        let prediction =
            self.evaluate_planes(&planes).unwrap_or_else(|e| unreachable!("encode_games writes whole positions: {e}"));
        let moves = self.config.policy_len();
        assert_eq!(prediction.policy_logits.len(), games.len() * moves, "the net returned a short policy");
        assert_eq!(prediction.values.len(), games.len(), "the net returned too few values");
        games
            .iter()
            .zip(prediction.policy_logits.chunks_exact(moves))
            .zip(&prediction.values)
            .map(|((game, logits), &value)| {
                let indices: Vec<usize> = game.legal_moves().iter().map(|&m| move_index(m, size)).collect();
                Evaluation { policy: softmax_at(logits, &indices), value }
            })
            .collect()
    }
}

/// `net` packed for `path`, or `None` for the stock path.
fn pack(net: &TaflNet, config: &TaflNetConfig, path: InferencePath, device: &Device) -> Option<PackedNet> {
    match path {
        InferencePath::Stock => None,
        InferencePath::Fast => Some(PackedNet::new(net, config)),
        InferencePath::FastBurnMatmul => Some(PackedNet::new(net, config).with_burn_matmul(device)),
        InferencePath::Winograd => Some(PackedNet::new(net, config).with_winograd()),
    }
}

impl Evaluator for NetEvaluator {
    /// # Panics
    /// If a game is not on the net's board size.
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation> {
        let Some(cache) = &self.cache else {
            return self.evaluate_with_net(games);
        };
        let mut out: Vec<Option<Evaluation>> = vec![None; games.len()];
        // Games the net must see (one per key), and which of them answers each other miss.
        let mut unique: Vec<&Game> = Vec::new();
        let mut unique_keys: Vec<CacheKey> = Vec::new();
        let mut answered_by: Vec<(usize, usize)> = Vec::new();
        let mut first_of: HashMap<CacheKey, usize> = HashMap::new();
        for (i, &game) in games.iter().enumerate() {
            let key = CacheKey::of(game);
            let legal = game.legal_moves().len();
            if let Some(hit) = cache.get(&key, legal) {
                out[i] = Some(hit);
                continue;
            }
            let slot = match first_of.entry(key) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    unique.push(game);
                    unique_keys.push(key);
                    *e.insert(unique.len() - 1)
                }
            };
            answered_by.push((i, slot));
        }
        let fresh = self.evaluate_with_net(&unique);
        for (key, evaluation) in unique_keys.into_iter().zip(&fresh) {
            cache.insert(key, evaluation.clone());
        }
        for (i, slot) in answered_by {
            out[i] = Some(fresh[slot].clone());
        }
        out.into_iter().map(|e| e.unwrap_or_else(|| unreachable!("every game is a hit or a miss"))).collect()
    }
}

/// Everything the encoding reads of a game, condensed: two games with equal keys encode
/// identically (up to a Zobrist collision, which the length check in [`EvalCache::get`]
/// catches when it matters).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct CacheKey {
    hash: u64,
    repetitions: u8,
    plies: u8,
}

impl CacheKey {
    fn of(game: &Game) -> Self {
        // The encoding only distinguishes 1, 2 and 3 or more occurrences.
        let repetitions = game.repetitions().min(3) as u8;
        let plies = u8::try_from(plies_bucket(game.plies_since_capture())).unwrap_or(u8::MAX);
        Self { hash: game.position().hash(), repetitions, plies }
    }
}

/// Counters of an evaluation cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheStats {
    /// Evaluations answered from the cache.
    pub hits: u64,
    /// Evaluations that went to the net (duplicates within a batch count once per game).
    pub misses: u64,
    /// Entries held now.
    pub entries: usize,
}

/// Shards keep threads that evaluate at the same time from waiting on one lock.
const SHARDS: usize = 16;

#[derive(Debug)]
struct EvalCache {
    shards: Vec<Mutex<HashMap<CacheKey, Evaluation>>>,
    per_shard: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl EvalCache {
    fn new(capacity: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard: capacity.div_ceil(SHARDS).max(1),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn shard(&self, key: &CacheKey) -> MutexGuard<'_, HashMap<CacheKey, Evaluation>> {
        // The high bits of a Zobrist hash are as random as the low ones; HashMap uses the low.
        let index = (key.hash >> 58) as usize % SHARDS;
        // A panic while holding a shard leaves at worst a missing entry.
        self.shards[index].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached evaluation of `key`, if it has one prior per legal move.
    fn get(&self, key: &CacheKey, legal_moves: usize) -> Option<Evaluation> {
        let found = self.shard(key).get(key).filter(|e| e.policy.len() == legal_moves).cloned();
        let counter = if found.is_some() { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    fn insert(&self, key: CacheKey, evaluation: Evaluation) {
        let mut shard = self.shard(&key);
        if shard.len() >= self.per_shard {
            shard.clear();
        }
        shard.insert(key, evaluation);
    }

    fn clear(&self) {
        for shard in &self.shards {
            shard.lock().unwrap_or_else(PoisonError::into_inner).clear();
        }
    }

    fn stats(&self) -> CacheStats {
        let entries = self.shards.iter().map(|s| s.lock().unwrap_or_else(PoisonError::into_inner).len()).sum();
        CacheStats { hits: self.hits.load(Ordering::Relaxed), misses: self.misses.load(Ordering::Relaxed), entries }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::device;
    use crate::checkpoint::CheckpointMeta;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn small_net(variant: &Variant) -> NetEvaluator {
        let config =
            TaflNetConfig::new(usize::from(variant.size()), crate::INPUT_PLANES, 2, 8).with_global_pool_interval(2);
        let d = device();
        NetEvaluator::new(config.init(&d), config, d)
    }

    fn random_games(variant: &'static Variant, n: usize, seed: u64) -> Vec<Game> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut games = vec![Game::new(variant)];
        let mut game = Game::new(variant);
        while games.len() < n {
            let moves = game.legal_moves();
            if moves.is_empty() {
                game = Game::new(variant);
                continue;
            }
            game.play(moves[rng.random_range(0..moves.len())]).expect("legal");
            if !game.outcome().is_over() {
                games.push(game.clone());
            }
        }
        games
    }

    #[test]
    fn policy_is_a_distribution_over_legal_moves() {
        for name in ["brandubh", "copenhagen"] {
            let variant = Variant::preset(name).expect("preset");
            let evaluator = small_net(variant);
            let games = random_games(variant, 12, 5);
            let refs: Vec<&Game> = games.iter().collect();
            let evaluations = evaluator.evaluate(&refs);
            assert_eq!(evaluations.len(), games.len());
            for (game, e) in games.iter().zip(&evaluations) {
                assert_eq!(e.policy.len(), game.legal_moves().len());
                assert!(e.policy.iter().all(|&p| p > 0.0 && p.is_finite()));
                assert!((e.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{name}");
                assert!((-1.0..=1.0).contains(&e.value));
            }
            assert!(evaluator.evaluate(&[]).is_empty());
        }
    }

    #[test]
    fn every_path_evaluates_alike() {
        let variant = Variant::copenhagen();
        let stock = small_net(variant).with_path(InferencePath::Stock);
        let games = random_games(variant, 40, 3);
        let refs: Vec<&Game> = games.iter().collect();
        let reference = stock.evaluate(&refs);
        for path in [InferencePath::Fast, InferencePath::FastBurnMatmul, InferencePath::Winograd] {
            let other = NetEvaluator::new(stock.net(), stock.config().clone(), device()).with_path(path);
            assert_eq!(other.path(), path);
            for (a, b) in reference.iter().zip(&other.evaluate(&refs)) {
                assert!((a.value - b.value).abs() < 1e-4, "{path:?}");
                assert!(a.policy.iter().zip(&b.policy).all(|(p, q)| (p - q).abs() < 1e-4), "{path:?}");
            }
        }
    }

    #[test]
    fn cached_evaluations_equal_uncached_ones() {
        let variant = Variant::preset("brandubh").expect("preset");
        let plain = small_net(variant);
        let cached = NetEvaluator::new(plain.net(), plain.config().clone(), device()).with_cache(1000);
        let games = random_games(variant, 20, 9);
        // The start position three times in one batch, and the whole batch twice.
        let mut refs: Vec<&Game> = games.iter().collect();
        refs.extend([&games[0], &games[0]]);
        let reference = plain.evaluate(&refs);
        let first = cached.evaluate(&refs);
        let second = cached.evaluate(&refs);
        assert_eq!(first, second, "hits must return what the misses stored");
        for (a, b) in reference.iter().zip(&first) {
            assert!((a.value - b.value).abs() < 1e-5);
            for (p, q) in a.policy.iter().zip(&b.policy) {
                assert!((p - q).abs() < 1e-5);
            }
        }
        let stats = cached.cache_stats().expect("cache");
        assert_eq!(stats.hits, refs.len() as u64);
        assert_eq!(stats.misses, refs.len() as u64);
        assert!(stats.entries <= games.len());
        cached.clear_cache();
        assert_eq!(cached.cache_stats().map(|s| s.entries), Some(0));
    }

    #[test]
    fn a_saved_checkpoint_evaluates_identically() {
        let variant = Variant::copenhagen();
        let evaluator = small_net(variant);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("tafl-nn-evaluator-{}-{nanos}", std::process::id()));
        // A ten-plane net under version 2's name does not load: its planes would not match.
        let mislabelled = dir.with_extension("v2");
        let meta = CheckpointMeta::new(variant.name(), 2);
        checkpoint::save(&mislabelled, &evaluator.net(), evaluator.config(), &meta, None).expect("save");
        let refused = NetEvaluator::load(&mislabelled, &expected_for(variant));
        let _ = std::fs::remove_dir_all(&mislabelled);
        assert!(matches!(refused, Err(CheckpointError::Corrupt { .. })), "{refused:?}");
        let version = version_of(evaluator.config().input_planes).expect("a known plane count");
        let meta = CheckpointMeta::new(variant.name(), version);
        checkpoint::save(&dir, &evaluator.net(), evaluator.config(), &meta, None).expect("save");
        let loaded = NetEvaluator::load(&dir, &expected_for(variant));
        let wrong = NetEvaluator::load(&dir, &expected_for(Variant::preset("tablut").expect("preset")));
        let _ = std::fs::remove_dir_all(&dir);
        let loaded = loaded.expect("load");
        assert!(matches!(wrong, Err(CheckpointError::WrongVariant { .. })));
        let games = random_games(variant, 6, 1);
        let refs: Vec<&Game> = games.iter().collect();
        assert_eq!(loaded.evaluate(&refs), evaluator.evaluate(&refs));
    }

    #[test]
    fn evaluate_planes_checks_lengths() {
        let evaluator = small_net(Variant::preset("brandubh").expect("preset"));
        let len = crate::encoding::input_len(7, crate::INPUT_PLANES);
        let p = evaluator.evaluate_planes(&vec![0.0; 2 * len]).expect("two positions");
        assert_eq!((p.values.len(), p.policy_logits.len()), (2, 2 * crate::encoding::policy_len(7)));
        assert!(evaluator.evaluate_planes(&vec![0.0; len + 1]).is_err());
    }
}
