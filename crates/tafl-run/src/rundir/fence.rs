//! The trainer's fence: one trainer holds a run at a time (see the module's notes in
//! [`super`]).

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{RunDir, storage};
use crate::storage::{Put, Store};
use crate::writer::{host_name, now, worker_id};
use crate::{FenceError, RunError};

/// True unless `pid` is known not to run on this machine.
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") { Path::new("/proc").join(pid.to_string()).exists() } else { true }
}

/// Who holds the trainer's fence (`trainer/fence-<n>.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FenceHolder {
    /// Its worker id ([`worker_id`](crate::writer::worker_id)).
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
pub(super) struct Fence {
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

impl RunDir {
    /// Claims the run's trainer fence (see the module's notes) unless this process holds it:
    /// the newest `trainer/fence-<n>.json` without a `release-<n>` is another trainer's,
    /// unless it names this worker id, a dead process of this host, or `--take-over` was given.
    ///
    /// # Errors
    /// Another trainer holds the run (the error names it); the store fails.
    pub fn claim_trainer(&self) -> Result<(), RunError> {
        let mut held = self.fence.lock().map_err(|_| self.fence_error(FenceError::Poisoned))?;
        if held.is_some() {
            return Ok(());
        }
        let (epoch, holder) = self.newest_fence()?;
        if let Some(holder) = holder {
            let mine = holder.owner == worker_id();
            let dead = holder.host == host_name() && !process_alive(holder.pid);
            if !(mine || dead || self.take_over) {
                return Err(self.fence_error(FenceError::Held(holder.describe())));
            }
        }
        let me =
            FenceHolder { owner: worker_id().to_string(), host: host_name(), pid: std::process::id(), since: now() };
        let text = serde_json::to_string_pretty(&me).unwrap_or_default();
        let next = epoch + 1;
        if self.store.put_if_absent(&fence_key(next), text.as_bytes()).map_err(storage)? == Put::Exists {
            let other = self.fence_holder(next).map_or_else(|| "another trainer".into(), |h| h.describe());
            return Err(self.fence_error(FenceError::Raced(other)));
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
        let held = self.fence.lock().map_err(|_| self.fence_error(FenceError::Poisoned))?.as_ref().map(|f| f.epoch);
        let Some(epoch) = held else { return Ok(()) };
        let (newest, _) = self.newest_fence()?;
        if newest != epoch {
            let other = self.fence_holder(newest).map_or_else(|| "another trainer".into(), |h| h.describe());
            return Err(self.fence_error(FenceError::TakenOver(other)));
        }
        Ok(())
    }

    fn fence_error(&self, fence: FenceError) -> RunError {
        RunError::Fence { run: self.store.describe(), fence }
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
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

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
}
