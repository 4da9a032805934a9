//! The run directory: where every stage reads and writes, and the state derived from it.
//!
//! ```text
//! <run>/config.toml              the config the run uses
//! <run>/models/m000000/          checkpoints (tafl_nn::checkpoint); meta.json is written last
//! <run>/models/best              the id self-play uses, one line (a local run's hint)
//! <run>/models/promoted/<id>     one empty object per model made best, never removed
//! <run>/selfplay/<model>/*.bin   sample shards; *.csv beside them: the games as archive lines
//! <run>/arena/gate-<id>.json     gating results; eval-<id>.json evaluation results; *.csv records
//! <run>/logs/metrics.jsonl       one JSON object per event (a local run)
//! <run>/logs/metrics/<writer>/<ms>-<n>.json   one event per object (a run in object storage)
//! <run>/trainer/fence-<n>.json   the trainer holding the run; release-<n> once it let go
//! <run>/resume/<parent>/step-N/  the last resumable point of a training round in progress
//! <run>/report/                  plots and index.html
//! ```
//! Nothing is kept in memory between stages: the state (latest model, best model, games and
//! samples on disk, pending gates and evaluations) is read back from these files, so a process
//! killed at any moment resumes where it stopped.
//!
//! # Storage and many writers
//! The run lives in a [`Store`](crate::storage::Store): a local directory (a plain path or
//! `file:///path`) or object storage (`s3://bucket/prefix`). Only the operations every object
//! store has are used (list, get, put-if-absent, delete: no rename, no append, no overwrite),
//! under these rules:
//! * **Shards** are immutable, named `<ms>-<worker>-<n>.bin` (time, worker id, sequence), written
//!   whole and create-only; an upload retried after a lost reply finds its own bytes and counts
//!   as done. The header names the model that played them; the trainer leaves out shards more
//!   than `optimize.max-model-lag` models old.
//! * **Models** are written create-only under increasing ids, `meta.json` last: a model without
//!   it is incomplete and ignored. Only the fenced trainer writes models (the first random
//!   model excepted, where the first writer wins and the others use it).
//! * **Best** is derived from a listing: the highest id under `models/promoted/` that is a
//!   complete model (a local run reads its `models/best` hint first, as before).
//! * **One trainer**: a trainer claims `trainer/fence-<n+1>.json` create-only; a second one
//!   finds a fence without a release and stops, naming the first. Before it publishes a model,
//!   a trainer checks that the newest fence is still its own.
//! * **Metrics** of a run in object storage are one object per event and writer; readers merge
//!   them (and a local run's `logs/metrics.jsonl`) by time.
//!
//! A run in object storage is mirrored into a local cache (`$TAFL_CACHE_DIR`, else
//! `~/.cache/tafl`, under `runs/s3/<bucket>/<prefix>/`): immutable objects (shards, models,
//! metrics) are fetched once; a worker writes each new object there and into a spool
//! (`.spool/`) first and uploads from the spool, so that storage unreachable for a while only
//! delays uploads. Training-round resume points stay in the cache of the trainer's machine.

mod arena;
mod fence;
mod metrics;
mod models;
mod objects;
mod shards;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

/// The run's config file, at its root: the one name every reader and writer uses.
pub const CONFIG_FILE: &str = "config.toml";

pub use arena::{eval_records_name, eval_result_name, gate_records_name, gate_result_name};
pub use fence::FenceHolder;
pub use models::ModelInfo;
pub use shards::ShardInfo;

use tafl_files::write_atomic;

use crate::RunError;
use crate::storage::{LocalStore, Location, Put, Store, StoreError};

/// The run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    /// The run itself (a local store), or its local cache (a remote one).
    root: PathBuf,
    /// Its name ([`Location::name`]).
    name: String,
    store: Arc<dyn Store>,
    remote: bool,
    take_over: bool,
    fence: Arc<Mutex<Option<fence::Fence>>>,
    metric_seq: Arc<AtomicU32>,
    /// The last best model seen (a remote run whose store does not answer keeps playing it).
    last_best: Arc<Mutex<Option<String>>>,
}

/// The prefix of a resume point's directory: `step-<step>`.
const RESUME_STEP_PREFIX: &str = "step-";

