//! The hand-written evaluation, and the exact one-move tactics (king escape, king capture) that
//! the search checks at every node.
//!
//! Everything works on a [`Snapshot`]: the position copied into a padded mailbox, because the
//! rules crate keeps its bitboards private and the features here walk lines square by square.
//!
//! The features, from the defenders' point of view (the constants below hold the weights):
//! * material: an attacker is worth 100, a defender 200 (every preset starts even);
//! * the king: closeness to the nearest corner, mobility, escape squares he sees now (decisive
//!   with the defenders to move, which the search scores before the evaluation is asked; one
//!   route must be blocked, two are almost always lost for the attackers), squares he can reach
//!   that see an escape square, and forks (a square seeing two);
//! * the attackers' grip: an unbroken ring around the king, attackers next to him, a capture
//!   of the king threatened for next move, corners sealed on their diagonal (a3-b2-c1), squares
//!   next to corners held;
//! * threats: soldiers either side could capture with one move (the side to move cashes one,
//!   the other side saves one of its own);
//! * a little general mobility, and the tempo.

use arrayvec::ArrayVec;
use tafl_rules::{Escape, KingCapture, Move, Piece, Position, Rules, Side, Square, ThroneHostility, Variant};

/// Centipawn-like scale: one attacker soldier is worth 100.
pub(crate) type Score = i32;

/// The weights of the evaluation's features, in units of one attacker soldier = 100; each one
/// counts for the side its feature favours. `Default` holds the hand-set values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalWeights {
    /// An attacker soldier.
    pub attacker: i32,
    /// A defender soldier: fewer of them, each matters more. Every preset starts with twice as many
    /// attackers as defenders, so this makes the start's material even.
    pub defender: i32,
    /// Per step the king stands closer to his nearest corner than the farthest possible.
    pub king_near_corner: i32,
    /// Per square the king can move to.
    pub king_mobility: i32,
    /// Per square the king can reach in one move that sees an escape square.
    pub king_pre_route: i32,
    /// The king can reach, in one move, a square that sees two escape squares (a fork), with the
    /// defenders to move: one move from an escape the attackers cannot stop with one move.
    pub king_fork_to_move: i32,
    /// The same fork when the attackers are to move (they can still cover it).
    pub king_fork_waiting: i32,
    /// The king sees one escape square and the attackers are to move: they must block (when they
    /// cannot, it counts as two).
    pub king_one_route: i32,
    /// The king sees two or more escape squares with the attackers to move: almost always lost.
    pub king_two_routes: i32,
    /// With the attackers to move, the king can reach forks along two of his lines: one move
    /// cannot close both.
    pub king_two_forks: i32,
    /// The attackers hold an unbroken ring around the king: he cannot reach the edge without
    /// captures, whatever the defenders do.
    pub king_enclosed: i32,
    /// Attackers next to the king (not on the edge, where he cannot be captured): by count 0..=4.
    pub king_pressed: [i32; 5],
    /// The attackers threaten to capture the king next move and the defenders are to move.
    pub king_capture_threat: i32,
    /// An attacker on one of the three squares that seal a corner diagonally (a3, b2, c1 for a1).
    pub corner_seal: i32,
    /// All three sealing squares of a corner held.
    pub corner_sealed: i32,
    /// An attacker on a square next to a corner (a2, b1): blocks a line but can be captured there.
    pub corner_next: i32,
    /// The side to move can capture something: it gains most of the piece.
    pub threat_to_move_pct: i32,
    /// Each piece of the side to move that the opponent could capture next move (it can save one).
    pub hanging_pct: i32,
    /// Two or more pieces hanging: one of them is likely lost.
    pub hanging_two_pct: i32,
    /// Whose move it is.
    pub tempo: i32,
    /// General mobility: this much per four moves more for the defenders than the attackers.
    pub mobility_per_4: i32,
}

