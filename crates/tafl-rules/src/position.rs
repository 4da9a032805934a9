//! `Position`: the pieces, the side to move and the variant, at the bit width the board needs.

use std::fmt;

use arrayvec::ArrayVec;

use crate::bitboard::{Bits, U256};
use crate::board::{Board, Effects, MoveList};
use crate::geometry::{Engine, Geometry};
use crate::setup::{Setup, SetupError};
use crate::square::{Move, Piece, Side, Square};
use crate::variant::Variant;

/// The most soldiers one move can capture: three by custodial capture (the fourth neighbour is
/// where the piece came from) plus two shieldwall rows of at most 13 soldiers each on 15x15.
pub const MAX_CAPTURES: usize = 32;

/// A position of a variant: pieces and side to move. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Position {
    variant: &'static Variant,
    inner: Inner,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Inner {
    Small(Board<u128>),
    Large(Board<U256>),
}

/// What a move did besides moving its piece.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Played {
    /// Soldiers it captured (custodial and shieldwall), in square order.
    pub captured: ArrayVec<Square, MAX_CAPTURES>,
    /// It completed the capture of the king.
    pub king_captured: bool,
}

/// Why a move is not legal in a position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    /// A square is off the board.
    #[error("{0} is off the board")]
    OffBoard(Square),
    /// Nothing of the side to move stands on `from`.
    #[error("no piece of the {side} on {from}")]
    NoPiece {
        /// The square.
        from: Square,
        /// Who is to move.
        side: Side,
    },
    /// From and to are not on one rank or file.
    #[error("{0} is not along a rank or file")]
    NotStraight(Move),
    /// Something stands in the way (or on the target square).
    #[error("{0} is blocked")]
    Blocked(Move),
    /// A soldier may not stop on (or pass) the throne or a corner here.
    #[error("{0} ends on or passes a square only the king may use")]
    Restricted(Move),
}

macro_rules! with_board {
    ($pos:expr, |$b:ident, $g:ident| $body:expr) => {
        match (&$pos.inner, &$pos.variant.engine) {
            (Inner::Small($b), Engine::Small($g)) => $body,
            (Inner::Large($b), Engine::Large($g)) => $body,
            _ => unreachable!("a position's bit width always matches its variant"),
        }
    };
}

macro_rules! with_board_mut {
    ($pos:expr, |$b:ident, $g:ident| $body:expr) => {
        match (&mut $pos.inner, &$pos.variant.engine) {
            (Inner::Small($b), Engine::Small($g)) => $body,
            (Inner::Large($b), Engine::Large($g)) => $body,
            _ => unreachable!("a position's bit width always matches its variant"),
        }
    };
}

fn board_from_setup<B: Bits>(setup: &Setup) -> Board<B> {
    let mut board = Board::empty(setup.side_to_move);
    for (sq, piece) in setup.pieces() {
        let kind = match piece {
            Piece::Attacker => 0,
            Piece::Defender => 1,
            Piece::King => 2,
        };
        board.put(kind, sq.index(setup.size));
    }
    board
}

/// The squares of a set of pieces, in index order (rank 1 first). Allocation-free.
pub struct Squares<'a>(SquaresInner<'a>);

enum SquaresInner<'a> {
    Small(u128, &'a Geometry<u128>),
    Large(U256, &'a Geometry<U256>),
}

impl Iterator for Squares<'_> {
    type Item = Square;
    #[inline]
    fn next(&mut self) -> Option<Square> {
        match &mut self.0 {
            SquaresInner::Small(bits, g) => bits.pop().map(|i| g.square[i as usize]),
            SquaresInner::Large(bits, g) => bits.pop().map(|i| g.square[i as usize]),
        }
    }
}

impl Position {
    /// The variant's start position.
    #[must_use]
    pub fn start(variant: &'static Variant) -> Position {
        // The start setup was checked when the variant was built.
        Self::build(variant, variant.start_setup())
    }

