//! Files written for keeps: whole or not at all. A file or a directory is written under a
//! hidden temporary name beside its own ([`temp_sibling`]), then renamed into place.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A hidden temporary name beside `path` that no other process and no earlier call of this one
/// uses: `.<name>.tmp-<pid>-<nanoseconds>` in the same directory, `<name>` being `path`'s file
/// name (`fallback` when it has none). Write the file or directory there, then rename it to
/// `path`.
#[must_use]
pub fn temp_sibling(path: &Path, fallback: &str) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map_or_else(|| fallback.into(), |n| n.to_string_lossy());
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    dir.join(format!(".{name}.tmp-{}-{nanos}", std::process::id()))
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