impl Default for EvalWeights {
    fn default() -> EvalWeights {
        EvalWeights {
            attacker: 100,
            defender: 200,
            king_near_corner: 6,
            king_mobility: 3,
            king_pre_route: 35,
            king_fork_to_move: 700,
            king_fork_waiting: 120,
            king_one_route: 250,
            king_two_routes: 2500,
            king_two_forks: 1200,
            king_enclosed: 300,
            king_pressed: [0, 12, 35, 90, 90],
            king_capture_threat: 300,
            corner_seal: 70,
            corner_sealed: 100,
            corner_next: 25,
            threat_to_move_pct: 60,
            hanging_pct: 15,
            hanging_two_pct: 45,
            tempo: 8,
            mobility_per_4: 1,
        }
    }
}

const EMPTY: u8 = 0;
const ATT: u8 = 1;
const DEF: u8 = 2;
const KING: u8 = 3;
/// Padding around the board so that line walks stop without bounds checks.
const OFF: u8 = 4;

/// The padded mailbox: a 17x17 frame fits boards up to 15x15 with one square of border.
const W: i32 = 17;
const CELLS: usize = (W * W) as usize;
const DIRS: [i32; 4] = [W, 1, -W, -1];

/// The most soldiers of one side a board can hold.
const MAX_SOLDIERS: usize = 225;

/// A variant's board as the evaluation sees it, computed once per variant.
pub(crate) struct Frame {
    variant: &'static Variant,
    rules: Rules,
    size: i32,
    /// `EMPTY` on the board, `OFF` around it.
    base: [u8; CELLS],
    /// Squares that are escape targets for the king.
    escape: [bool; CELLS],
    /// Corner squares, when corners are special.
    corner: [bool; CELLS],
    throne: i32,
    weights: EvalWeights,
}

impl Frame {
    /// The frame of a variant.
    pub(crate) fn new(variant: &'static Variant, weights: EvalWeights) -> Frame {
        let size = variant.size() as i32;
        let rules = *variant.rules();
        let mut base = [OFF; CELLS];
        let mut escape = [false; CELLS];
        let mut corner = [false; CELLS];
        for r in 0..size {
            for f in 0..size {
                let i = ((r + 1) * W + f + 1) as usize;
                base[i] = EMPTY;
                let on_edge = r == 0 || f == 0 || r == size - 1 || f == size - 1;
                corner[i] = rules.escape == Escape::Corner && (r == 0 || r == size - 1) && (f == 0 || f == size - 1);
                escape[i] = match rules.escape {
                    Escape::Corner => corner[i],
                    Escape::Edge => on_edge,
                };
            }
        }
        let c = size / 2;
        Frame { variant, rules, size, base, escape, corner, throne: (c + 1) * W + c + 1, weights }
    }

    /// The variant it was made for.
    pub(crate) fn variant(&self) -> &'static Variant {
        self.variant
    }

    /// The weights it evaluates with.
    pub(crate) fn weights(&self) -> &EvalWeights {
        &self.weights
    }
}

/// A position copied into a mailbox with the facts the features need.
pub(crate) struct Snapshot<'a> {
    pos: &'a Position,
    frame: &'a Frame,
    rules: &'a Rules,
    size: i32,
    cells: [u8; CELLS],
    /// Squares that are escape targets for the king.
    escape: &'a [bool; CELLS],
    king: Option<i32>,
    king_square: Option<Square>,
    throne: i32,
    /// Mailbox indices of the soldiers (16 bits keep the snapshot small to copy).
    attackers: ArrayVec<u16, MAX_SOLDIERS>,
    defenders: ArrayVec<u16, MAX_SOLDIERS>,
    side: Side,
}

#[inline]
fn idx(sq: Square) -> i32 {
    (sq.rank() as i32 + 1) * W + sq.file() as i32 + 1
}

#[inline]
fn square(i: i32) -> Square {
    Square::new((i % W - 1) as u8, (i / W - 1) as u8)
}

