//! One rating scale over matches played apart (`tafl ratings`): the pairings of several
//! `summary.json` files (matches, tournaments, the rungs of `tafl ladder`), players matched by
//! name, fitted together by the Bradley–Terry model of [`crate::ratings`]. A level measured
//! against the anchors and against its neighbours gets one Elo from all of those games.
//!
//! Only players linked by a chain of games can be put on one scale, so a pool whose matches
//! fall apart into separate groups is refused rather than fitted.

use std::collections::HashMap;

use serde::Deserialize;

use crate::report::{LadderEntry, ladder, ladder_table};
use crate::run::PairingStats;
use crate::stats::Wdl;

/// Why a pool cannot be built or fitted.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The text is not a `summary.json` of `tafl arena` or `tafl ladder`.
    #[error("not a match summary: {0}")]
    Summary(#[from] serde_json::Error),
    /// Matches of two variants cannot share a scale.
    #[error("matches of {found} cannot be rated with matches of {expected}")]
    Variant {
        /// The pool's variant.
        expected: String,
        /// The summary's variant.
        found: String,
    },
    /// No chain of games links two players.
    #[error("no chain of games links `{0}` with `{1}`, so their ratings cannot be compared")]
    Disconnected(String, String),
    /// The anchor played no game in the pool.
    #[error("the anchor `{0}` played no game in these matches")]
    UnknownAnchor(String),
    /// A count no match reaches (and sums of which could overflow).
    #[error("`{0}` against `{1}`: more than {MAX_GAMES} games a side")]
    TooManyGames(String, String),
    /// Nothing to fit.
    #[error("no games in these matches")]
    Empty,
}

/// The most games a pairing may report per side and result.
const MAX_GAMES: u64 = 1 << 32;

/// The part of `summary.json` a pool reads.
#[derive(Deserialize)]
struct StoredSummary {
    variant: String,
    pairings: Vec<StoredPairing>,
}

#[derive(Deserialize)]
struct StoredPairing {
    a: String,
    b: String,
    a_attacking: Wdl,
    a_defending: Wdl,
}

/// Pairings gathered from several matches, players by name.
#[derive(Debug, Default)]
pub struct Pool {
    variant: Option<String>,
    names: Vec<String>,
    index: HashMap<String, usize>,
    pairings: Vec<PairingStats>,
}

impl Pool {
    /// An empty pool.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the pairings of one `summary.json`; returns how many games they hold.
    ///
    /// # Errors
    /// The text is not a summary, or its variant is not the pool's.
    pub fn add_summary(&mut self, text: &str) -> Result<u64, PoolError> {
        let summary: StoredSummary = serde_json::from_str(text)?;
        if let Some(p) = summary
            .pairings
            .iter()
            .find(|p| [p.a_attacking, p.a_defending].iter().any(|w| w.wins.max(w.draws).max(w.losses) > MAX_GAMES))
        {
            return Err(PoolError::TooManyGames(p.a.clone(), p.b.clone()));
        }
        match &self.variant {
            Some(expected) if *expected != summary.variant => {
                return Err(PoolError::Variant { expected: expected.clone(), found: summary.variant });
            }
            _ => self.variant = Some(summary.variant),
        }
        let mut games = 0;
        for p in summary.pairings {
            let stats = PairingStats {
                a: self.player(&p.a),
                b: self.player(&p.b),
                a_attacking: p.a_attacking,
                a_defending: p.a_defending,
                pairs: Default::default(),
            };
            games += stats.total().games();
            self.pairings.push(stats);
        }
        Ok(games)
    }

