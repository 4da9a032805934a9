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
//!   still (RULES.md's "impossible for the attackers to break"). The safe defenders are the
//!   largest set (any defenders, not only the rim) that attackers cannot take while the set
//!   stands, the attackers standing only where they can ever get to: a flood from them through
//!   every square but the fort, the set, the corners and an impassable throne (the throne and
//!   the corners are no squares to stop on). A capture needs an attacker arriving on one side
//!   and, across, a second attacker or a square hostile to defenders (a corner, the empty
//!   throne). So a member needs, on each axis, a neighbour that is neither hostile nor a square
//!   an attacker can stand on: off the board, inside the fort (the king's square too, since the
//!   king is never hostile to his own men; not an empty throne or a corner), another member, or
//!   a pocket no attacker can reach, walled off by members (as good as the edge). With a single
//!   attacker left the only threat is a hostile square on one side and a square he can reach
//!   across it; with none, nothing can be taken. A second attacker counts wherever he stands,
//!   even shut away. No shieldwall can take a rim defender (`Board::walls_stand` gives the
//!   argument). Checked after defender moves only: it is the defenders who complete a fort.
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
mod rules;
mod setup;
mod square;
mod symmetry;
mod tactics;
mod variant;
mod zobrist;

pub use board::{MAX_MOVES, MoveList};
pub use danger::{KingDanger, king_danger};
pub use game::{Game, Outcome, PlayError, Reason};
pub use notation::{MoveText, ParseError, parse_move, parse_square};
pub use position::{IllegalMove, MAX_CAPTURES, Played, Position, Squares};
pub use rules::{Escape, KingCapture, NoMoves, Repetition, Rules, ThroneHostility};
pub use setup::{Setup, SetupError};
pub use square::{Direction, MAX_SIZE, Move, Piece, Side, Square};
pub use symmetry::Symmetry;
pub use tactics::{Tactics, tactics};
pub use variant::{PRESETS, Variant, VariantError};
