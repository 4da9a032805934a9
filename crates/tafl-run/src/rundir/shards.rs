//! The run's shards: every shard's header, with the ones that fail their checks apart.

use std::fs;
use std::path::PathBuf;

use super::RunDir;
use crate::shard::{ShardExpect, ShardHeader, read_header};

/// A shard found on disk.
#[derive(Clone, Debug)]
pub struct ShardInfo {
    /// Its path (in the local cache, for a run in object storage).
    pub path: PathBuf,
    /// Its header.
    pub header: ShardHeader,
}

impl RunDir {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::{Sample, write_shard};

    #[test]
    fn damaged_and_foreign_shards_are_skipped_with_a_warning() {
        let root = std::env::temp_dir().join(format!("tafl-zero-rundir-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let run = RunDir::open(&root).unwrap();
        let dir = run.selfplay_dir("m000000");
        fs::create_dir_all(&dir).unwrap();
        let variant = tafl_rules::Variant::preset("brandubh").unwrap();
        let sample = Sample::of_position(&tafl_rules::Position::start(variant), 1, 0, 0);
        let header = |v: &str| ShardHeader {
            variant: v.into(),
            encoding_version: 1,
            ..ShardHeader::new(variant, 1, "m000000".into())
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
}
