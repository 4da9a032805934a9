//! # tafl-rules
//!
//! The rules of Copenhagen Hnefatafl and its relatives (Copenhagen rules on 7x7 to 15x15
//! boards, Standard Tablut), fast enough for search: bitboards (`u128` up to 11x11, 256 bits
//! above), legal moves only, copy-make, Zobrist hashing.
//!
//! * [`Variant`]: a layout plus [`Rules`]; presets `copenhagen`, `copenhagen-13`, `tablut`,
//!   `brandubh`, or a TOML file ([`Variant::from_toml`]).
//! * [`Position`]: pieces and side to move; [`Position::play`] checks, `play_unchecked` does not.
//! * [`Game`]: a position plus history; decides [`Outcome`]s, repetition and move limits.
//! * [`notation`]: squares, moves, FEN, OpenTafl records, game records; [`Symmetry`].
//!
//! ## Interpretations where the rules text is silent
//! * **Exit fort**: the fort is the region of empty squares the king can reach (his own square
//!   included); the king must stand on the edge and be able to move; the rim of that region must
//!   hold no attacker, and each rim defender must be safe forever with the defenders standing
//!   still: the safe defenders are the largest set in which each member, on each axis, has a
//!   neighbour that is off the board, inside the fort (the king's square too, since the king is
//!   never hostile to his own men; not an empty throne or a corner), or another member; any
//!   defender may be a member, not only the rim. No shieldwall can take a rim defender (each one
//!   on the edge touches the fort in front or along the edge; `Board::unbreakable_defenders`
//!   gives the argument). Checked after defender moves only: it is the defenders who complete a
//!   fort.
//! * **Encirclement** is checked after attacker moves only (a defender move cannot create it); a
//!   defender on the edge means no encirclement; a board without defenders or king is not
//!   encircled.
//! * **Shieldwall**: the king counts as a member of a row (he needs an attacker in front too)
//!   and survives; an armed king may close a row for the defenders; the row must be at least
//!   two pieces; a corner closes one end; only the moving piece's arrival can close it.
//! * **Repetition** counts positions with the same side to move since the last capture (a
//!   capture makes earlier positions unreachable). Under Copenhagen rules the defenders lose
//!   on the third occurrence, whichever side made it.
//! * **Order of checks after a move**: king captured, king escaped, exit fort, encirclement,
//!   repetition, no legal move for the next player, move limit.
//! * **Tablut throne** is hostile to defenders even with the king on it ("hostile to every
//!   piece"); soldiers may neither stop on nor pass it.
//! * **Perft** treats decided positions (king taken or escaped, fort, encirclement) as leaves
//!   and ignores repetition.

mod bitboard;
mod board;
mod danger;
mod game;
mod geometry;
pub mod notation;
mod perft;
mod position;
pub mod replay;
mod setup;
mod square;
mod symmetry;
mod variant;
mod zobrist;

pub use board::{MAX_MOVES, MoveList};
pub use danger::{KingDanger, king_danger};
pub use game::{Game, Outcome, PlayError, Reason};
pub use notation::{MoveText, ParseError, parse_move, parse_square};
pub use position::{IllegalMove, MAX_CAPTURES, Played, Position, Squares};
pub use setup::{Setup, SetupError};
pub use square::{Direction, MAX_SIZE, Move, Piece, Side, Square};
pub use symmetry::Symmetry;
pub use variant::{Escape, KingCapture, NoMoves, PRESETS, Repetition, Rules, ThroneHostility, Variant, VariantError};
