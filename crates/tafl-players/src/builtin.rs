//! The player that ships with tafl: the strongest trained net so far, embedded in the binary.
//!
//! Its bundle (see [`crate::bundle`]) lives in `crates/tafl-players/builtin/`, beside
//! `LINEAGE.md`, which says where each shipped net came from and what it scored. The player spec
//! `builtin` names it everywhere a spec is taken, with the keys of a bundle spec as overrides
//! (`builtin:visits=800`, `builtin:time=1s`). On first use the bundle is written to a cache
//! directory named by a hash of its bytes (a temporary name, then a rename), and loaded from
//! there like any other bundle: the checkpoint's own checksum guards the copy.

use std::fs;
use std::path::{Path, PathBuf};

use tafl_files::temp_sibling;

use crate::PlayersError;

/// The spec kind that names the shipped player.
pub use tafl_arena::spec::BUILTIN;

/// The bundle's files, relative to its directory.
const FILES: [(&str, &[u8]); 4] = [
    ("player.toml", include_bytes!("../builtin/player.toml")),
    ("weights/weights.bpk", include_bytes!("../builtin/weights/weights.bpk")),
    ("weights/config.json", include_bytes!("../builtin/weights/config.json")),
    ("weights/meta.json", include_bytes!("../builtin/weights/meta.json")),
];

/// The variant the shipped net plays (its `player.toml` says so too; a test checks they agree).
pub const VARIANT: &str = "copenhagen";

/// The player `tafl play` and `tafl engine` use unless told otherwise: the shipped net at one
/// second a move for its variant, where it beat `alphabeta:time=1s` at equal time (the
/// docs/training.md, "The shipped player"), else alpha-beta.
#[must_use]
pub fn default_player(variant: &str) -> &'static str {
    if variant == VARIANT { "builtin:time=1s" } else { "alphabeta:time=1s" }
}

/// The lineage of the shipped nets (markdown), for `--help` texts and the README.
pub const LINEAGE: &str = include_str!("../builtin/LINEAGE.md");

/// FNV-1a over every file's name and bytes: names the cache directory, so a build with another
/// net never reads an older copy.
fn fingerprint() -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for (name, bytes) in FILES {
        for &b in name.as_bytes().iter().chain(bytes) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// Where cached copies go: `$XDG_CACHE_HOME/tafl`, `~/.cache/tafl`, else the temp directory.
fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("tafl");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".cache").join("tafl");
    }
    std::env::temp_dir().join("tafl")
}

/// The directory of the shipped bundle, written under `root` when it is not there yet.
///
/// # Errors
/// The directory cannot be written.
pub fn bundle_dir_in(root: &Path) -> Result<PathBuf, PlayersError> {
    let dir = root.join(format!("builtin-{:016x}", fingerprint()));
    if is_complete(&dir) {
        return Ok(dir);
    }
    // A name of this call's own: other threads and processes may be writing their copies now.
    let temp = temp_sibling(&dir, "builtin");
    for (name, bytes) in FILES {
        let path = temp.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| PlayersError::io(parent, e))?;
        }
        fs::write(&path, bytes).map_err(|e| PlayersError::io(&path, e))?;
    }
    if fs::rename(&temp, &dir).is_ok() {
        return Ok(dir);
    }
    // `dir` is there: another caller's complete copy (keep it, it may be in use), or an
    // incomplete one from a foreign hand, moved aside whole before ours goes in. A copy of
    // ours is never removed once in place.
    if !is_complete(&dir) {
        let aside = temp_sibling(&dir, "builtin");
        if fs::rename(&dir, &aside).is_ok() {
            let _ = fs::remove_dir_all(&aside);
        }
        let _ = fs::rename(&temp, &dir);
    }
    let _ = fs::remove_dir_all(&temp);
    if is_complete(&dir) {
        Ok(dir)
    } else {
        Err(PlayersError::io(&dir, std::io::Error::other("the shipped bundle could not be written there")))
    }
}

