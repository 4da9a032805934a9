//! One game between two players, refereed by [`tafl_rules::Game`].

use std::time::Instant;

use serde::{Deserialize, Serialize};
use tafl_rules::{Game, Move, Outcome, Reason, Side, Square};
use tafl_search::{Limits, Player};

use crate::opening::Opening;

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Termination {
    /// By the rules: a win or a draw of the variant.
    Rules {
        /// The rule.
        reason: Reason,
    },
    /// The arena's move cap was reached: a draw.
    MaxPlies {
        /// The cap.
        plies: usize,
    },
    /// A player failed: its engine died, timed out, answered garbage or chose an illegal
    /// move. It loses.
    Forfeit {
        /// The side that failed.
        loser: Side,
        /// What happened.
        error: String,
    },
}

impl Termination {
    /// A short name: the rule's name, `max-plies` or `forfeit`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Termination::Rules { reason } => reason.name(),
            Termination::MaxPlies { .. } => "max-plies",
            Termination::Forfeit { .. } => "forfeit",
        }
    }
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct PlayedGame {
    /// The game as played, the opening included.
    pub game: Game,
    /// Captures of every ply, the opening included.
    pub captures: Vec<Vec<Square>>,
    /// Plies of the opening (played by neither player).
    pub opening_plies: usize,
    /// The winner; `None` for a draw.
    pub winner: Option<Side>,
    /// How it ended.
    pub termination: Termination,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl PlayedGame {
    /// The moves, the opening included.
    #[must_use]
    pub fn moves(&self) -> &[Move] {
        self.game.moves()
    }
    /// Pieces captured by `side`.
    #[must_use]
    pub fn captures_by(&self, side: Side) -> usize {
        let first = self.game.start().side_to_move();
        self.captures
            .iter()
            .enumerate()
            .filter(|(ply, _)| (if ply % 2 == 0 { first } else { first.opponent() }) == side)
            .map(|(_, c)| c.len())
            .sum()
    }
}

/// Plays `opening` out between two players. A game longer than `max_plies` plies in all
/// (the opening included) is a draw. A player's error, or an illegal move, loses the game.
pub fn play_game(
    opening: &Opening,
    attackers: &mut dyn Player,
    attacker_limits: &Limits,
    defenders: &mut dyn Player,
    defender_limits: &Limits,
    max_plies: usize,
) -> PlayedGame {
    let started = Instant::now();
    let mut game = Game::from_position(opening.start);
    let mut captures = Vec::new();
    for &m in &opening.moves {
        captures.push(game.play_unchecked(m).captured.to_vec());
    }
    attackers.new_game();
    defenders.new_game();
    let (winner, termination) = loop {
        match game.outcome() {
            Outcome::Decided { winner, reason } => break (Some(winner), Termination::Rules { reason }),
            Outcome::Draw { reason } => break (None, Termination::Rules { reason }),
            Outcome::Ongoing => {}
        }
        if game.ply() >= max_plies {
            break (None, Termination::MaxPlies { plies: max_plies });
        }
        let side = game.position().side_to_move();
        let choice = match side {
            Side::Attackers => attackers.choose(&game, attacker_limits),
            Side::Defenders => defenders.choose(&game, defender_limits),
        };
        let forfeit = |error: String| (Some(side.opponent()), Termination::Forfeit { loser: side, error });
        let mv = match choice {
            Ok(c) => c.mv,
            Err(e) => break forfeit(e.to_string()),
        };
        match game.play(mv) {
            Ok(played) => captures.push(played.captured.to_vec()),
            Err(e) => break forfeit(format!("illegal move {mv}: {e}")),
        }
    };
    PlayedGame {
        game,
        captures,
        opening_plies: opening.moves.len(),
        winner,
        termination,
        seconds: started.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tafl_rules::Variant;
    use tafl_search::{MoveChoice, PlayerError, RandomPlayer};

    struct Broken;
    impl Player for Broken {
        fn name(&self) -> String {
            "broken".into()
        }
        fn choose(&mut self, _: &Game, _: &Limits) -> Result<MoveChoice, PlayerError> {
            Err(PlayerError::Engine("it broke".into()))
        }
    }

    #[test]
    fn random_players_finish_or_hit_the_cap() {
        let opening = Opening::start(Variant::copenhagen());
        let (mut a, mut b) = (RandomPlayer::new(1), RandomPlayer::new(2));
        let g = play_game(&opening, &mut a, &Limits::default(), &mut b, &Limits::default(), 400);
        assert!(g.game.outcome().is_over() || g.termination == Termination::MaxPlies { plies: 400 });
        assert_eq!(g.captures.len(), g.moves().len());
        let g = play_game(&opening, &mut a, &Limits::default(), &mut b, &Limits::default(), 3);
        assert_eq!(g.termination, Termination::MaxPlies { plies: 3 });
        assert_eq!(g.winner, None);
    }

    /// Answers a move of the opponent's pieces: a cheat the referee must catch.
    struct Cheat;
    impl Player for Cheat {
        fn name(&self) -> String {
            "cheat".into()
        }
        fn choose(&mut self, _: &Game, _: &Limits) -> Result<MoveChoice, PlayerError> {
            // The attackers' d1-d4 of the start, whoever is to move.
            let d1 = tafl_rules::parse_square("d1", 11).expect("square");
            let d4 = tafl_rules::parse_square("d4", 11).expect("square");
            Ok(MoveChoice::just(tafl_rules::Move::new(d1, d4)))
        }
    }

    #[test]
    fn a_cheating_player_forfeits() {
        // The defenders' engine answers with an attacker's move: the referee's own check
        // makes it lose, and the illegal move is not played.
        let opening = Opening::start(Variant::copenhagen());
        let mut a = RandomPlayer::new(1);
        let g = play_game(&opening, &mut a, &Limits::default(), &mut Cheat, &Limits::default(), 100);
        assert_eq!(g.winner, Some(Side::Attackers));
        match &g.termination {
            Termination::Forfeit { loser: Side::Defenders, error } => {
                assert!(error.starts_with("illegal move d1-d4"), "{error}")
            }
            t => panic!("unexpected {t:?}"),
        }
        assert_eq!(g.moves().len(), 1);
    }

    #[test]
    fn a_failing_player_forfeits() {
        let opening = Opening::start(Variant::copenhagen());
        let mut a = RandomPlayer::new(1);
        let g = play_game(&opening, &mut a, &Limits::default(), &mut Broken, &Limits::default(), 100);
        assert_eq!(g.winner, Some(Side::Attackers));
        assert!(matches!(g.termination, Termination::Forfeit { loser: Side::Defenders, .. }));
        assert_eq!(g.moves().len(), 1);
    }
}
