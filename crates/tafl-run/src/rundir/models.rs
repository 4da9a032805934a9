//! The run's models: listing, the best model, fetching and publishing checkpoints.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tafl_files::write_atomic;
use tafl_nn::checkpoint::{self, CheckpointMeta, Expected};

use super::{RunDir, key_of, model_number, storage};
use crate::RunError;
use crate::storage::{LocalStore, Put, Store, put_once};

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
    /// The fields as checkpoint metadata, for a net of `input_planes` inputs (which say the
    /// encoding version it reads).
    #[must_use]
    pub fn into_meta(self, variant: &str, input_planes: usize) -> CheckpointMeta {
        let version = tafl_nn::encoding::version_of(input_planes).unwrap_or(tafl_nn::ENCODING_VERSION);
        let mut meta = CheckpointMeta::new(variant, version);
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

impl RunDir {
    /// `models/best`: a local run's hint of its best model.
    fn best_hint(&self) -> PathBuf {
        self.models_dir().join("best")
    }

    /// True for a local run whose `models/best` hint is missing.
    #[must_use]
    pub fn needs_best_hint(&self) -> bool {
        !self.remote && !self.best_hint().exists()
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
            let named = fs::read_to_string(self.best_hint()).ok().map(|s| s.trim().to_string());
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
            let path = self.best_hint();
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
        let dir = self.local_model_dir(id);
        if !self.remote || dir.join("meta.json").is_file() {
            return Ok(dir.join("meta.json").is_file());
        }
        let prefix = format!("models/{id}/");
        let keys = self.store.list(&prefix).map_err(storage)?;
        if !keys.iter().any(|k| k.ends_with("/meta.json")) {
            return Ok(false);
        }
        let temp = tafl_files::temp_sibling(&dir, "model");
        fs::create_dir_all(&temp).map_err(|e| RunError::io(&temp, e))?;
        for key in &keys {
            let Some(name) = key.strip_prefix(&prefix).filter(|n| !n.contains('/')) else { continue };
            let bytes = self
                .store
                .get(key)
                .map_err(storage)?
                .ok_or_else(|| RunError::Missing { store: self.store.describe(), key: key.clone() })?;
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
        let dir = self.local_model_dir(id);
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

    /// The run fields of a model's metadata whatever its variant and encoding, as a dashboard
    /// lists them; `None` when its `meta.json` is missing or does not parse.
    #[must_use]
    pub fn model_summary(&self, id: &str) -> Option<ModelInfo> {
        let meta: CheckpointMeta = serde_json::from_slice(&fs::read(self.model_meta_path(id)).ok()?).ok()?;
        Some(ModelInfo { id: id.to_string(), ..ModelInfo::from_meta(&meta) })
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
