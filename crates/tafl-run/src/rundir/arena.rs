//! The run's arena results: gating and evaluation results and their games, under `arena/`.

use std::fs;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tafl_files::write_atomic;

use super::{RunDir, storage};
use crate::RunError;
use crate::metrics::{EvalResult, GateResult};
use crate::storage::Put;

/// `gate-<id>.json`: the name of candidate `id`'s gating result under `arena/`.
#[must_use]
pub fn gate_result_name(id: &str) -> String {
    format!("gate-{id}.json")
}

/// `gate-<id>.csv`: the name of candidate `id`'s gating games (archive lines) under `arena/`.
#[must_use]
pub fn gate_records_name(id: &str) -> String {
    format!("gate-{id}.csv")
}

/// `eval-<id>.json`: the name of model `id`'s evaluation result under `arena/`.
#[must_use]
pub fn eval_result_name(id: &str) -> String {
    format!("eval-{id}.json")
}

/// `eval-<id>.csv`: the name of model `id`'s evaluation games (archive lines) under `arena/`.
#[must_use]
pub fn eval_records_name(id: &str) -> String {
    format!("eval-{id}.csv")
}

impl RunDir {
    /// Candidate `id`'s gating result, if written and readable.
    #[must_use]
    pub fn gate_result(&self, id: &str) -> Option<GateResult> {
        self.arena_result(&gate_result_name(id))
    }

    /// Model `id`'s evaluation result, if written and readable.
    #[must_use]
    pub fn eval_result(&self, id: &str) -> Option<EvalResult> {
        self.arena_result(&eval_result_name(id))
    }

    /// Writes a gating result as `arena/gate-<candidate>.json`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_gate_result(&self, result: &GateResult) -> Result<(), RunError> {
        self.write_arena_result(&gate_result_name(&result.candidate), result)
    }

    /// Writes an evaluation result as `arena/eval-<model>.json`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_eval_result(&self, result: &EvalResult) -> Result<(), RunError> {
        self.write_arena_result(&eval_result_name(&result.model), result)
    }

    fn arena_result<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        let path = if self.remote { self.cached(&format!("arena/{name}")).ok()? } else { self.arena_dir().join(name) };
        let text = fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn write_arena_result(&self, name: &str, value: &impl Serialize) -> Result<(), RunError> {
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
