//! One player measured against a ladder of fixed opponents (`tafl ladder`): a paired match
//! against each rung on the same openings, and per rung the score, the Elo difference with its
//! 95% interval (from the pairs), and the results with each side apart.

use std::fmt::Write as _;

use serde::Serialize;

use crate::run::ArenaResults;
use crate::stats::{EloEstimate, Wdl};

/// The measured player's results against one opponent.
#[derive(Clone, Debug, Serialize)]
pub struct Rung {
    /// The opponent's name.
    pub opponent: String,
    /// Games played.
    pub games: u64,
    /// The player's results in all.
    pub total: Wdl,
    /// The player's results with the attackers.
    pub attacking: Wdl,
    /// The player's results with the defenders.
    pub defending: Wdl,
    /// Elo of the player minus the opponent, 95% interval from the pairs (pentanomial).
    pub elo: EloEstimate,
    /// Games the move cap drew.
    pub capped: usize,
    /// Games lost by a failure (an engine that died, timed out or moved illegally), by either.
    pub forfeits: usize,
}

impl Rung {
    /// The rung of a match whose player 0 is the measured player and player 1 the opponent.
    #[must_use]
    pub fn from_match(results: &ArenaResults) -> Rung {
        let pairing = results.pairings.first().copied().unwrap_or_default();
        let count = |name: &str| results.games.iter().filter(|g| g.played.termination.name() == name).count();
        Rung {
            opponent: results.players.get(1).map(|p| p.name().to_string()).unwrap_or_default(),
            games: results.games.len() as u64,
            total: pairing.total(),
            attacking: pairing.a_attacking,
            defending: pairing.a_defending,
            elo: EloEstimate::pentanomial(&pairing.pairs),
            capped: count("max-plies"),
            forfeits: count("forfeit"),
        }
    }
}

/// A ladder measurement: the player, how it was measured, and a rung per opponent.
#[derive(Clone, Debug, Serialize)]
pub struct LadderReport {
    /// The measured player.
    pub player: String,
    /// The variant.
    pub variant: String,
    /// Games per opponent.
    pub games: usize,
    /// Distinct openings (each played with the sides swapped).
    pub openings: usize,
    /// Seed of the openings and of the players' randomness.
    pub seed: u64,
    /// Games longer than this were drawn.
    pub max_plies: usize,
    /// One per opponent, in ladder order.
    pub rungs: Vec<Rung>,
}

fn percent(wdl: Wdl) -> String {
    if wdl.games() == 0 { "-".into() } else { format!("{:.1}%", 100.0 * wdl.score()) }
}

/// `+12 [-30, +55]`, with the infinite ends of a 100% or 0% score written out.
fn elo_text(elo: &EloEstimate) -> String {
    let end = |x: f64| match x {
        x if x.is_finite() && x.round() == 0.0 => "0".to_string(),
        x if x.is_finite() => format!("{x:+.0}"),
        x if x > 0.0 => "+inf".into(),
        _ => "-inf".into(),
    };
    format!("{} [{}, {}]", end(elo.elo), end(elo.lower), end(elo.upper))
}

impl LadderReport {
    /// The table: one row per opponent, the player's score, Elo and results per side.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} on {}: {} games per opponent on {} openings (seed {}), sides swapped, drawn after {} plies",
            self.player, self.variant, self.games, self.openings, self.seed, self.max_plies
        );
        let _ = writeln!(
            out,
            "\n{:<28} {:>5} {:>7} {:>22} {:>16} {:>7} {:>16} {:>7}",
            "opponent", "games", "score", "Elo [95%]", "as attackers", "score", "as defenders", "score"
        );
        for r in &self.rungs {
            let _ = writeln!(
                out,
                "{:<28} {:>5} {:>7} {:>22} {:>16} {:>7} {:>16} {:>7}",
                r.opponent,
                r.games,
                percent(r.total),
                elo_text(&r.elo),
                r.attacking.to_string(),
                percent(r.attacking),
                r.defending.to_string(),
                percent(r.defending)
            );
        }
        let _ = writeln!(
            out,
            "\nElo: the player minus the opponent, 95% interval from the game pairs; +W =D -L from the player's view."
        );
        for r in self.rungs.iter().filter(|r| r.capped > 0 || r.forfeits > 0) {
            let _ = writeln!(out, "{}: {} games drawn at the move cap, {} forfeits", r.opponent, r.capped, r.forfeits);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::opening::random_openings;
    use crate::run::{ArenaConfig, run_match};
    use crate::spec::BuiltinFactory;

    #[test]
    fn a_rung_counts_the_players_results_per_side() {
        let variant = tafl_rules::Variant::preset("brandubh").unwrap();
        let config = ArenaConfig {
            variant,
            openings: random_openings(variant, 3, 2, 5),
            pairs: 3,
            max_plies: 80,
            threads: 1,
            seed: 5,
            sprt: None,
        };
        let player = "alphabeta:depth=1".parse().unwrap();
        let opponent = "random:seed=3".parse().unwrap();
        let results = run_match(&player, &opponent, &config, &BuiltinFactory, &|_| {}).unwrap();
        let rung = Rung::from_match(&results);
        assert_eq!(rung.opponent, "random:seed=3");
        assert_eq!(rung.games, 6);
        assert_eq!(rung.attacking.games() + rung.defending.games(), 6);
        assert_eq!(rung.attacking.games(), 3);
        assert_eq!(rung.total, rung.attacking.plus(rung.defending));
        assert_eq!(rung.elo.samples, 3);
        let report = LadderReport {
            player: "alphabeta:depth=1".into(),
            variant: "brandubh".into(),
            games: 6,
            openings: 3,
            seed: 5,
            max_plies: 80,
            rungs: vec![rung],
        };
        let text = report.to_text();
        let row = text.lines().find(|l| l.starts_with("random:seed=3")).unwrap();
        assert!(row.contains(&percent(report.rungs[0].total)), "{text}");
        assert!(row.contains(&report.rungs[0].attacking.to_string()), "{text}");
    }

    #[test]
    fn infinite_elo_ends_are_written_out() {
        let elo = EloEstimate { score: 1.0, elo: f64::INFINITY, lower: 120.4, upper: f64::INFINITY, samples: 4 };
        assert_eq!(elo_text(&elo), "+inf [+120, +inf]");
        let even = EloEstimate { score: 0.5, elo: -0.0, lower: -252.4, upper: 252.4, samples: 10 };
        assert_eq!(elo_text(&even), "0 [-252, +252]");
    }
}
