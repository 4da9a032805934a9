//! Levels for people: `--level 1` … `--level 10`, each a fixed player, from random moves through
//! one-ply alpha-beta to the shipped net (`builtin`) at growing visits, each measured a clear
//! step above the one below (`scripts/level-steps.sh`). A level names the same player in every
//! version: when `builtin` is replaced, the strength of levels 3–10 changes with it and their
//! tables in `docs/levels.md` are measured again (`scripts/levels.sh`, `scripts/level-steps.sh`).
//!
//! Visits rather than time from level 3 on, so that a level is as strong on a slow laptop as
//! on a fast one; only the top level thinks for a fixed second. Alpha-beta at depth 2 is not a
//! level: it is the net at 4 visits' equal in a direct match and defends as well as the net at
//! 16, so no net level fits between it and the next (docs/levels.md).

use crate::spec::{PlayerSpec, SpecError};

/// The highest level.
pub const MAX_LEVEL: u8 = 10;

/// The player spec of each level, level 1 first.
const LEVELS: [&str; MAX_LEVEL as usize] = [
    "random:seed=1",
    "alphabeta:depth=1",
    "builtin:visits=4",
    "builtin:visits=8",
    "builtin:visits=16",
    "builtin:visits=50",
    "builtin:visits=100",
    "builtin:visits=200",
    "builtin:visits=800",
    "builtin:time=1s",
];

/// The player of level `level` (1 to [`MAX_LEVEL`]), named `level-N` in tables and records.
///
/// ```
/// let spec = tafl_arena::levels::level(2).unwrap();
/// let depth_1 = tafl_search::Limits { depth: Some(1), ..Default::default() };
/// assert_eq!((spec.kind(), spec.name()), (&tafl_arena::PlayerKind::AlphaBeta(depth_1), "level-2"));
/// assert!(tafl_arena::levels::level(11).is_err());
/// ```
pub fn level(level: u8) -> Result<PlayerSpec, SpecError> {
    level_spec_text(level)?.parse()
}

/// The spec text of level `level`, its name included (`alphabeta:depth=1,name=level-2`): what
/// `--level N` stands for wherever a player spec is taken.
pub fn level_spec_text(level: u8) -> Result<String, SpecError> {
    let text = level.checked_sub(1).and_then(|i| LEVELS.get(usize::from(i))).ok_or_else(|| SpecError::BadValue {
        key: "level".into(),
        value: level.to_string(),
        expected: format!("a level from 1 to {MAX_LEVEL}"),
    })?;
    let joint = if text.contains(':') { ',' } else { ':' };
    Ok(format!("{text}{joint}name=level-{level}"))
}

/// Every level's spec text, level 1 first (for help texts and the levels table).
#[must_use]
pub fn all() -> &'static [&'static str] {
    &LEVELS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_parses_and_is_named_by_its_number() {
        for n in 1..=MAX_LEVEL {
            let spec = level(n).expect("a level");
            assert_eq!(spec.name(), format!("level-{n}"));
            assert_eq!(spec.kind().word(), all()[usize::from(n - 1)].split(':').next().expect("a kind"));
        }
        assert!(level(0).is_err());
        assert!(level(MAX_LEVEL + 1).is_err());
        assert_eq!(all().len(), usize::from(MAX_LEVEL));
    }
}
