//! The run's metrics: one JSON event per line (a local run) or per object (a run in object
//! storage), merged by time when read.

use std::fs;
use std::io::Write;
use std::sync::atomic::Ordering;

use super::RunDir;
use crate::metrics::{Event, Metric};
use crate::writer::{now, worker_id};

impl RunDir {
    /// Logs one event, with its time and writer. A local run appends it to
    /// `logs/metrics.jsonl` (one `write` call per line, so concurrent writers do not interleave
    /// within a line; a line cut by a kill is skipped by readers); a run in object storage
    /// writes it as its own object under `logs/metrics/<writer>/`.
    pub fn log(&self, event: Event) {
        let time = now();
        let metric = Metric { time, writer: worker_id().to_string(), event };
        let Ok(mut line) = serde_json::to_string(&metric) else { return };
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
    /// `logs/metrics/`. Lines of kinds this version does not know are left out.
    #[must_use]
    pub fn metrics(&self) -> Vec<Metric> {
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
        let mut events: Vec<Metric> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        events
    }
}
