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

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tafl_nn::checkpoint::{self, CheckpointMeta, Expected};

use crate::RunError;
use crate::shard::{ShardExpect, ShardHeader, read_header, write_atomic};
use crate::storage::{LocalStore, Location, Put, Store, StoreError, put_once};

/// Seconds since the Unix epoch.
#[must_use]
pub fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// What the run keeps in each model's `meta.json` besides the checkpoint's own fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The model's id (`m000003`).
    pub id: String,
    /// The model it was trained from, if any.
    pub parent: Option<String>,
    /// Iteration: how many training rounds led to it (0 for the random start).
    pub iteration: u32,
    /// Self-play games on disk when it was trained.
    pub games_total: u64,
    /// Samples on disk when it was trained.
    pub samples_total: u64,
    /// Samples drawn in training over its whole ancestry.
    pub samples_seen: u64,
    /// Training steps over its whole ancestry.
    pub steps_total: u64,
    /// Seconds since the Unix epoch when written.
    pub created: f64,
    /// Net shape, like `b6c64`.
    pub net: String,
}

impl ModelInfo {
    /// The fields as checkpoint metadata.
    #[must_use]
    pub fn into_meta(self, variant: &str) -> CheckpointMeta {
        let mut meta = CheckpointMeta::new(variant, tafl_nn::ENCODING_VERSION);
        if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(&self) {
            meta.extra.extend(map);
        }
        meta
    }

    /// The fields read back from checkpoint metadata.
    #[must_use]
    pub fn from_meta(meta: &CheckpointMeta) -> ModelInfo {
        let map: serde_json::Map<String, serde_json::Value> = meta.extra.clone().into_iter().collect();
        serde_json::from_value(serde_json::Value::Object(map)).unwrap_or_default()
    }
}

/// A shard found on disk.
#[derive(Clone, Debug)]
pub struct ShardInfo {
    /// Its path (in the local cache, for a run in object storage).
    pub path: PathBuf,
    /// Its header.
    pub header: ShardHeader,
}

/// This process's name as a writer of runs: `TAFL_WORKER_ID` (a Slurm array task, a pod's
/// name), else `<host>-<pid>`. Only letters, digits, `.`, `_` and `-` are kept.
#[must_use]
pub fn worker_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let raw = std::env::var("TAFL_WORKER_ID")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| format!("{}-{}", host_name(), std::process::id()));
        let clean: String = raw
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
            .collect();
        clean.chars().take(64).collect()
    })
}

fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into())
}

/// True unless `pid` is known not to run on this machine.
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") { Path::new("/proc").join(pid.to_string()).exists() } else { true }
}

/// Who holds the trainer's fence (`trainer/fence-<n>.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FenceHolder {
    /// Its worker id ([`worker_id`]).
    pub owner: String,
    /// Its host.
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// Seconds since the Unix epoch when claimed.
    pub since: f64,
}

impl FenceHolder {
    fn describe(&self) -> String {
        format!(
            "`{}` (host {}, pid {}, since {:.0} s ago)",
            self.owner,
            self.host,
            self.pid,
            (now() - self.since).max(0.0)
        )
    }
}

/// The fence this process holds; let go (a `release-<n>` object) when the last handle drops.
#[derive(Debug)]
struct Fence {
    store: Arc<dyn Store>,
    epoch: u32,
}

impl Drop for Fence {
    fn drop(&mut self) {
        let _ = self.store.put_if_absent(&release_key(self.epoch), worker_id().as_bytes());
    }
}

fn fence_key(epoch: u32) -> String {
    format!("trainer/fence-{epoch:06}.json")
}

