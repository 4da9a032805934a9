//! Player bundles: a trained model and its search settings in one self-contained directory.
//!
//! ```text
//! <bundle>/player.toml   variant, encoding version, net, search settings (BundleManifest)
//! <bundle>/weights/      the checkpoint (weights.bpk, config.json, meta.json), no optimiser state
//! <bundle>/net.onnx      the same net as ONNX (see tafl_nn::onnx), to run without tafl
//! <bundle>/README.md     how to run it
//! ```
//!
//! A bundle directory is a player spec of its own (`tafl engine --player DIR`):
//! [`crate::ZeroFactory`] builds an MCTS player from it, and takes the keys of an `mcts` spec as
//! overrides (`DIR:visits=800`). [`crate::export`] writes bundles.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tafl_arena::spec::parse_duration;

use crate::PlayersError;

/// The bundle's settings file.
pub const MANIFEST: &str = "player.toml";
/// The bundle's checkpoint directory.
pub const WEIGHTS: &str = "weights";
/// The bundle's ONNX model of the net. Not read back by tafl: players load `weights/`.
pub const ONNX: &str = "net.onnx";
/// Version of the bundle layout this build writes and reads.
pub const BUNDLE_FORMAT: u32 = 1;

/// Contents of `player.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleManifest {
    /// Layout version ([`BUNDLE_FORMAT`]).
    pub format_version: u32,
    /// The game variant the net plays.
    pub variant: String,
    /// The input encoding version the net was trained on.
    pub encoding_version: u32,
    /// The net's shape.
    pub net: BundleNet,
    /// How the player searches.
    pub search: BundleSearch,
    /// Where the model came from (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<BundleSource>,
}

/// `[net]` of `player.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleNet {
    /// Short name, like `b6c64`.
    pub name: String,
    /// Side of the board.
    pub board_size: usize,
    /// Input planes.
    pub input_planes: usize,
    /// Residual blocks.
    pub blocks: usize,
    /// Trunk channels.
    pub channels: usize,
}

/// `[search]` of `player.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleSearch {
    /// Visits per move.
    pub visits: u32,
    /// Longest time per move when the caller gives none (`1s`, `500ms`); absent: visits only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_per_move: Option<String>,
    /// Gumbel root search (true) or PUCT (false).
    pub gumbel: bool,
    /// Leaves gathered per network call.
    #[serde(default = "default_batch")]
    pub batch: usize,
    /// Plies of the alpha-beta check of each chosen move ([`MctsPlayer::with_guard`]); 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub guard: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn default_batch() -> usize {
    8
}

/// `[source]` of `player.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleSource {
    /// The name of the run exported from (its directory's or its prefix's last part, not where
    /// it lay on the machine that trained it).
    pub run: String,
    /// The model's id.
    pub model: String,
    /// The model's training iteration.
    #[serde(default)]
    pub iteration: u32,
    /// Training steps over the model's ancestry.
    #[serde(default)]
    pub steps_total: u64,
    /// Seconds since the Unix epoch when exported.
    #[serde(default)]
    pub exported: f64,
}

impl BundleSearch {
    /// The time per move, parsed.
    ///
    /// # Errors
    /// Not a duration (the message names the key).
    pub fn time(&self) -> Result<Option<Duration>, String> {
        self.time_per_move
            .as_deref()
            .map(|t| {
                parse_duration(t)
                    .ok_or_else(|| format!("search.time_per_move = {t:?}: expected a duration such as 1s or 500ms"))
            })
            .transpose()
    }
}

/// `1s`, `1500ms`: a duration as [`parse_duration`] reads it back.
#[must_use]
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) { format!("{}s", ms / 1000) } else { format!("{ms}ms") }
}

/// True when `path` is a bundle directory (it holds `player.toml`).
#[must_use]
pub fn is_bundle(path: &Path) -> bool {
    path.join(MANIFEST).is_file()
}

/// Reads and checks `player.toml` of the bundle at `dir`.
///
/// # Errors
/// The file does not read or parse (the message names the file and key), or is for another
/// bundle layout, or its time per move is not a duration.
pub fn read_manifest(dir: &Path) -> Result<BundleManifest, PlayersError> {
    let path = dir.join(MANIFEST);
    let text = fs::read_to_string(&path).map_err(|e| PlayersError::io(&path, e))?;
    let manifest: BundleManifest = toml::from_str(&text).map_err(|e| PlayersError::bad_file(&path, e))?;
    if manifest.format_version != BUNDLE_FORMAT {
        return Err(PlayersError::bad_file(
            &path,
            format!("format_version {} is not supported (this build reads {BUNDLE_FORMAT})", manifest.format_version),
        ));
    }
    manifest.search.time().map_err(|e| PlayersError::bad_file(&path, e))?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_deny_unknown_keys_and_name_them() {
        let dir = std::env::temp_dir().join(format!("tafl-zero-manifest-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let good = "format_version = 1\nvariant = \"copenhagen\"\nencoding_version = 1\n\n[net]\nname = \"b1c16\"\nboard_size = 11\ninput_planes = 1\nblocks = 1\nchannels = 16\n\n[search]\nvisits = 10\ngumbel = true\n";
        fs::write(dir.join(MANIFEST), good).unwrap();
        let m = read_manifest(&dir).unwrap();
        assert_eq!(m.search.batch, 8);
        assert_eq!(m.search.time().unwrap(), None);
        fs::write(dir.join(MANIFEST), good.replace("visits = 10", "visits = 10\nvisit = 3")).unwrap();
        let e = read_manifest(&dir).unwrap_err().to_string();
        assert!(e.contains("player.toml") && e.contains("visit"), "{e}");
        fs::write(dir.join(MANIFEST), good.replace("visits = 10", "visits = 10\ntime_per_move = \"soon\"")).unwrap();
        let e = read_manifest(&dir).unwrap_err().to_string();
        assert!(e.contains("time_per_move") && e.contains("soon"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }
}