    /// A checked position from plain data.
    pub fn from_setup(variant: &'static Variant, setup: &Setup) -> Result<Position, SetupError> {
        setup.check(variant)?;
        Ok(Self::build(variant, setup))
    }

    fn build(variant: &'static Variant, setup: &Setup) -> Position {
        let inner = match variant.engine {
            Engine::Small(_) => Inner::Small(board_from_setup(setup)),
            Engine::Large(_) => Inner::Large(board_from_setup(setup)),
        };
        Position { variant, inner }
    }

    /// The position as plain data.
    #[must_use]
    pub fn to_setup(&self) -> Setup {
        let size = self.size();
        let mut setup = Setup::empty(size, self.side_to_move());
        for piece in [Piece::Attacker, Piece::Defender, Piece::King] {
            for sq in self.squares(piece) {
                setup.set(sq, Some(piece));
            }
        }
        setup
    }

    /// The same pieces with `side` to move: what that side could do if it were its turn (a
    /// pass when it is not), for threats one move ahead.
    #[must_use]
    pub fn with_side_to_move(&self, side: Side) -> Position {
        let mut position = *self;
        with_board_mut!(position, |b, _g| b.set_side(side));
        position
    }

    /// The variant this position belongs to.
    #[must_use]
    pub fn variant(&self) -> &'static Variant {
        self.variant
    }
    /// Board side length.
    #[must_use]
    pub fn size(&self) -> u8 {
        self.variant.size()
    }
    /// Who moves next.
    #[must_use]
    pub fn side_to_move(&self) -> Side {
        with_board!(self, |b, _g| b.side)
    }
    /// Zobrist hash of pieces and side to move.
    #[must_use]
    pub fn hash(&self) -> u64 {
        with_board!(self, |b, _g| b.hash)
    }

    /// The piece on `sq`, if any.
    #[must_use]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        if !sq.on_board(self.size()) {
            return None;
        }
        let i = sq.index(self.size());
        with_board!(self, |b, _g| {
            if b.attackers.has(i) {
                Some(Piece::Attacker)
            } else if b.defenders.has(i) {
                Some(Piece::Defender)
            } else if b.king.has(i) {
                Some(Piece::King)
            } else {
                None
            }
        })
    }

    /// The squares of every piece of one kind, in index order (rank 1 first).
    #[must_use]
    pub fn squares(&self, piece: Piece) -> Squares<'static> {
        fn pick<B: Bits>(b: &Board<B>, piece: Piece) -> B {
            match piece {
                Piece::Attacker => b.attackers,
                Piece::Defender => b.defenders,
                Piece::King => b.king,
            }
        }
        match (&self.inner, &self.variant.engine) {
            (Inner::Small(b), Engine::Small(g)) => Squares(SquaresInner::Small(pick(b, piece), g)),
            (Inner::Large(b), Engine::Large(g)) => Squares(SquaresInner::Large(pick(b, piece), g)),
            _ => unreachable!("a position's bit width always matches its variant"),
        }
    }

    /// How many pieces of one kind are on the board.
    #[must_use]
    pub fn count(&self, piece: Piece) -> u32 {
        with_board!(self, |b, _g| match piece {
            Piece::Attacker => b.attackers.count(),
            Piece::Defender => b.defenders.count(),
            Piece::King => b.king.count(),
        })
    }

    /// The king's square, or `None` in a position without a king.
    #[must_use]
    pub fn king(&self) -> Option<Square> {
        self.squares(Piece::King).next()
    }

    /// Every move the side to move may make, ignoring whether the game is already over
    /// (`Game::legal_moves` knows that).
    #[must_use]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        with_board!(self, |b, g| b.generate(g, &mut list));
        list
    }

    /// The number of moves `legal_moves` would list.
    #[must_use]
    pub fn count_legal_moves(&self) -> u32 {
        with_board!(self, |b, g| b.count_moves(g))
    }

    /// True when the side to move has a move.
    #[must_use]
    pub fn has_legal_moves(&self) -> bool {
        with_board!(self, |b, g| b.has_moves(g))
    }

    /// Checks a move for the side to move, saying why it is illegal.
    pub fn check_move(&self, m: Move) -> Result<(), IllegalMove> {
        let size = self.size();
        for sq in [m.from, m.to] {
            if !sq.on_board(size) {
                return Err(IllegalMove::OffBoard(sq));
            }
        }
        let side = self.side_to_move();
        if self.piece_at(m.from).map(Piece::side) != Some(side) {
            return Err(IllegalMove::NoPiece { from: m.from, side });
        }
        let Some((dir, dist)) = m.direction_and_distance() else {
            return Err(IllegalMove::NotStraight(m));
        };
        let is_king = self.piece_at(m.from) == Some(Piece::King);
        let (df, dr) = dir.step();
        for k in 1..=dist as i8 {
            let sq = Square::new((m.from.file() as i8 + df * k) as u8, (m.from.rank() as i8 + dr * k) as u8);
            if self.piece_at(sq).is_some() {
                return Err(IllegalMove::Blocked(m));
            }
        }
        let legal = with_board!(self, |b, g| b.is_legal(g, m.from.index(size), m.to.index(size)));
        if legal || is_king { Ok(()) } else { Err(IllegalMove::Restricted(m)) }
    }

    /// Plays a move after checking it; the position is untouched on error.
    pub fn play(&mut self, m: Move) -> Result<Played, IllegalMove> {
        self.check_move(m)?;
        Ok(self.play_unchecked(m))
    }

    /// Plays a move that must be legal (as from `legal_moves`); for search hot paths.
    pub fn play_unchecked(&mut self, m: Move) -> Played {
        let size = self.size();
        let (from, to) = (m.from.index(size), m.to.index(size));
        with_board_mut!(self, |b, g| {
            let effects = b.play(g, from, to);
            played(effects, g)
        })
    }

    /// The king stands on an escape square (a corner, or the edge with edge escape).
    #[must_use]
    pub fn king_escaped(&self) -> bool {
        with_board!(self, |b, g| b.king_escaped(g))
    }
    /// A king move straight onto an escape square, whoever is to move (with the attackers to
    /// move: the threat they must stop). `None` without a king or when every line is blocked.
    #[must_use]
    pub fn king_escape_move(&self) -> Option<Move> {
        with_board!(self, |b, g| b
            .king_escape_move(g)
            .map(|(from, to)| Move::new(g.square[from as usize], g.square[to as usize])))
    }
    /// The defenders have an exit fort (see the crate docs for the exact test).
    #[must_use]
    pub fn exit_fort(&self) -> bool {
        with_board!(self, |b, g| b.exit_fort(g))
    }
    /// The attackers encircle the king and every defender.
    #[must_use]
    pub fn encircled(&self) -> bool {
        with_board!(self, |b, g| b.encircled(g))
    }
    /// The king is enclosed as the variant's king capture requires.
    #[must_use]
    pub fn king_surrounded(&self) -> bool {
        with_board!(self, |b, g| b.king_surrounded(g))
    }

    /// Perft: the number of move sequences of `depth` plies (see [`crate::perft`]).
    #[must_use]
    pub fn perft(&self, depth: u32, bulk: bool) -> u64 {
        with_board!(self, |b, g| crate::perft::perft(b, g, depth, bulk))
    }
}

fn played<B: Bits>(effects: Effects<B>, g: &Geometry<B>) -> Played {
    let mut captured = ArrayVec::new();
    let mut bits = effects.captured;
    while let Some(i) = bits.pop() {
        captured.push(g.square[i as usize]);
    }
    Played { captured, king_captured: effects.king_captured }
}

impl PartialEq for Position {
    fn eq(&self, other: &Position) -> bool {
        std::ptr::eq(self.variant, other.variant) && self.inner == other.inner
    }
}
impl Eq for Position {}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({} {})", self.variant.name(), self.to_fen())
    }
}
