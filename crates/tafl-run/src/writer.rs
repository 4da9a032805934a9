//! Who writes to a run, and when: this process's worker id, its host, the time.

use std::fs;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch.
#[must_use]
pub fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
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

/// This machine's host name.
pub(crate) fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into())
}
