//! A player for the servers' tests: it writes down the limits each search was given, so that
//! the tests check the time a server grants (the logic) rather than time a stopwatch.

use std::sync::{Arc, Mutex};

use tafl_rules::Game;
use tafl_search::{Limits, MoveChoice, Player, PlayerError};

/// Plays the first legal move at once and keeps the limits it was asked with.
pub(crate) struct LimitsRecorder {
    pub(crate) asked: Arc<Mutex<Vec<Limits>>>,
}

impl LimitsRecorder {
    /// A recorder and the list it writes to.
    pub(crate) fn new() -> (LimitsRecorder, Arc<Mutex<Vec<Limits>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        (LimitsRecorder { asked: Arc::clone(&asked) }, asked)
    }
}

impl Player for LimitsRecorder {
    fn name(&self) -> String {
        "limits-recorder".into()
    }

    fn choose(&mut self, game: &Game, limits: &Limits) -> Result<MoveChoice, PlayerError> {
        self.asked.lock().expect("not poisoned").push(limits.clone());
        game.legal_moves().first().copied().map(MoveChoice::just).ok_or(PlayerError::NoMoves)
    }
}