fn release_key(epoch: u32) -> String {
    format!("trainer/release-{epoch:06}")
}

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
    fence: Arc<Mutex<Option<Fence>>>,
    metric_seq: Arc<AtomicU32>,
    /// The last best model seen (a remote run whose store does not answer keeps playing it).
    last_best: Arc<Mutex<Option<String>>>,
}

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
                store.list("config.toml").map_err(|e| {
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

    /// `config.toml`.
    #[must_use]
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    /// `models/`.
    #[must_use]
    pub fn models_dir(&self) -> PathBuf {
        self.root.join("models")
    }
    /// `models/<id>/`. For a run in object storage the complete model is fetched into the
    /// cache first, if it is there and not yet fetched.
    #[must_use]
    pub fn model_dir(&self, id: &str) -> PathBuf {
        let dir = self.models_dir().join(id);
        if self.remote && !dir.join("meta.json").is_file() {
            let _ = self.fetch_model(id);
        }
        dir
    }
    /// `selfplay/<model>/`.
    #[must_use]
    pub fn selfplay_dir(&self, model: &str) -> PathBuf {
        self.root.join("selfplay").join(model)
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
            let bytes = self.store.get("config.toml").map_err(storage)?;
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
            if self.store.put_if_absent("config.toml", text.as_bytes()).map_err(storage)? == Put::Exists {
                self.store.delete("config.toml").map_err(storage)?;
                self.store.put_if_absent("config.toml", text.as_bytes()).map_err(storage)?;
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

    /// The complete checkpoints, oldest first. A local checkpoint directory only exists under
    /// its final name once complete (checkpoints are renamed into place); in object storage a
    /// model is complete once its `meta.json` (written last) is there. A store that does not
    /// answer gives the models in the local cache.
    #[must_use]
    pub fn models(&self) -> Vec<String> {
        let listed = if self.remote {
            self.store.list("models/").ok().map(|keys| {
                keys.iter()
                    .filter_map(|k| k.strip_prefix("models/").and_then(|k| k.strip_suffix("/meta.json")))
                    .filter(|id| model_number(id).is_some())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
        } else {
            None
        };
        let mut ids = listed.unwrap_or_else(|| {
            fs::read_dir(self.models_dir())
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| model_number(n).is_some())
                .filter(|n| self.models_dir().join(n).join("meta.json").is_file())
                .collect()
        });
        ids.sort();
        ids.dedup();
        ids
    }

    /// The newest checkpoint.
    #[must_use]
    pub fn latest_model(&self) -> Option<String> {
        self.models().pop()
    }

    /// The best model: in a local run the model `models/best` names, if it names a complete
    /// checkpoint; else the highest complete model under `models/promoted/`; else the oldest
    /// checkpoint (the random start).
    #[must_use]
    pub fn best_model(&self) -> Option<String> {
        let models = self.models();
        if !self.remote {
            let named = fs::read_to_string(self.models_dir().join("best")).ok().map(|s| s.trim().to_string());
            if let Some(id) = named
                && models.contains(&id)
            {
                return Some(id);
            }
        }
        let promoted = match self.store.list("models/promoted/") {
            Ok(keys) => keys
                .iter()
                .filter_map(|k| k.strip_prefix("models/promoted/"))
                .filter(|id| models.iter().any(|m| m == id))
                .max()
                .map(str::to_string),
            Err(_) => self.last_best.lock().ok().and_then(|b| b.clone()),
        };
        let best = promoted.or_else(|| models.into_iter().next());
        if let (Some(b), Ok(mut last)) = (&best, self.last_best.lock()) {
            *last = Some(b.clone());
        }
        best
    }

    /// Makes `id` the best model: `models/promoted/<id>`, and in a local run the `models/best`
    /// hint, written atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn set_best(&self, id: &str) -> Result<(), RunError> {
        put_once(self.store.as_ref(), &format!("models/promoted/{id}"), b"").map_err(storage)?;
        if !self.remote {
            let path = self.models_dir().join("best");
            write_atomic(&path, format!("{id}\n").as_bytes()).map_err(|e| RunError::io(&path, e))?;
        }
        Ok(())
    }

    /// Fetches a complete model of a run in object storage into the cache (whole, renamed into
    /// place). Returns false when the store has no complete model `id`.
    ///
    /// # Errors
    /// The store fails, or the cache cannot be written.
    pub fn fetch_model(&self, id: &str) -> Result<bool, RunError> {
        let dir = self.models_dir().join(id);
        if !self.remote || dir.join("meta.json").is_file() {
            return Ok(dir.join("meta.json").is_file());
        }
        let prefix = format!("models/{id}/");
        let keys = self.store.list(&prefix).map_err(storage)?;
        if !keys.iter().any(|k| k.ends_with("/meta.json")) {
            return Ok(false);
        }
        let temp = self.models_dir().join(format!(".{id}.fetch-{}", std::process::id()));
        let _ = fs::remove_dir_all(&temp);
        fs::create_dir_all(&temp).map_err(|e| RunError::io(&temp, e))?;
        for key in &keys {
            let Some(name) = key.strip_prefix(&prefix).filter(|n| !n.contains('/')) else { continue };
            let bytes = self
                .store
                .get(key)
                .map_err(storage)?
                .ok_or_else(|| RunError::Other(format!("{}: vanished while fetching", self.store.describe())))?;
            let path = temp.join(name);
            fs::write(&path, bytes).map_err(|e| RunError::io(&path, e))?;
        }
        match fs::rename(&temp, &dir) {
            Ok(()) => Ok(true),
            Err(_) if dir.join("meta.json").is_file() => {
                // Another process of this machine fetched it first.
                let _ = fs::remove_dir_all(&temp);
                Ok(true)
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&temp);
                Err(RunError::io(&dir, e))
            }
        }
    }

    /// Publishes the checkpoint written to [`RunDir::model_dir`] (nothing to do in a local
    /// run): its files create-only, `meta.json` last. `Exists` when the store has a complete
    /// model of that id already (another writer's, for the random start).
    ///
    /// # Errors
    /// The store fails.
    pub fn publish_model(&self, id: &str) -> Result<Put, RunError> {
        if !self.remote {
            return Ok(Put::Created);
        }
        let dir = self.models_dir().join(id);
        let meta_key = format!("models/{id}/meta.json");
        if self.store.get(&meta_key).map_err(storage)?.is_some() {
            let mine = fs::read(dir.join("meta.json")).ok();
            return Ok(if mine == self.store.get(&meta_key).map_err(storage)? { Put::Created } else { Put::Exists });
        }
        let mut names: Vec<String> = fs::read_dir(&dir)
            .map_err(|e| RunError::io(&dir, e))?
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort_by_key(|n| n == "meta.json");
        for name in names {
            let path = dir.join(&name);
            let bytes = fs::read(&path).map_err(|e| RunError::io(&path, e))?;
            let key = format!("models/{id}/{name}");
            if put_once(self.store.as_ref(), &key, &bytes).map_err(storage)? == Put::Exists {
                if name == "meta.json" {
                    return Ok(Put::Exists);
                }
                // A file left by a writer killed before its meta.json: the model is not
                // complete, so nobody reads it; replace it.
                self.store.delete(&key).map_err(storage)?;
                self.store.put_if_absent(&key, &bytes).map_err(storage)?;
            }
        }
        Ok(Put::Created)
    }

    /// Uploads every file under `folder` of the local cache that the store lacks (imported
    /// shards made locally); nothing to do in a local run.
    ///
    /// # Errors
    /// The store fails.
    pub fn publish_folder(&self, folder: &Path) -> Result<usize, RunError> {
        if !self.remote {
            return Ok(0);
        }
        let local = LocalStore::new(&self.root);
        let prefix = key_of(&self.root, folder);
        let mut sent = 0;
        for key in local.list(&prefix).map_err(storage)? {
            if let Some(bytes) = local.get(&key).map_err(storage)?
                && put_once(self.store.as_ref(), &key, &bytes).map_err(storage)? == Put::Created
            {
                sent += 1;
            }
        }
        Ok(sent)
    }

    /// The run fields of a model's metadata.
    ///
    /// # Errors
    /// The checkpoint's metadata does not read or belongs to another variant.
    pub fn model_info(&self, id: &str, expected: &Expected) -> Result<ModelInfo, RunError> {
        let meta = checkpoint::read_meta(&self.model_dir(id), expected)
            .map_err(|e| RunError::Model { id: id.to_string(), message: e.to_string() })?;
        let mut info = ModelInfo::from_meta(&meta);
        info.id = id.to_string();
        Ok(info)
    }

    /// An immutable object of a remote run, from the cache or fetched into it.
    fn cached(&self, key: &str) -> Result<PathBuf, RunError> {
        let path = key.split('/').fold(self.root.clone(), |p, part| p.join(part));
        if !path.is_file() {
            let bytes = self
                .store
                .get(key)
                .map_err(storage)?
                .ok_or_else(|| RunError::Other(format!("{}/{key}: not found", self.store.describe())))?;
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).map_err(|e| RunError::io(dir, e))?;
            }
            write_atomic(&path, &bytes).map_err(|e| RunError::io(&path, e))?;
        }
        Ok(path)
    }

    /// Every shard's header, oldest first (by creation time, then name). Shards that fail
    /// their header checks are returned apart, as warnings naming the file (the object, for a
    /// run in object storage).
    #[must_use]
    pub fn shards(&self, expect: &ShardExpect) -> (Vec<ShardInfo>, Vec<String>) {
        let mut shards = Vec::new();
        let mut warnings = Vec::new();
        let mut paths = Vec::new();
        if self.remote {
            match self.store.list("selfplay/") {
                Ok(keys) => {
                    for key in keys {
                        if key.ends_with(".bin") && !key.split('/').any(|p| p.starts_with('.')) {
                            match self.cached(&key) {
                                Ok(path) => paths.push(path),
                                Err(e) => warnings.push(format!("skipping shard {e}")),
                            }
                        }
                    }
                }
                Err(e) => warnings.push(format!("cannot list the shards: {e}")),
            }
        } else {
            let selfplay = self.root.join("selfplay");
            for model in fs::read_dir(&selfplay).into_iter().flatten().flatten() {
                // A hidden directory is an import still being written.
                if model.file_name().to_string_lossy().starts_with('.') {
                    continue;
                }
                for entry in fs::read_dir(model.path()).into_iter().flatten().flatten() {
                    let path = entry.path();
                    let name = entry.file_name();
                    if name.to_string_lossy().starts_with('.') || path.extension().is_none_or(|e| e != "bin") {
                        continue;
                    }
                    paths.push(path);
                }
            }
        }
        for path in paths {
            match read_header(&path, expect) {
                Ok(header) => shards.push(ShardInfo { path, header }),
                Err(e) if self.remote => {
                    let root = self.root.display().to_string();
                    warnings.push(format!("skipping shard {}", e.to_string().replace(&root, &self.store.describe())));
                }
                Err(e) => warnings.push(format!("skipping shard {e}")),
            }
        }
        shards.sort_by(|a, b| a.header.created.cmp(&b.header.created).then_with(|| a.path.cmp(&b.path)));
        (shards, warnings)
    }

    /// Writes a new immutable object `key` (a shard, its records, a metrics segment) whole and
    /// create-only. A run in object storage keeps it in the cache and in the spool first and
    /// uploads the spool: returns how many objects wait there because the store did not
    /// answer (they go up with the next write, or when the run is next opened).
    ///
    /// # Errors
    /// The name is taken by other bytes; the store refuses; the local disk fails.
    pub fn put_object(&self, key: &str, bytes: &[u8]) -> Result<usize, RunError> {
        if !self.remote {
            return match put_once(self.store.as_ref(), key, bytes).map_err(storage)? {
                Put::Created => Ok(0),
                Put::Exists => {
                    Err(RunError::Other(format!("{}: exists with other contents", self.root.join(key).display())))
                }
            };
        }
        let cache = key.split('/').fold(self.root.clone(), |p, part| p.join(part));
        if let Some(dir) = cache.parent() {
            fs::create_dir_all(dir).map_err(|e| RunError::io(dir, e))?;
        }
        write_atomic(&cache, bytes).map_err(|e| RunError::io(&cache, e))?;
        put_once(&LocalStore::new(&self.spool_dir()), key, bytes).map_err(storage)?;
        self.drain_spool()
    }

    fn spool_dir(&self) -> PathBuf {
        self.root.join(".spool")
    }

    /// Uploads what waits in the spool; returns how many objects still wait. A store that fails
    /// (does not answer, or lost the bucket while down) leaves them there: the run was checked
    /// when opened, so this is taken for an outage.
    ///
    /// # Errors
    /// An object's name is taken by other bytes (the object is then moved to
    /// `.spool-rejected/`); the local disk fails.
    pub fn drain_spool(&self) -> Result<usize, RunError> {
        if !self.remote {
            return Ok(0);
        }
        let spool = LocalStore::new(&self.spool_dir());
        let keys = spool.list("").map_err(storage)?;
        let mut waiting = 0;
        for (i, key) in keys.iter().enumerate() {
            let Some(bytes) = spool.get(key).map_err(storage)? else { continue };
            match put_once(self.store.as_ref(), key, &bytes) {
                Ok(Put::Created) => spool.delete(key).map_err(storage)?,
                Ok(Put::Exists) => {
                    let rejected = LocalStore::new(&self.root.join(".spool-rejected"));
                    let _ = rejected.put_if_absent(key, &bytes);
                    spool.delete(key).map_err(storage)?;
                    return Err(RunError::Other(format!(
                        "{}/{key}: exists with other contents (two writers with one worker id?); kept in .spool-rejected",
                        self.store.describe()
                    )));
                }
                Err(_) => {
                    waiting = keys.len() - i;
                    break;
                }
            }
        }
        Ok(waiting)
    }

    /// Claims the run's trainer fence (see the module's notes) unless this process holds it:
    /// the newest `trainer/fence-<n>.json` without a `release-<n>` is another trainer's,
    /// unless it names this worker id, a dead process of this host, or `--take-over` was given.
    ///
    /// # Errors
    /// Another trainer holds the run (the error names it); the store fails.
    pub fn claim_trainer(&self) -> Result<(), RunError> {
        let mut held = self.fence.lock().map_err(|_| RunError::Other("trainer fence lock poisoned".into()))?;
        if held.is_some() {
            return Ok(());
        }
        let (epoch, holder) = self.newest_fence()?;
        if let Some(holder) = holder {
            let mine = holder.owner == worker_id();
            let dead = holder.host == host_name() && !process_alive(holder.pid);
            if !(mine || dead || self.take_over) {
                return Err(RunError::Other(format!(
                    "run {} has a trainer already: {}; stop it first, or pass --take-over if it is gone",
                    self.store.describe(),
                    holder.describe()
                )));
            }
        }
        let me =
            FenceHolder { owner: worker_id().to_string(), host: host_name(), pid: std::process::id(), since: now() };
        let text = serde_json::to_string_pretty(&me).unwrap_or_default();
        let next = epoch + 1;
        if self.store.put_if_absent(&fence_key(next), text.as_bytes()).map_err(storage)? == Put::Exists {
            let other = self.fence_holder(next).map_or_else(|| "another trainer".into(), |h| h.describe());
            return Err(RunError::Other(format!(
                "run {}: {other} claimed the trainer's fence at the same moment",
                self.store.describe()
            )));
        }
        *held = Some(Fence { store: Arc::clone(&self.store), epoch: next });
        Ok(())
    }

    /// Checks that this process still holds the trainer's fence (no trainer took over since):
    /// called before a model is published.
    ///
    /// # Errors
    /// Another trainer took the run over; the store fails.
    pub fn check_fence(&self) -> Result<(), RunError> {
        let held = self
            .fence
            .lock()
            .map_err(|_| RunError::Other("trainer fence lock poisoned".into()))?
            .as_ref()
            .map(|f| f.epoch);
        let Some(epoch) = held else { return Ok(()) };
        let (newest, _) = self.newest_fence()?;
        if newest != epoch {
            let other = self.fence_holder(newest).map_or_else(|| "another trainer".into(), |h| h.describe());
            return Err(RunError::Other(format!(
                "run {}: {other} took over as trainer; this one stops",
                self.store.describe()
            )));
        }
        Ok(())
    }

    /// Lets go of the trainer's fence, if this process holds it.
    pub fn release_trainer(&self) {
        if let Ok(mut held) = self.fence.lock() {
            held.take();
        }
    }

    fn fence_holder(&self, epoch: u32) -> Option<FenceHolder> {
        let bytes = self.store.get(&fence_key(epoch)).ok().flatten()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The newest fence's number (0: none) and its holder, if not released.
    fn newest_fence(&self) -> Result<(u32, Option<FenceHolder>), RunError> {
        let keys = self.store.list("trainer/").map_err(storage)?;
        let number = |k: &str, p: &str, s: &str| {
            k.strip_prefix(p).and_then(|k| k.strip_suffix(s)).and_then(|d| d.parse::<u32>().ok())
        };
        let newest = keys.iter().filter_map(|k| number(k, "trainer/fence-", ".json")).max().unwrap_or(0);
        if newest == 0 || keys.iter().any(|k| number(k, "trainer/release-", "") == Some(newest)) {
            return Ok((newest, None));
        }
        let holder = self.fence_holder(newest).unwrap_or(FenceHolder {
            owner: "(unreadable fence)".into(),
            host: String::new(),
            pid: 0,
            since: 0.0,
        });
        Ok((newest, Some(holder)))
    }

    /// Logs one event: `fields` plus `event`, `time` and `writer`. A local run appends it to
    /// `logs/metrics.jsonl` (one `write` call per line, so concurrent writers do not interleave
    /// within a line; a line cut by a kill is skipped by readers); a run in object storage
    /// writes it as its own object under `logs/metrics/<writer>/`.
    pub fn log_metric(&self, event: &str, fields: serde_json::Value) {
        let mut object = match fields {
            serde_json::Value::Object(map) => map,
            other => {
                let mut map = serde_json::Map::new();
                map.insert("value".into(), other);
                map
            }
        };
        object.insert("event".into(), event.into());
        let time = now();
        object.insert("time".into(), time.into());
        object.insert("writer".into(), worker_id().into());
        let mut line = serde_json::Value::Object(object).to_string();
        line.push('\n');
        if self.remote {
            let n = self.metric_seq.fetch_add(1, Ordering::Relaxed);
            let key = format!("logs/metrics/{}/{:013}-{n:06}.json", worker_id(), (time * 1000.0) as u64);
            let _ = self.put_object(&key, line.as_bytes());
            return;
        }
        let path = self.metrics_path();
        if let Ok(mut file) = fs::OpenOptions::new().create(true).append(true).open(&path) {
            let _ = file.write_all(line.as_bytes());
        }
    }

    /// Every event that parses, by time: `logs/metrics.jsonl` and the objects under
    /// `logs/metrics/`.
    #[must_use]
    pub fn metrics(&self) -> Vec<serde_json::Value> {
        let mut text = fs::read_to_string(self.metrics_path()).unwrap_or_default();
        for key in self.store.list("logs/metrics/").unwrap_or_default() {
            let segment = if self.remote {
                self.cached(&key).ok().and_then(|p| fs::read_to_string(p).ok())
            } else {
                self.store.get(&key).ok().flatten().map(|b| String::from_utf8_lossy(&b).into_owned())
            };
            if let Some(segment) = segment {
                text.push_str(&segment);
                text.push('\n');
            }
        }
        let mut events: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(serde_json::Value::is_object)
            .collect();
        events.sort_by(|a, b| a["time"].as_f64().unwrap_or(0.0).total_cmp(&b["time"].as_f64().unwrap_or(0.0)));
        events
    }

    /// A JSON result file under `arena/`, if present and readable.
    #[must_use]
    pub fn arena_result(&self, name: &str) -> Option<serde_json::Value> {
        let path = if self.remote { self.cached(&format!("arena/{name}")).ok()? } else { self.arena_dir().join(name) };
        let text = fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes a JSON result file under `arena/` atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_arena_result(&self, name: &str, value: &serde_json::Value) -> Result<(), RunError> {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        self.write_arena_text(name, &text)
    }

    /// Writes a text file under `arena/` atomically (create-only in object storage, where the
    /// first result of a name stands).
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_arena_text(&self, name: &str, text: &str) -> Result<(), RunError> {
        if self.remote {
            let key = format!("arena/{name}");
            if self.store.put_if_absent(&key, text.as_bytes()).map_err(storage)? == Put::Created {
                let path = self.arena_dir().join(name);
                write_atomic(&path, text.as_bytes()).map_err(|e| RunError::io(&path, e))?;
            }
            return Ok(());
        }
        let path = self.arena_dir().join(name);
        write_atomic(&path, text.as_bytes()).map_err(|e| RunError::io(&path, e))
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
    fn damaged_and_foreign_shards_are_skipped_with_a_warning() {
        use crate::shard::{Sample, write_shard};
        let root = std::env::temp_dir().join(format!("tafl-zero-rundir-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let run = RunDir::open(&root).unwrap();
        let dir = run.selfplay_dir("m000000");
        fs::create_dir_all(&dir).unwrap();
        let variant = tafl_rules::Variant::preset("brandubh").unwrap();
        let sample = Sample::of_position(&tafl_rules::Position::start(variant), 1, 0, 0);
        let header = |v: &str| ShardHeader {
            format_version: 0,
            variant: v.into(),
            encoding_version: 1,
            board_size: 7,
            count: 0,
            games: 1,
            model: "m000000".into(),
            created: 0,
            payload_len: 0,
            checksum: 0,
        };
        write_shard(&dir.join("good.bin"), header("brandubh"), std::slice::from_ref(&sample)).unwrap();
        write_shard(&dir.join("foreign.bin"), header("tablut"), &[sample]).unwrap();
        fs::write(dir.join("junk.bin"), b"not a shard at all").unwrap();
        fs::write(dir.join(".good.bin.tmp-1-2"), b"half written").unwrap();
        let expect = ShardExpect { variant: "brandubh".into(), encoding_version: 1 };
        let (shards, warnings) = run.shards(&expect);
        assert_eq!(shards.len(), 1);
        assert!(shards[0].path.ends_with("good.bin"));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("junk.bin")) && warnings.iter().any(|w| w.contains("foreign.bin")));
        let _ = fs::remove_dir_all(&root);
    }

    fn fence(owner: &str, pid: u32) -> Vec<u8> {
        serde_json::to_vec(&FenceHolder { owner: owner.into(), host: host_name(), pid, since: now() }).unwrap()
    }

    #[test]
    fn one_trainer_holds_the_fence() {
        let root = std::env::temp_dir().join(format!("tafl-zero-fence-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let run = RunDir::open(&root).unwrap();
        // A live trainer of another process (pid 1 always runs) holds the run.
        run.store().put_if_absent("trainer/fence-000001.json", &fence("other", 1)).unwrap();
        let e = run.claim_trainer().unwrap_err().to_string();
        assert!(e.contains("has a trainer already") && e.contains("`other`") && e.contains("pid 1"), "{e}");
        // It let go: the fence is free.
        run.store().put_if_absent("trainer/release-000001", b"").unwrap();
        run.claim_trainer().unwrap();
        run.check_fence().unwrap();
        run.claim_trainer().unwrap();
        // Another one took over (--take-over): this one may publish nothing more.
        run.store().put_if_absent("trainer/fence-000003.json", &fence("later", 1)).unwrap();
        let e = run.check_fence().unwrap_err().to_string();
        assert!(e.contains("`later`") && e.contains("took over"), "{e}");
        run.release_trainer();
        // A dead process of this host left its fence: taken over without asking.
        let dead = RunDir::open(&root).unwrap();
        dead.store().put_if_absent("trainer/release-000003", b"").unwrap();
        dead.store().put_if_absent("trainer/fence-000004.json", &fence("gone", u32::MAX - 1)).unwrap();
        dead.claim_trainer().unwrap();
        dead.release_trainer();
        assert!(dead.store().get("trainer/release-000005").unwrap().is_some(), "let go on release");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn best_is_derived_from_promotions_and_objects_are_create_only() {
        let root = std::env::temp_dir().join(format!("tafl-zero-best-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let run = RunDir::open(&root).unwrap();
        for id in ["m000000", "m000001", "m000002"] {
            fs::create_dir_all(run.models_dir().join(id)).unwrap();
            fs::write(run.models_dir().join(id).join("meta.json"), b"{}").unwrap();
        }
        assert_eq!(run.best_model().as_deref(), Some("m000000"), "the oldest without a promotion");
        run.set_best("m000001").unwrap();
        assert_eq!(run.best_model().as_deref(), Some("m000001"));
        // Without the hint, the listing of promotions decides.
        fs::remove_file(run.models_dir().join("best")).unwrap();
        run.store().put_if_absent("models/promoted/m000002", b"").unwrap();
        assert_eq!(run.best_model().as_deref(), Some("m000002"));
        // A promotion of a model that is not complete does not count.
        run.store().put_if_absent("models/promoted/m000007", b"").unwrap();
        assert_eq!(run.best_model().as_deref(), Some("m000002"));
        assert_eq!(run.put_object("selfplay/m000001/a.bin", b"x").unwrap(), 0);
        assert_eq!(run.put_object("selfplay/m000001/a.bin", b"x").unwrap(), 0, "the same bytes again: done");
        assert!(run.put_object("selfplay/m000001/a.bin", b"y").is_err());
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
        let meta = info.clone().into_meta("brandubh");
        assert_eq!(ModelInfo::from_meta(&meta), info);
    }
}
