//! The run directory: where every stage reads and writes, and the state derived from it.
//!
//! ```text
//! <run>/config.toml              the config the run uses
//! <run>/models/m000000/          checkpoints (tafl_nn::checkpoint), written atomically
//! <run>/models/best              the id self-play uses, one line, written atomically
//! <run>/selfplay/<model>/*.bin   sample shards; *.csv beside them: the games as archive lines
//! <run>/arena/gate-<id>.json     gating results; eval-<id>.json evaluation results; *.csv records
//! <run>/logs/metrics.jsonl       one JSON object per event
//! <run>/resume/<parent>/step-N/  the last resumable point of a training round in progress
//! <run>/report/                  plots and index.html
//! ```
//! Nothing is kept in memory between stages: the state (latest model, best model, games and
//! samples on disk, pending gates and evaluations) is read back from these files, so a process
//! killed at any moment resumes where it stopped.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tafl_nn::checkpoint::{self, CheckpointMeta, Expected};

use crate::ZeroError;
use crate::shard::{ShardExpect, ShardHeader, read_header, write_atomic};

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
    /// Its path.
    pub path: PathBuf,
    /// Its header.
    pub header: ShardHeader,
}

/// The run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
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

impl RunDir {
    /// Opens (creating the folders of) the run at `root`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn open(root: &Path) -> Result<RunDir, ZeroError> {
        let run = RunDir { root: root.to_path_buf() };
        for dir in [run.models_dir(), run.root.join("selfplay"), run.arena_dir(), run.root.join("logs")] {
            fs::create_dir_all(&dir).map_err(|e| ZeroError::io(&dir, e))?;
        }
        Ok(run)
    }

    /// The run's root.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `resume/`: resumable points of training rounds in progress ([`crate::resume`]).
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
    /// `models/<id>/`.
    #[must_use]
    pub fn model_dir(&self, id: &str) -> PathBuf {
        self.models_dir().join(id)
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

    /// Writes `config.toml` atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_config(&self, text: &str) -> Result<(), ZeroError> {
        let path = self.config_path();
        write_atomic(&path, text.as_bytes()).map_err(|e| ZeroError::io(&path, e))
    }

    /// The complete checkpoints, oldest first. A directory only exists under its final name
    /// once complete (checkpoints are renamed into place).
    #[must_use]
    pub fn models(&self) -> Vec<String> {
        let mut ids: Vec<String> = fs::read_dir(self.models_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| model_number(n).is_some())
            .filter(|n| self.model_dir(n).join("meta.json").is_file())
            .collect();
        ids.sort();
        ids
    }

    /// The newest checkpoint.
    #[must_use]
    pub fn latest_model(&self) -> Option<String> {
        self.models().pop()
    }

    /// The model `models/best` names, if it names a complete checkpoint; else the oldest
    /// checkpoint (the random start).
    #[must_use]
    pub fn best_model(&self) -> Option<String> {
        let named = fs::read_to_string(self.models_dir().join("best")).ok().map(|s| s.trim().to_string());
        match named {
            Some(id) if self.model_dir(&id).join("meta.json").is_file() => Some(id),
            _ => self.models().into_iter().next(),
        }
    }

    /// Points `models/best` at `id`, atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn set_best(&self, id: &str) -> Result<(), ZeroError> {
        let path = self.models_dir().join("best");
        write_atomic(&path, format!("{id}\n").as_bytes()).map_err(|e| ZeroError::io(&path, e))
    }

    /// The run fields of a model's metadata.
    ///
    /// # Errors
    /// The checkpoint's metadata does not read or belongs to another variant.
    pub fn model_info(&self, id: &str, expected: &Expected) -> Result<ModelInfo, ZeroError> {
        let meta = checkpoint::read_meta(&self.model_dir(id), expected).map_err(|e| ZeroError::Model { id: id.to_string(), message: e.to_string() })?;
        let mut info = ModelInfo::from_meta(&meta);
        info.id = id.to_string();
        Ok(info)
    }

    /// Every shard's header, oldest first (by creation time, then name). Shards that fail
    /// their header checks are returned apart, as warnings naming the file.
    #[must_use]
    pub fn shards(&self, expect: &ShardExpect) -> (Vec<ShardInfo>, Vec<String>) {
        let mut shards = Vec::new();
        let mut warnings = Vec::new();
        let selfplay = self.root.join("selfplay");
        for model in fs::read_dir(&selfplay).into_iter().flatten().flatten() {
            // A hidden directory is an import still being written.
            if model.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            for entry in fs::read_dir(model.path()).into_iter().flatten().flatten() {
                let path = entry.path();
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.') || path.extension().is_none_or(|e| e != "bin") {
                    continue;
                }
                match read_header(&path, expect) {
                    Ok(header) => shards.push(ShardInfo { path, header }),
                    Err(e) => warnings.push(format!("skipping shard {e}")),
                }
            }
        }
        shards.sort_by(|a, b| a.header.created.cmp(&b.header.created).then_with(|| a.path.cmp(&b.path)));
        (shards, warnings)
    }

    /// Appends one event to `logs/metrics.jsonl`: `fields` plus `event` and `time`. One
    /// `write` call per line, so concurrent writers do not interleave within a line; a line cut
    /// by a kill is skipped by readers.
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
        object.insert("time".into(), now().into());
        let mut line = serde_json::Value::Object(object).to_string();
        line.push('\n');
        let path = self.metrics_path();
        if let Ok(mut file) = fs::OpenOptions::new().create(true).append(true).open(&path) {
            let _ = file.write_all(line.as_bytes());
        }
    }

    /// Every event of `logs/metrics.jsonl` that parses, in order.
    #[must_use]
    pub fn metrics(&self) -> Vec<serde_json::Value> {
        fs::read_to_string(self.metrics_path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(serde_json::Value::is_object)
            .collect()
    }

    /// A JSON result file under `arena/`, if present and readable.
    #[must_use]
    pub fn arena_result(&self, name: &str) -> Option<serde_json::Value> {
        let text = fs::read_to_string(self.arena_dir().join(name)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes a JSON result file under `arena/` atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_arena_result(&self, name: &str, value: &serde_json::Value) -> Result<(), ZeroError> {
        let path = self.arena_dir().join(name);
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        write_atomic(&path, text.as_bytes()).map_err(|e| ZeroError::io(&path, e))
    }

    /// Writes a text file under `arena/` atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_arena_text(&self, name: &str, text: &str) -> Result<(), ZeroError> {
        let path = self.arena_dir().join(name);
        write_atomic(&path, text.as_bytes()).map_err(|e| ZeroError::io(&path, e))
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

    #[test]
    fn model_info_round_trips_through_meta() {
        let info = ModelInfo { id: "m000002".into(), parent: Some("m000001".into()), iteration: 2, games_total: 10, ..ModelInfo::default() };
        let meta = info.clone().into_meta("brandubh");
        assert_eq!(ModelInfo::from_meta(&meta), info);
    }
}
