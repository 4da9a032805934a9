//! Immutable objects of a run: the local cache of a run in object storage, and the spool that
//! new objects wait in until the store takes them.

use std::fs;
use std::path::PathBuf;

use tafl_files::write_atomic;

use super::{RunDir, storage};
use crate::RunError;
use crate::storage::{LocalStore, Put, Store, put_once};

impl RunDir {
    /// An immutable object of a remote run, from the cache or fetched into it.
    pub(super) fn cached(&self, key: &str) -> Result<PathBuf, RunError> {
        let path = key.split('/').fold(self.root.clone(), |p, part| p.join(part));
        if !path.is_file() {
            let bytes = self
                .store
                .get(key)
                .map_err(storage)?
                .ok_or_else(|| RunError::Missing { store: self.store.describe(), key: key.to_string() })?;
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).map_err(|e| RunError::io(dir, e))?;
            }
            write_atomic(&path, &bytes).map_err(|e| RunError::io(&path, e))?;
        }
        Ok(path)
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
                Put::Exists => Err(RunError::Conflict { at: self.root.join(key).display().to_string() }),
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
                    let at = format!("{}/{key}", self.store.describe());
                    return Err(RunError::SpoolRejected { at });
                }
                Err(_) => {
                    waiting = keys.len() - i;
                    break;
                }
            }
        }
        Ok(waiting)
    }
}