/// Every file of the bundle is in `dir` at its length.
fn is_complete(dir: &Path) -> bool {
    FILES.iter().all(|(name, bytes)| fs::metadata(dir.join(name)).is_ok_and(|m| m.len() == bytes.len() as u64))
}

/// The directory of the shipped bundle in the user's cache (see [`bundle_dir_in`]).
///
/// # Errors
/// The cache directory cannot be written.
pub fn bundle_dir() -> Result<PathBuf, PlayersError> {
    bundle_dir_in(&cache_root())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_is_written_once_and_reads_back() {
        let root = std::env::temp_dir().join(format!("tafl-builtin-test-{}", std::process::id()));
        let dir = bundle_dir_in(&root).expect("written");
        for (name, bytes) in FILES {
            assert_eq!(fs::read(dir.join(name)).expect("file"), bytes, "{name}");
        }
        let manifest = crate::bundle::read_manifest(&dir).expect("manifest");
        assert_eq!(manifest.variant, "copenhagen");
        // A second call finds it in place; a damaged copy is replaced.
        assert_eq!(bundle_dir_in(&root).expect("again"), dir);
        fs::write(dir.join("weights/meta.json"), b"{").expect("damage");
        let again = bundle_dir_in(&root).expect("rewritten");
        assert_eq!(fs::read(again.join("weights/meta.json")).expect("file"), FILES[3].1);
        let _ = fs::remove_dir_all(&root);
    }

    /// Threads of one process (tests in parallel, say) writing the cache at once: each gets a
    /// whole copy that stays in place while it reads it, and no temporary is left behind.
    #[test]
    fn callers_at_once_each_get_a_whole_copy() {
        for round in 0..5 {
            let root = std::env::temp_dir().join(format!("tafl-builtin-race-{}-{round}", std::process::id()));
            let _ = fs::remove_dir_all(&root);
            let barrier = std::sync::Barrier::new(6);
            std::thread::scope(|s| {
                for _ in 0..6 {
                    s.spawn(|| {
                        barrier.wait();
                        let dir = bundle_dir_in(&root).expect("written");
                        for (name, bytes) in FILES {
                            assert_eq!(fs::read(dir.join(name)).expect("in place"), bytes, "{name}");
                        }
                    });
                }
            });
            let left: Vec<_> = fs::read_dir(&root).expect("root").flatten().map(|e| e.file_name()).collect();
            assert_eq!(left.len(), 1, "{left:?}");
            let _ = fs::remove_dir_all(&root);
        }
    }

    #[test]
    fn the_default_player_is_the_net_for_its_own_variant_only() {
        let dir = bundle_dir().expect("the bundle is written");
        assert_eq!(crate::bundle::read_manifest(&dir).expect("manifest").variant, VARIANT);
        assert_eq!(default_player("copenhagen"), "builtin:time=1s");
        for other in ["brandubh", "tablut", "copenhagen-13"] {
            assert_eq!(default_player(other), "alphabeta:time=1s");
        }
    }

    #[test]
    fn the_builtin_spec_plays_a_legal_move_with_overrides() {
        use tafl_arena::{PlayerFactory, PlayerSpec};
        let variant = tafl_rules::Variant::preset("copenhagen").expect("preset");
        let factory = crate::ZeroFactory::new(variant);
        let spec: PlayerSpec = "builtin:visits=4".parse().expect("spec");
        let mut player = factory.build(&spec, 1).expect("the shipped net loads");
        let game = tafl_rules::Game::new(variant);
        let choice = player.choose(&game, &spec.limits()).expect("a move");
        assert!(game.legal_moves().contains(&choice.mv));
        let spec: PlayerSpec = "builtin:visits=4,gumbel=false,time=50ms".parse().expect("spec");
        assert!(factory.build(&spec, 1).is_ok());
    }
}