impl<'a> Snapshot<'a> {
    /// Copies `pos` (of the frame's variant) into a mailbox.
    pub(crate) fn new(frame: &'a Frame, pos: &'a Position) -> Snapshot<'a> {
        debug_assert!(std::ptr::eq(frame.variant, pos.variant()));
        let mut cells = frame.base;
        let mut attackers = ArrayVec::new();
        let mut defenders = ArrayVec::new();
        for sq in pos.squares(Piece::Attacker) {
            let i = idx(sq);
            cells[i as usize] = ATT;
            attackers.push(i as u16);
        }
        for sq in pos.squares(Piece::Defender) {
            let i = idx(sq);
            cells[i as usize] = DEF;
            defenders.push(i as u16);
        }
        let king_square = pos.king();
        let king = king_square.map(idx);
        if let Some(k) = king {
            cells[k as usize] = KING;
        }
        Snapshot {
            pos,
            frame,
            rules: &frame.rules,
            size: frame.size,
            cells,
            escape: &frame.escape,
            king,
            king_square,
            throne: frame.throne,
            attackers,
            defenders,
            side: pos.side_to_move(),
        }
    }

    #[inline]
    fn at(&self, i: i32) -> u8 {
        self.cells[i as usize]
    }

    #[inline]
    fn is_corner(&self, i: i32) -> bool {
        self.frame.corner[i as usize]
    }

    /// Soldiers may not stop here.
    fn restricted(&self, i: i32) -> bool {
        i == self.throne || self.is_corner(i)
    }

    /// Soldiers may not slide over this (empty) square.
    fn soldier_blocked(&self, i: i32) -> bool {
        self.is_corner(i) || (i == self.throne && !self.rules.throne_passable)
    }

    /// How many escape squares the king would see from `from` (the king's own square counts as
    /// empty: he is the one moving). With `first` set, returns as soon as one is found.
    fn escapes_seen_from(&self, from: i32) -> u32 {
        self.escape_lines_from(from, None).0
    }

    /// How many escape squares the king would see from `from`, and whether one of those lines
    /// is unstoppable: no square on it that an attacker can reach in one move (`blockers`), as
    /// when the king stands next to a corner.
    fn escape_lines_from(&self, from: i32, blockers: Option<&[bool; CELLS]>) -> (u32, bool) {
        let mut seen = 0;
        let mut unstoppable = false;
        for d in DIRS {
            let mut i = from + d;
            let mut blockable = false;
            while matches!(self.at(i), EMPTY | KING) {
                if self.escape[i as usize] {
                    seen += 1;
                    unstoppable |= blockers.is_some() && !blockable;
                    break;
                }
                blockable |= blockers.is_some_and(|b| b[i as usize]);
                i += d;
            }
        }
        (seen, unstoppable)
    }

    /// A king move that reaches an escape square (only meaningful with the defenders to move).
    pub(crate) fn king_escape_move(&self) -> Option<Move> {
        let k = self.king?;
        for d in DIRS {
            let mut i = k + d;
            while self.at(i) == EMPTY {
                if self.escape[i as usize] {
                    return Some(Move::new(square(k), square(i)));
                }
                i += d;
            }
        }
        None
    }

    /// Attacker moves onto an empty square next to the king, with the squares they come from.
    fn attacker_moves_next_to_king(&self, mut f: impl FnMut(i32, i32) -> bool) {
        let Some(k) = self.king else { return };
        for d in DIRS {
            let t = k + d;
            if self.at(t) != EMPTY || self.restricted(t) {
                continue;
            }
            for e in DIRS {
                if e == -d {
                    continue; // that way lies the king
                }
                let mut i = t + e;
                while self.at(i) == EMPTY && !self.soldier_blocked(i) {
                    i += e;
                }
                if self.at(i) == ATT && f(i, t) {
                    return;
                }
            }
        }
    }

    /// Whether the king's surroundings leave room for a capture by one attacker move (a cheap
    /// filter before the exact test).
    fn king_capture_possible(&self) -> bool {
        let Some(k) = self.king else { return false };
        let mut hostile = 0;
        for d in DIRS {
            let n = k + d;
            let h = match self.rules.king_capture {
                KingCapture::FourSides => {
                    if self.at(n) == OFF {
                        return false; // never captured on the edge
                    }
                    self.at(n) == ATT || n == self.throne
                }
                KingCapture::FourSidesEdgeHostile => {
                    matches!(self.at(n), ATT | OFF) || n == self.throne || self.is_corner(n)
                }
                KingCapture::Custodial => return true,
            };
            hostile += u32::from(h);
        }
        hostile >= 3
    }

    /// An attacker move that captures the king (exact: the candidate is played on a copy).
    /// Only meaningful with the attackers to move.
    pub(crate) fn king_capture_move(&self) -> Option<Move> {
        if !self.king_capture_possible() {
            return None;
        }
        let mut found = None;
        self.attacker_moves_next_to_king(|from, to| {
            let m = Move::new(square(from), square(to));
            let mut copy = *self.pos;
            if copy.check_move(m).is_ok() && copy.play_unchecked(m).king_captured {
                found = Some(m);
                return true;
            }
            false
        });
        found
    }

    /// The attackers could capture the king with their next move (approximate: the king's
    /// surroundings allow it and an attacker can reach the open side).
    pub(crate) fn king_capture_threat(&self) -> bool {
        if !self.king_capture_possible() {
            return false;
        }
        let mut threat = false;
        self.attacker_moves_next_to_king(|_, _| {
            threat = true;
            true
        });
        threat
    }

    /// No path of squares free of attackers leads from the king to the board edge.
    pub(crate) fn king_enclosed(&self) -> bool {
        let Some(k) = self.king else { return false };
        let mut seen = [false; CELLS];
        let mut stack: ArrayVec<i32, CELLS> = ArrayVec::new();
        seen[k as usize] = true;
        stack.push(k);
        while let Some(i) = stack.pop() {
            for d in DIRS {
                let n = i + d;
                match self.at(n) {
                    OFF => return false, // `i` is on the edge
                    ATT => {}
                    _ if !seen[n as usize] => {
                        seen[n as usize] = true;
                        stack.push(n);
                    }
                    _ => {}
                }
            }
        }
        true
    }

    /// How many escape squares the king sees right now.
    pub(crate) fn king_routes(&self) -> u32 {
        self.king.map_or(0, |k| self.escapes_seen_from(k))
    }

    /// Marks the empty squares each side can move a piece to. `reach[0]` attackers, `reach[1]`
    /// defenders (the king included). Returns the move counts too.
    fn reach(&self) -> ([[bool; CELLS]; 2], [u32; 2]) {
        let mut reach = [[false; CELLS]; 2];
        let mut moves = [0u32; 2];
        for (s, soldiers) in [&self.attackers, &self.defenders].into_iter().enumerate() {
            for &from in soldiers {
                let from = i32::from(from);
                for d in DIRS {
                    let mut i = from + d;
                    while self.at(i) == EMPTY && !self.soldier_blocked(i) {
                        if !self.restricted(i) {
                            reach[s][i as usize] = true;
                            moves[s] += 1;
                        }
                        i += d;
                    }
                }
            }
        }
        if let Some(k) = self.king {
            for d in DIRS {
                let mut i = k + d;
                while self.at(i) == EMPTY {
                    reach[1][i as usize] = true;
                    moves[1] += 1;
                    i += d;
                }
            }
        }
        (reach, moves)
    }

    /// Whether a square acts as an anvil against a soldier of `victim`'s side.
    fn hostile_to(&self, i: i32, victim: u8) -> bool {
        if self.is_corner(i) {
            return true;
        }
        if i != self.throne {
            return false;
        }
        if victim == ATT {
            self.rules.throne_hostile_to_attackers
        } else {
            match self.rules.throne_hostile_to_defenders {
                ThroneHostility::Always => true,
                ThroneHostility::WhenEmpty => self.at(i) == EMPTY,
                ThroneHostility::Never => false,
            }
        }
    }

    /// Soldiers of `victim` (ATT or DEF) that the other side could capture with one move.
    fn hanging(&self, victim: u8, capturer_reach: &[bool; CELLS]) -> u32 {
        let anvil = |i: i32| -> bool {
            let c = self.at(i);
            let friendly = if victim == ATT { c == DEF || (c == KING && self.rules.king_armed) } else { c == ATT };
            friendly || self.hostile_to(i, victim)
        };
        let victims = if victim == ATT { &self.attackers } else { &self.defenders };
        let mut count = 0;
        for &v in victims {
            let v = i32::from(v);
            let hit = DIRS.iter().any(|&d| {
                let q = v + d;
                capturer_reach[q as usize] && self.at(q) == EMPTY && anvil(v - d)
            });
            count += u32::from(hit);
        }
        count
    }

    /// The evaluation from the defenders' point of view.
    ///
    /// One function over 100 lines on purpose: every term reads the same bitboards and
    /// weights, at every leaf of the search; split into helpers they would pass them around or
    /// compute them twice.
    fn for_defenders(&self) -> Score {
        let w = &self.frame.weights;
        let mut score = w.defender * self.defenders.len() as Score - w.attacker * self.attackers.len() as Score;
        let (reach, moves) = self.reach();
        let to_move = self.side;

        if let Some(k) = self.king {
            // Distance to the nearest corner.
            let (f, r) = (k % W - 1, k / W - 1);
            let last = self.size - 1;
            let dist = f.min(last - f) + r.min(last - r);
            score += w.king_near_corner * (last - dist);

            // Lines to the escape squares, now and after one king move. A fork is a square the
            // king can reach from which one more move wins whatever the attackers do: it sees two
            // escape squares, or one along a line no attacker can reach.
            let blockers = Some(&reach[0]);
            let (routes, unstoppable) = self.escape_lines_from(k, blockers);
            let mut pre_routes = 0;
            let mut fork_lines = 0;
            let mut mobility = 0;
            for d in DIRS {
                let mut i = k + d;
                let mut fork = false;
                while self.at(i) == EMPTY {
                    mobility += 1;
                    if !self.escape[i as usize] {
                        let (seen, unstoppable) = self.escape_lines_from(i, blockers);
                        pre_routes += i32::from(seen > 0);
                        fork |= seen >= 2 || unstoppable;
                    }
                    i += d;
                }
                fork_lines += i32::from(fork);
            }
            score += w.king_mobility * mobility + w.king_pre_route * pre_routes;
            match to_move {
                // With the defenders to move and a route open the search has already scored a win.
                Side::Defenders => {
                    if fork_lines > 0 {
                        score += w.king_fork_to_move;
                    }
                }
                Side::Attackers => {
                    score += match routes {
                        0 => 0,
                        1 if !unstoppable => w.king_one_route,
                        _ => w.king_two_routes,
                    };
                    // One move can close one of the king's lines, not two.
                    score += match fork_lines {
                        0 => 0,
                        1 => w.king_fork_waiting,
                        _ => w.king_two_forks,
                    };
                }
            }

            if routes == 0 && pre_routes == 0 && self.king_enclosed() {
                score -= w.king_enclosed;
            }

            // Attackers pressing the king.
            let capturable_here =
                !(self.rules.king_capture == KingCapture::FourSides && (f == 0 || r == 0 || f == last || r == last));
            if capturable_here {
                let pressed = DIRS.iter().filter(|&&d| self.at(k + d) == ATT).count();
                score -= w.king_pressed[pressed];
                if to_move == Side::Defenders && self.king_capture_threat() {
                    score -= w.king_capture_threat;
                }
            }
        }

        // Attackers sealing the corners.
        if self.rules.escape == Escape::Corner && self.size >= 7 {
            let last = self.size - 1;
            for (cf, cr, sf, sr) in [(0, 0, 1, 1), (last, 0, -1, 1), (0, last, 1, -1), (last, last, -1, -1)] {
                let sq = |df: i32, dr: i32| (cr + dr * sr + 1) * W + cf + df * sf + 1;
                let seal = [sq(2, 0), sq(1, 1), sq(0, 2)].iter().filter(|&&i| self.at(i) == ATT).count() as Score;
                score -= w.corner_seal * seal + if seal == 3 { w.corner_sealed } else { 0 };
                let next = [sq(1, 0), sq(0, 1)].iter().filter(|&&i| self.at(i) == ATT).count() as Score;
                score -= w.corner_next * next;
            }
        }

        // Pieces en prise.
        let hanging_attackers = self.hanging(ATT, &reach[1]) as Score;
        let hanging_defenders = self.hanging(DEF, &reach[0]) as Score;
        let (mine, theirs, my_value, their_value, sign) = match to_move {
            Side::Defenders => (hanging_defenders, hanging_attackers, w.defender, w.attacker, 1),
            Side::Attackers => (hanging_attackers, hanging_defenders, w.attacker, w.defender, -1),
        };
        let mut threats = 0;
        if theirs > 0 {
            threats += their_value * w.threat_to_move_pct / 100;
        }
        threats -= my_value * w.hanging_pct * mine.min(2) / 100;
        if mine >= 2 {
            threats -= my_value * w.hanging_two_pct / 100;
        }
        score += sign * (threats + w.tempo);

        // A little mobility: freedom for the defenders, a tight net for the attackers.
        score += w.mobility_per_4 * (moves[1] as Score - moves[0] as Score) / 4;
        score
    }
}