    fn player(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The variant of the pool's matches, once one was added.
    #[must_use]
    pub fn variant(&self) -> Option<&str> {
        self.variant.as_deref()
    }

    /// Every player on one scale, best first: Elo with its 95% half width, shifted so that
    /// `anchor` (when given) stands at 0; without one, the players' mean is 0.
    ///
    /// # Errors
    /// No games, two players no chain of games links, or an anchor that is not in the pool.
    pub fn ratings(&self, anchor: Option<&str>) -> Result<Vec<LadderEntry>, PoolError> {
        let played: Vec<&PairingStats> = self.pairings.iter().filter(|p| p.total().games() > 0).collect();
        if played.is_empty() {
            return Err(PoolError::Empty);
        }
        self.check_connected(&played)?;
        let mut entries = ladder(&self.names, &self.pairings);
        if let Some(anchor) = anchor {
            let zero = entries
                .iter()
                .find(|e| e.name == anchor && e.wdl.games() > 0)
                .map(|e| e.elo)
                .ok_or_else(|| PoolError::UnknownAnchor(anchor.to_string()))?;
            for e in &mut entries {
                e.elo -= zero;
            }
        }
        Ok(entries)
    }

    /// Refuses a pool whose games fall apart into groups with no game between them.
    fn check_connected(&self, played: &[&PairingStats]) -> Result<(), PoolError> {
        let mut group: Vec<usize> = (0..self.names.len()).collect();
        fn root(group: &mut [usize], mut i: usize) -> usize {
            while group[i] != i {
                group[i] = group[group[i]];
                i = group[i];
            }
            i
        }
        for p in played {
            let (a, b) = (root(&mut group, p.a), root(&mut group, p.b));
            group[a] = b;
        }
        let first = played[0].a;
        for p in played {
            for i in [p.a, p.b] {
                if root(&mut group, i) != root(&mut group, first) {
                    return Err(PoolError::Disconnected(self.names[first].clone(), self.names[i].clone()));
                }
            }
        }
        Ok(())
    }
}

/// The ratings as a table, best first.
#[must_use]
pub fn ratings_text(entries: &[LadderEntry], anchor: Option<&str>) -> String {
    let scale = anchor.map_or_else(|| "the players' mean is 0".to_string(), |a| format!("{a} is 0"));
    let mut out = format!("Elo on one scale ({scale}), 95% interval of each rating in the joint fit\n");
    ladder_table(entries, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A summary.json with the given pairings: (a, b, a's attacking W-D-L, a's defending W-D-L).
    fn summary(variant: &str, pairings: &[(&str, &str, [u32; 3], [u32; 3])]) -> String {
        let rows: Vec<serde_json::Value> = pairings
            .iter()
            .map(|(a, b, att, def)| {
                let wdl = |x: &[u32; 3]| serde_json::json!({"wins": x[0], "draws": x[1], "losses": x[2]});
                serde_json::json!({"a": a, "b": b, "a_attacking": wdl(att), "a_defending": wdl(def)})
            })
            .collect();
        serde_json::json!({"kind": "match", "variant": variant, "pairings": rows}).to_string()
    }

    #[test]
    fn matches_played_apart_share_one_scale() {
        let mut pool = Pool::new();
        // B beats A 3:1, C beats B 3:1, in two files; A is the anchor.
        assert_eq!(pool.add_summary(&summary("copenhagen", &[("B", "A", [7, 0, 3], [8, 0, 2])])).expect("ok"), 20);
        pool.add_summary(&summary("copenhagen", &[("C", "B", [7, 0, 3], [8, 0, 2])])).expect("ok");
        let entries = pool.ratings(Some("A")).expect("ratings");
        let elo = |name: &str| entries.iter().find(|e| e.name == name).expect("rated").elo;
        assert_eq!(entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["C", "B", "A"]);
        assert!(elo("A").abs() < 1e-9);
        // 75% is +191 Elo a step; the prior's virtual draws pull each step in a little.
        assert!((150.0..191.0).contains(&elo("B")), "{entries:?}");
        assert!((elo("C") - 2.0 * elo("B")).abs() < 5.0, "{entries:?}");
        let text = ratings_text(&entries, Some("A"));
        assert!(text.contains("A is 0") && text.lines().nth(3).is_some_and(|l| l.contains('C')), "{text}");
    }

    #[test]
    fn groups_without_games_between_them_are_refused() {
        let mut pool = Pool::new();
        pool.add_summary(&summary("copenhagen", &[("A", "B", [5, 0, 5], [5, 0, 5])])).expect("ok");
        pool.add_summary(&summary("copenhagen", &[("C", "D", [5, 0, 5], [5, 0, 5])])).expect("ok");
        assert!(matches!(pool.ratings(None), Err(PoolError::Disconnected(..))));
        pool.add_summary(&summary("copenhagen", &[("B", "C", [5, 0, 5], [5, 0, 5])])).expect("ok");
        assert_eq!(pool.ratings(None).expect("linked").len(), 4);
        assert!(matches!(pool.ratings(Some("E")), Err(PoolError::UnknownAnchor(_))));
    }

    #[test]
    fn bad_summaries_and_mixed_variants_are_refused() {
        let mut pool = Pool::new();
        assert!(matches!(pool.ratings(None), Err(PoolError::Empty)));
        for bad in ["", "{}", "[1]", r#"{"variant": "copenhagen", "pairings": [{"a": "A"}]}"#] {
            assert!(matches!(pool.add_summary(bad), Err(PoolError::Summary(_))), "{bad}");
        }
        let negative = r#"{"variant":"x","pairings":[{"a":"A","b":"B","a_attacking":{"wins":-1,"draws":0,"losses":0},"a_defending":{"wins":0,"draws":0,"losses":0}}]}"#;
        assert!(pool.add_summary(negative).is_err());
        let huge = negative.replace("-1", &u64::MAX.to_string());
        assert!(matches!(pool.add_summary(&huge), Err(PoolError::TooManyGames(..))));
        assert!(pool.variant().is_none());
        pool.add_summary(&summary("copenhagen", &[("A", "B", [1, 0, 0], [0, 0, 1])])).expect("ok");
        let err = pool.add_summary(&summary("tablut", &[("A", "B", [1, 0, 0], [0, 0, 1])])).expect_err("variant");
        assert_eq!(err.to_string(), "matches of tablut cannot be rated with matches of copenhagen");
    }
}
