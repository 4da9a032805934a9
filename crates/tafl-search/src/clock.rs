//! Where the players read the time. A player that keeps to a time limit reads a [`Clock`]
//! rather than `Instant::now()`, so that a test can move time by hand and check the
//! time-keeping logic exactly, on any machine, without a stopwatch.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A source of the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Now.
    fn now(&self) -> Instant;
}

/// The real time (`Instant::now()`): what every player uses unless a test says otherwise.
#[derive(Clone, Copy, Debug, Default)]
pub struct WallClock;

impl Clock for WallClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock for tests: it stands still except when [`ManualClock::advance`] moves it, and it
/// moves by `tick` at every reading (a search that reads the time "costs" time).
#[derive(Debug)]
pub struct ManualClock {
    origin: Instant,
    nanos: AtomicU64,
    tick: u64,
}

impl ManualClock {
    /// A clock that moves only by [`ManualClock::advance`].
    #[must_use]
    pub fn new() -> ManualClock {
        ManualClock::ticking(Duration::ZERO)
    }

    /// A clock that also moves by `tick` each time it is read.
    #[must_use]
    pub fn ticking(tick: Duration) -> ManualClock {
        ManualClock { origin: Instant::now(), nanos: AtomicU64::new(0), tick: nanos(tick) }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.nanos.fetch_add(nanos(by), Ordering::SeqCst);
    }

    /// The time it shows since it was made, without reading it (no tick).
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }
}

impl Default for ManualClock {
    fn default() -> ManualClock {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        let before = self.nanos.fetch_add(self.tick, Ordering::SeqCst);
        self.origin + Duration::from_nanos(before + self.tick)
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_or_read() {
        let still = ManualClock::new();
        assert_eq!(still.now(), still.now());
        still.advance(Duration::from_millis(5));
        assert_eq!(still.elapsed(), Duration::from_millis(5));
        let ticking = ManualClock::ticking(Duration::from_millis(2));
        let a = ticking.now();
        assert_eq!(ticking.now() - a, Duration::from_millis(2));
        assert_eq!(ticking.elapsed(), Duration::from_millis(4));
    }
}