/// The static evaluation of a position from the side to move's point of view, in units of one
/// attacker soldier = 100. It does not look at the game's outcome: call it on ongoing positions.
#[must_use]
pub fn evaluate(pos: &Position) -> Score {
    evaluate_with(pos, &EvalWeights::default())
}

/// [`evaluate`] with other weights.
#[must_use]
pub fn evaluate_with(pos: &Position, weights: &EvalWeights) -> Score {
    Snapshot::new(&Frame::new(pos.variant(), weights.clone()), pos).evaluate()
}

impl Snapshot<'_> {
    /// [`evaluate`] on the snapshot.
    pub(crate) fn evaluate(&self) -> Score {
        let s = self.for_defenders();
        if self.side == Side::Defenders { s } else { -s }
    }

    /// For each square, how many enemy soldiers a piece of the side to move arriving there
    /// would capture by custodial capture (a cheap table for move ordering: shieldwalls are
    /// ignored, and so is the case where the anvil is the piece that moves).
    pub(crate) fn capture_squares(&self) -> CaptureSquares {
        let mut counts = [0u8; CELLS];
        let (victims, victim) = match self.side {
            Side::Attackers => (&self.defenders, DEF),
            Side::Defenders => (&self.attackers, ATT),
        };
        let anvil = |i: i32| -> bool {
            let c = self.at(i);
            let friendly = if victim == DEF { c == ATT } else { c == DEF || (c == KING && self.rules.king_armed) };
            friendly || self.hostile_to(i, victim)
        };
        for &v in victims {
            let v = i32::from(v);
            for d in DIRS {
                let q = v + d;
                if self.at(q) == EMPTY && anvil(v - d) {
                    counts[q as usize] += 1;
                }
            }
        }
        CaptureSquares { counts }
    }

    /// The moving piece is the king.
    pub(crate) fn is_king_move(&self, m: Move) -> bool {
        self.king_square == Some(m.from)
    }
}

/// Per square, the captures a piece of the side to move would make by arriving there.
pub(crate) struct CaptureSquares {
    counts: [u8; CELLS],
}

impl CaptureSquares {
    /// Soldiers captured by a move to `to`.
    #[inline]
    pub(crate) fn at(&self, to: Square) -> u32 {
        u32::from(self.counts[idx(to) as usize])
    }
}
