//! Clock management under the server's Fischer clock: how long to think for one move.
//!
//! The server subtracts the time between its sending the opponent's move and its receiving
//! ours (network both ways included) and then adds the increment; at zero the game is lost.
//! The budget spreads the time left over the moves still expected, adds most of the
//! increment, keeps a reserve for the network, and never spends more than a fraction of what
//! is left. When little is left it switches to an emergency budget that lives on the increment.

use std::fmt;
use std::time::Duration;

/// The server draws a game once this many plies have been played (its `MAX_TURNS` + 1).
pub const SERVER_PLY_LIMIT: usize = 141;

/// Settings of the budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockPolicy {
    /// Expected length of a game in plies (both sides), for moves still to come.
    pub expected_plies: usize,
    /// Fewest of our moves assumed still to come (a long game is always possible).
    pub min_moves_to_go: usize,
    /// Time lost per move to the network and to us, in milliseconds (a round trip and more).
    pub latency_ms: i64,
    /// Never spend more than this fraction of the time left on one move.
    pub max_fraction: f64,
    /// Part of the increment spent on each move (the rest builds a reserve).
    pub increment_share: f64,
}

impl Default for ClockPolicy {
    fn default() -> ClockPolicy {
        ClockPolicy {
            expected_plies: 100,
            min_moves_to_go: 12,
            latency_ms: 300,
            max_fraction: 0.25,
            increment_share: 0.8,
        }
    }
}

/// One move's budget and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Time to give the player.
    pub think: Duration,
    /// The estimate of our time left when the budget was made, in milliseconds.
    pub left_ms: i64,
    /// Our moves assumed still to come.
    pub moves_to_go: usize,
    /// The emergency budget was used.
    pub emergency: bool,
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "budget {:.2}s of {:.1}s left, {} moves to go",
            self.think.as_secs_f64(),
            self.left_ms as f64 / 1000.0,
            self.moves_to_go
        )?;
        if self.emergency {
            f.write_str(", EMERGENCY")?;
        }
        Ok(())
    }
}

impl ClockPolicy {
    /// The budget for a move at `ply` (plies played so far) with `left_ms` on our clock and an
    /// increment of `increment_ms`.
    #[must_use]
    pub fn budget(&self, left_ms: i64, increment_ms: i64, ply: usize) -> Budget {
        let expected_left = self.expected_plies.saturating_sub(ply) / 2;
        // The server's move limit ends the game: no need to save time for moves after it.
        let before_limit = SERVER_PLY_LIMIT.saturating_sub(ply) / 2 + 1;
        let moves_to_go = expected_left.max(self.min_moves_to_go).min(before_limit).max(1);
        let reserve = (2 * self.latency_ms).max(1000);
        let usable = left_ms - reserve;
        let increment = increment_ms.max(0);
        let normal =
            usable as f64 / moves_to_go as f64 + self.increment_share * increment as f64 - self.latency_ms as f64;
        // What the increment gives back is not at risk: it may be spent on top of the fraction.
        let cap = usable as f64 * self.max_fraction + self.increment_share * increment as f64;
        let think = normal.min(cap);
        // Emergency: the reserve is (nearly) gone, or the normal budget is too small to be
        // worth a search. Live on part of the increment and a sliver of what is left.
        let emergency = usable <= 0 || left_ms < 2 * reserve || think < 100.0;
        let think_ms = if emergency {
            let sliver = (left_ms - self.latency_ms).max(0) as f64 / 20.0;
            (0.5 * increment as f64 - self.latency_ms as f64)
                .max(0.0)
                .max(sliver)
                .min((left_ms - self.latency_ms).max(0) as f64 / 4.0)
                .max(10.0)
        } else {
            think
        };
        Budget { think: Duration::from_millis(think_ms as u64), left_ms, moves_to_go, emergency }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_time_over_the_game() {
        let p = ClockPolicy::default();
        let b = p.budget(900_000, 10_000, 0);
        assert!(!b.emergency);
        assert_eq!(b.moves_to_go, 50);
        // 898 s / 50 + 8 s - 0.3 s = 25.66 s
        assert!(b.think > Duration::from_secs(25) && b.think < Duration::from_secs(26), "{b}");
        // Late in the game the horizon stays at the minimum.
        let late = p.budget(300_000, 10_000, 120);
        assert!(late.moves_to_go <= 11, "{late}");
    }

    #[test]
    fn never_spends_more_than_is_left() {
        let p = ClockPolicy::default();
        for left in [-500, 0, 50, 300, 800, 1_500, 3_000, 10_000, 30_000] {
            for inc in [0, 1_000, 10_000] {
                for ply in [0, 40, 139, 300] {
                    let b = p.budget(left, inc, ply);
                    let spend = b.think.as_millis() as i64 + p.latency_ms;
                    assert!(
                        spend <= left.max(0) + inc.max(0) || b.think <= Duration::from_millis(10),
                        "{left} {inc} {ply}: {b}"
                    );
                    assert!(
                        spend <= (left.max(0) as f64 * 0.5) as i64 + p.latency_ms + inc
                            || b.think <= Duration::from_millis(10),
                        "{b}"
                    );
                }
            }
        }
    }

    #[test]
    fn short_clock_goes_into_emergency_and_lives_on_the_increment() {
        let p = ClockPolicy::default();
        let b = p.budget(1_200, 1_000, 60);
        assert!(b.emergency, "{b}");
        assert!(b.think.as_millis() as i64 + p.latency_ms <= 1_000, "{b}");
        let start = p.budget(30_000, 1_000, 0);
        assert!(!start.emergency);
        assert!(start.think < Duration::from_secs(2), "{start}");
    }
}
