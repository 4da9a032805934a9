//! Files written for keeps: whole or not at all.

use std::fs;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a hidden temporary file in the same directory, synced,
/// then renamed over `path`.
///
/// # Errors
/// I/O errors; the temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let temp = dir.join(format!(".{name}.tmp-{}-{nanos}", std::process::id()));
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
