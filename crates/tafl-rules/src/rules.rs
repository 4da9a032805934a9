//! The rule options a variant chooses among (throne, king, escape, shieldwall, fort,
//! encirclement, repetition, no moves, move limit), and the rules of the presets. Below
//! [`crate::variant`], which pairs them with a board, so that the move generator's geometry
//! reads them without knowing variants.

use serde::{Deserialize, Serialize};

/// When the empty or occupied throne counts as a hostile square against defenders.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThroneHostility {
    /// Always hostile to defenders (Tablut).
    Always,
    /// Hostile to defenders only while the king is not on it (Copenhagen).
    WhenEmpty,
    /// Never hostile to defenders.
    Never,
}

/// How the king is captured.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KingCapture {
    /// Copenhagen: attackers on all four sides, or three and the throne next to him; never on
    /// the board edge.
    FourSides,
    /// Tablut: four sides, where the throne, a corner or the board edge counts as a side.
    FourSidesEdgeHostile,
    /// Like a soldier: two attackers (or an attacker and a hostile square) on opposite sides.
    Custodial,
}

/// Where the king must go to win.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Escape {
    /// A corner square (corners are then restricted and hostile).
    Corner,
    /// Any square on the board edge (corners are then ordinary squares).
    Edge,
}

/// What happens when a position repeats for the third time.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Repetition {
    /// Copenhagen: the defenders lose.
    DefendersLose,
    /// The game is drawn.
    Draw,
    /// Not modelled: positions may repeat any number of times.
    Off,
}

/// What happens to a player who cannot move.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoMoves {
    /// The player loses (Copenhagen).
    Lose,
    /// The game is drawn (Tablut).
    Draw,
}

/// Every switchable rule option of a variant.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Rules {
    /// Soldiers may pass over the empty throne (Copenhagen) or not (Tablut).
    pub throne_passable: bool,
    /// Whether the throne is hostile to attackers.
    pub throne_hostile_to_attackers: bool,
    /// When the throne is hostile to defenders.
    pub throne_hostile_to_defenders: ThroneHostility,
    /// The king takes part in captures as mover and as anvil.
    pub king_armed: bool,
    /// How the king is captured.
    pub king_capture: KingCapture,
    /// Corner or edge escape.
    pub escape: Escape,
    /// Shieldwall captures along the board edge.
    pub shieldwall: bool,
    /// Exit forts win for the defenders.
    pub exit_fort: bool,
    /// Encircling all defenders wins for the attackers.
    pub encirclement: bool,
    /// The third occurrence of a position.
    pub repetition: Repetition,
    /// A player without legal moves.
    pub no_moves: NoMoves,
    /// Draw when each side has made this many moves without a capture.
    pub move_limit: Option<u16>,
}

impl Rules {
    /// Copenhagen Hnefatafl's rules.
    pub const COPENHAGEN: Rules = Rules {
        throne_passable: true,
        throne_hostile_to_attackers: true,
        throne_hostile_to_defenders: ThroneHostility::WhenEmpty,
        king_armed: true,
        king_capture: KingCapture::FourSides,
        escape: Escape::Corner,
        shieldwall: true,
        exit_fort: true,
        encirclement: true,
        repetition: Repetition::DefendersLose,
        no_moves: NoMoves::Lose,
        move_limit: None,
    };

    /// Standard Tablut's rules.
    pub const TABLUT: Rules = Rules {
        throne_passable: false,
        throne_hostile_to_attackers: true,
        throne_hostile_to_defenders: ThroneHostility::Always,
        king_armed: true,
        king_capture: KingCapture::FourSidesEdgeHostile,
        escape: Escape::Corner,
        shieldwall: false,
        exit_fort: false,
        encirclement: false,
        repetition: Repetition::Off,
        no_moves: NoMoves::Draw,
        move_limit: None,
    };
}
