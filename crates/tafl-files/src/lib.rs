//! Files written for keeps: whole or not at all. A file or a directory is written under a
//! hidden temporary name beside its own ([`temp_sibling`]), then renamed into place. The one
//! place of that naming, for every crate that keeps files (runs, checkpoints, bundles, match
//! records, online game records).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A hidden temporary name beside `path` that no other process and no other call of this one
/// uses: `.<name>.tmp-<pid>-<call>-<nanoseconds>` in the same directory, `<name>` being `path`'s
/// file name (`fallback` when it has none), `<call>` counting this process's calls (two threads
/// in the same nanosecond still differ). Write the file or directory there, then rename it to
/// `path`.
#[must_use]
pub fn temp_sibling(path: &Path, fallback: &str) -> PathBuf {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map_or_else(|| fallback.into(), |n| n.to_string_lossy());
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    dir.join(format!(".{name}.tmp-{}-{call}-{nanos}", std::process::id()))
}

/// Writes `bytes` to `path` atomically: a hidden temporary file in the same directory, synced,
/// then renamed over `path`.
///
/// # Errors
/// I/O errors; the temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = temp_sibling(path, "file");
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    } else if let Ok(d) = fs::File::open(dir) {
        // Makes the rename durable; best effort.
        let _ = d.sync_all();
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tafl-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn writes_replace_the_file_whole_and_leave_no_temporary() {
        let dir = scratch("replace");
        let path = dir.join("summary.json");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second, longer").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second, longer");
        let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["summary.json"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_removes_the_temporary() {
        let dir = scratch("failed");
        let path = dir.join("kept");
        write_atomic(&path, b"old").unwrap();
        // A directory in the way: the rename fails after the temporary file was written.
        let blocked = dir.join("blocked");
        fs::create_dir_all(blocked.join("inside")).unwrap();
        assert!(write_atomic(&blocked, b"new").is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        let mut names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["blocked", "kept"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temporary_names_are_hidden_siblings() {
        let path = Path::new("/runs/a/models/m000001");
        let temp = temp_sibling(path, "x");
        assert_eq!(temp.parent(), path.parent());
        let name = format!(".m000001.tmp-{}-", std::process::id());
        assert!(temp.file_name().unwrap().to_string_lossy().starts_with(&name), "{temp:?}");
        // A path without a file name takes the fallback.
        assert!(temp_sibling(Path::new("/"), "object").to_string_lossy().contains(".object.tmp-"));
    }
}