/// The id of the `n`-th model.
#[must_use]
pub fn model_id(n: u32) -> String {
    format!("m{n:06}")
}

/// The number of a model id, if it is one.
#[must_use]
pub fn model_number(id: &str) -> Option<u32> {
    id.strip_prefix('m').filter(|d| d.len() == 6 && d.bytes().all(|b| b.is_ascii_digit())).and_then(|d| d.parse().ok())
}

/// Where runs in object storage are cached on this machine.
fn cache_base() -> PathBuf {
    if let Some(dir) = std::env::var_os("TAFL_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
    home.unwrap_or_else(std::env::temp_dir).join("tafl")
}

fn storage(e: StoreError) -> RunError {
    RunError::Storage(e)
}

/// The key of a file under the run's local root.
fn key_of(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

impl RunDir {
    /// Opens the run at `root`: a plain path or `file:///path` (a directory; its folders are
    /// made), or `s3://bucket/prefix` (with the `s3` feature; the store is asked once, so a
    /// wrong endpoint, bad credentials or a missing bucket fail here with one clear error).
    ///
    /// # Errors
    /// I/O errors; a store that cannot be reached or refuses.
    pub fn open(root: &Path) -> Result<RunDir, RunError> {
        let location = Location::parse(&root.to_string_lossy()).map_err(storage)?;
        let (store, local, remote): (Arc<dyn Store>, PathBuf, bool) = match &location {
            Location::Local(path) => (Arc::new(LocalStore::new(path)), path.clone(), false),
            Location::S3 { bucket, prefix } => {
                let store: Arc<dyn Store> = Arc::from(location.open().map_err(storage)?);
                // One request now: a store that is not there is an error at once, not later.
                store.list(CONFIG_FILE).map_err(|e| {
                    RunError::Storage(StoreError { message: format!("cannot open the run: {} (check AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ALLOW_HTTP and that the bucket exists)", e.message), ..e })
                })?;
                let mut cache = cache_base().join("runs").join("s3").join(bucket);
                for part in prefix.split('/').filter(|p| !p.is_empty()) {
                    cache = cache.join(part);
                }
                (store, cache, true)
            }
        };
        let run = RunDir {
            root: local,
            name: location.name(),
            store,
            remote,
            take_over: false,
            fence: Arc::new(Mutex::new(None)),
            metric_seq: Arc::new(AtomicU32::new(0)),
            last_best: Arc::new(Mutex::new(None)),
        };
        for dir in [run.models_dir(), run.root.join("selfplay"), run.arena_dir(), run.root.join("logs")] {
            fs::create_dir_all(&dir).map_err(|e| RunError::io(&dir, e))?;
        }
        if remote {
            // Objects a killed worker left in its spool go up now.
            let _ = run.drain_spool();
        }
        Ok(run)
    }

    /// The run's root: the run itself, or its local cache for a run in object storage.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the run is: its path or URL.
    #[must_use]
    pub fn location(&self) -> String {
        self.store.describe()
    }

    /// The run's name, without where it lies: its directory's or its prefix's last part.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// True for a run in object storage.
    #[must_use]
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// The run's storage.
    #[must_use]
    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// Lets [`RunDir::claim_trainer`] take the fence from a trainer it cannot see is gone
    /// (`tafl optimize --take-over`).
    #[must_use]
    pub fn with_take_over(mut self, take_over: bool) -> RunDir {
        self.take_over = take_over;
        self
    }

    /// `resume/`: resumable points of training rounds in progress (`tafl_zero::resume`).
    #[must_use]
    pub fn resumes_dir(&self) -> PathBuf {
        self.root.join("resume")
    }

    /// `resume/<parent>/`: the points of the round that continues from `parent`.
    #[must_use]
    pub fn resume_dir(&self, parent: &str) -> PathBuf {
        self.resumes_dir().join(parent)
    }

    /// `resume/<parent>/step-<step>/`: the point after `step` steps of the round from `parent`.
    #[must_use]
    pub fn resume_point_dir(&self, parent: &str, step: u32) -> PathBuf {
        self.resume_dir(parent).join(format!("{RESUME_STEP_PREFIX}{step:06}"))
    }

    /// The steps of the points of the round from `parent` (`resume/<parent>/step-<step>/`),
    /// newest first.
    #[must_use]
    pub fn resume_points(&self, parent: &str) -> Vec<u32> {
        let mut steps: Vec<u32> = fs::read_dir(self.resume_dir(parent))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name().to_str().and_then(|n| n.strip_prefix(RESUME_STEP_PREFIX)).and_then(|d| d.parse().ok())
            })
            .collect();
        steps.sort_unstable_by(|a, b| b.cmp(a));
        steps
    }

    /// A file's path relative to the run's root (a shard's name in a round's state, a game
    /// file's source).
    #[must_use]
    pub fn relative_name(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).unwrap_or(path).to_string_lossy().into_owned()
    }

    /// `config.toml`.
    #[must_use]
    pub fn config_path(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }
    /// `models/`.
    #[must_use]
    pub fn models_dir(&self) -> PathBuf {
        self.root.join("models")
    }
    /// True when `path` is a local directory with a run's `models/` folder. Opening a run makes
    /// its folders: ask first, so that a directory that is no run is not made one.
    #[must_use]
    pub fn holds_models(path: &Path) -> bool {
        path.join("models").is_dir()
    }

    /// True when `path` is a local directory with a run's `logs/` folder.
    #[must_use]
    pub fn holds_logs(path: &Path) -> bool {
        path.join("logs").is_dir()
    }

    /// `models/<id>/` in the local root, without fetching it (see [`RunDir::model_dir`]).
    #[must_use]
    pub fn local_model_dir(&self, id: &str) -> PathBuf {
        self.models_dir().join(id)
    }
    /// `models/<id>/`. For a run in object storage the complete model is fetched into the
    /// cache first, if it is there and not yet fetched.
    #[must_use]
    pub fn model_dir(&self, id: &str) -> PathBuf {
        let dir = self.local_model_dir(id);
        if self.remote && !dir.join("meta.json").is_file() {
            let _ = self.fetch_model(id);
        }
        dir
    }
    /// `models/<id>/meta.json`, the checkpoint's metadata (fetched first, as by
    /// [`RunDir::model_dir`]).
    #[must_use]
    pub fn model_meta_path(&self, id: &str) -> PathBuf {
        self.model_dir(id).join("meta.json")
    }
    /// `selfplay/<model>/`.
    #[must_use]
    pub fn selfplay_dir(&self, model: &str) -> PathBuf {
        self.root.join("selfplay").join(model)
    }

    /// `selfplay/<model>/<stem>.bin`: the key of a shard of games played by `model`.
    #[must_use]
    pub fn shard_key(model: &str, stem: &str) -> String {
        format!("selfplay/{model}/{stem}.bin")
    }

    /// `selfplay/<model>/<stem>.csv`: the key of the games (archive lines) of a shard.
    #[must_use]
    pub fn records_key(model: &str, stem: &str) -> String {
        format!("selfplay/{model}/{stem}.csv")
    }

    /// `selfplay/<model>/<stem>.bin` in the local root.
    #[must_use]
    pub fn shard_path(&self, model: &str, stem: &str) -> PathBuf {
        self.selfplay_dir(model).join(format!("{stem}.bin"))
    }

    /// `selfplay/.import-partial/`: an import still being written (hidden: shards are not read
    /// from it), renamed to [`RunDir::import_dir`] once complete.
    #[must_use]
    pub fn import_staging_dir(&self) -> PathBuf {
        self.root.join("selfplay").join(".import-partial")
    }

    /// The game files of the run: the `.csv` files under `arena/` and `selfplay/<model>/` of
    /// each model, in no particular order.
    #[must_use]
    pub fn game_files(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.arena_dir()];
        dirs.extend(self.models().iter().map(|m| self.selfplay_dir(m)));
        dirs.iter()
            .filter_map(|d| fs::read_dir(d).ok())
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect()
    }

    /// Where imported games' shards go (`selfplay/import/`; `tafl import`, the warm start).
    #[must_use]
    pub fn import_dir(&self) -> PathBuf {
        self.root.join("selfplay").join("import")
    }

    /// True when the run has imported shards.
    #[must_use]
    pub fn has_imports(&self) -> bool {
        if self.remote {
            self.store.list("selfplay/import/").is_ok_and(|k| !k.is_empty())
        } else {
            self.import_dir().exists()
        }
    }

    /// `arena/`.
    #[must_use]
    pub fn arena_dir(&self) -> PathBuf {
        self.root.join("arena")
    }
    /// `logs/metrics.jsonl`.
    #[must_use]
    pub fn metrics_path(&self) -> PathBuf {
        self.root.join("logs").join("metrics.jsonl")
    }
    /// `report/`.
    #[must_use]
    pub fn report_dir(&self) -> PathBuf {
        self.root.join("report")
    }

    /// The run's `config.toml`, if it has one.
    ///
    /// # Errors
    /// The store cannot be read.
    pub fn read_config(&self) -> Result<Option<String>, RunError> {
        if self.remote {
            let bytes = self.store.get(CONFIG_FILE).map_err(storage)?;
            return Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned()));
        }
        Ok(fs::read_to_string(self.config_path()).ok())
    }

    /// Writes `config.toml` atomically. In object storage, where nothing is overwritten in
    /// place, a different config replaces the old one by delete and create: set a run's config
    /// before its workers start.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_config(&self, text: &str) -> Result<(), RunError> {
        if self.remote {
            if self.store.put_if_absent(CONFIG_FILE, text.as_bytes()).map_err(storage)? == Put::Exists {
                self.store.delete(CONFIG_FILE).map_err(storage)?;
                self.store.put_if_absent(CONFIG_FILE, text.as_bytes()).map_err(storage)?;
            }
            return Ok(());
        }
        let path = self.config_path();
        write_atomic(&path, text.as_bytes()).map_err(|e| RunError::io(&path, e))
    }

    /// Keeps a replaced config as `name` (`config-<time>.toml`).
    ///
    /// # Errors
    /// I/O errors.
    pub fn keep_config(&self, name: &str, text: &str) -> Result<(), RunError> {
        if self.remote {
            self.store.put_if_absent(name, text.as_bytes()).map_err(storage)?;
            return Ok(());
        }
        let keep = self.root.join(name);
        write_atomic(&keep, text.as_bytes()).map_err(|e| RunError::io(&keep, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids() {
        assert_eq!(model_id(3), "m000003");
        assert_eq!(model_number("m000003"), Some(3));
        assert_eq!(model_number("best"), None);
        assert_eq!(model_number("m12"), None);
    }

    #[test]
    fn keys_and_names_of_a_run() {
        assert_eq!(RunDir::shard_key("m000001", "s"), "selfplay/m000001/s.bin");
        assert_eq!(RunDir::records_key("m000001", "s"), "selfplay/m000001/s.csv");
        assert_eq!(gate_result_name("m000002"), "gate-m000002.json");
        assert_eq!(gate_records_name("m000002"), "gate-m000002.csv");
        assert_eq!(eval_result_name("m000002"), "eval-m000002.json");
        assert_eq!(eval_records_name("m000002"), "eval-m000002.csv");
        let root = std::env::temp_dir().join(format!("tafl-run-keys-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        assert!(!RunDir::holds_models(&root) && !RunDir::holds_logs(&root));
        let run = RunDir::open(&root).unwrap();
        assert!(RunDir::holds_models(&root) && RunDir::holds_logs(&root));
        assert!(run.needs_best_hint());
        for step in [3, 12] {
            fs::create_dir_all(run.resume_point_dir("m000001", step)).unwrap();
        }
        assert!(run.resume_point_dir("m000001", 3).ends_with("resume/m000001/step-000003"));
        assert_eq!(run.resume_points("m000001"), vec![12, 3]);
        assert_eq!(run.relative_name(&run.shard_path("m000001", "s")), "selfplay/m000001/s.bin");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn model_info_round_trips_through_meta() {
        let info = ModelInfo {
            id: "m000002".into(),
            parent: Some("m000001".into()),
            iteration: 2,
            games_total: 10,
            ..ModelInfo::default()
        };
        let meta = info.clone().into_meta("brandubh", tafl_nn::INPUT_PLANES);
        assert_eq!(ModelInfo::from_meta(&meta), info);
    }
}
