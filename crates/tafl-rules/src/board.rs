//! The generic core: pieces as bit sets, move generation, making moves with their captures,
//! and the position-level win checks. `Position` wraps it for both bit widths.

use arrayvec::ArrayVec;

use crate::bitboard::Bits;
use crate::geometry::Geometry;
use crate::rules::{KingCapture, ThroneHostility};
use crate::square::{Move, Side};
use crate::zobrist::{PIECE_KEYS, SIDE_KEY};

/// Capacity of a move list. Every move ends on an empty square, and each empty square can be
/// reached from at most four pieces (the nearest one in each direction), so a position has at
/// most `4 * 15 * 15 = 900` legal moves.
pub const MAX_MOVES: usize = 900;

/// A fixed-capacity list of moves.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;

const ATTACKER: usize = 0;
const DEFENDER: usize = 1;
const KING: usize = 2;

/// Pieces, side to move and hash.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Board<B> {
    pub attackers: B,
    pub defenders: B,
    pub king: B,
    pub side: Side,
    pub hash: u64,
}

/// What a move did besides moving the piece.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Effects<B> {
    /// Soldiers removed (custodial and shieldwall captures).
    pub captured: B,
    /// The move completed the capture of the king.
    pub king_captured: bool,
}

impl<B: Bits> Board<B> {
    pub fn empty(side: Side) -> Board<B> {
        let hash = if side == Side::Defenders { SIDE_KEY } else { 0 };
        Board { attackers: B::ZERO, defenders: B::ZERO, king: B::ZERO, side, hash }
    }

    /// Gives the move to `side` (a pass when it is the other side's turn).
    pub fn set_side(&mut self, side: Side) {
        if self.side != side {
            self.side = side;
            self.hash ^= SIDE_KEY;
        }
    }

    /// Puts a piece (0 attacker, 1 defender, 2 king) on an empty square.
    pub fn put(&mut self, kind: usize, index: u32) {
        let b = B::bit(index);
        match kind {
            ATTACKER => self.attackers |= b,
            DEFENDER => self.defenders |= b,
            _ => self.king |= b,
        }
        self.hash ^= PIECE_KEYS[kind][index as usize];
    }

    #[inline(always)]
    pub fn occupied(&self) -> B {
        self.attackers | self.defenders | self.king
    }

    /// Defenders plus the king when he is armed: the pieces that capture with the defenders.
    #[inline(always)]
    fn armed_defenders(&self, g: &Geometry<B>) -> B {
        if g.rules.king_armed { self.defenders | self.king } else { self.defenders }
    }

    /// Squares that act as an anvil against defenders right now.
    #[inline(always)]
    fn hostile_to_defenders(&self, g: &Geometry<B>) -> B {
        g.corners
            | match g.rules.throne_hostile_to_defenders {
                ThroneHostility::Always => g.throne,
                ThroneHostility::WhenEmpty => g.throne & !self.king,
                ThroneHostility::Never => B::ZERO,
            }
    }

    // ----- move generation -------------------------------------------------------------------

    /// Soldiers that move now, squares they may slide through and squares they may stop on.
    #[inline(always)]
    fn soldier_lanes(&self, g: &Geometry<B>) -> (B, B, B) {
        let empty = g.all & !self.occupied();
        let pass = empty & !g.soldier_blocked;
        let soldiers = if self.side == Side::Attackers { self.attackers } else { self.defenders };
        (soldiers, pass, pass & !g.restricted)
    }

    /// Appends every legal move (ignoring whether the game is over) to `out`, grouped by
    /// direction and distance: all pieces slide together, one step per round.
    pub fn generate(&self, g: &Geometry<B>, out: &mut MoveList) {
        let (soldiers, pass, stop) = self.soldier_lanes(g);
        let empty = g.all & !self.occupied();
        for (pieces, pass, stop) in [(soldiers, pass, stop), (self.king_to_move(), empty, empty)] {
            for dir in 0..4 {
                let delta = g.delta(dir);
                let mut front = pieces;
                let mut dist = 0;
                loop {
                    front = g.shift(front, dir) & pass;
                    if front.is_empty() {
                        break;
                    }
                    dist += 1;
                    let mut stops = front & stop;
                    while let Some(to) = stops.pop() {
                        let from = (to as i32 - dist * delta) as u32;
                        out.push(Move::new(g.square[from as usize], g.square[to as usize]));
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn king_to_move(&self) -> B {
        if self.side == Side::Defenders { self.king } else { B::ZERO }
    }

    /// The number of legal moves, without listing them.
    pub fn count_moves(&self, g: &Geometry<B>) -> u32 {
        let (soldiers, pass, stop) = self.soldier_lanes(g);
        let empty = g.all & !self.occupied();
        let mut total = 0;
        for (pieces, pass, stop) in [(soldiers, pass, stop), (self.king_to_move(), empty, empty)] {
            for dir in 0..4 {
                let mut front = pieces;
                loop {
                    front = g.shift(front, dir) & pass;
                    if front.is_empty() {
                        break;
                    }
                    total += (front & stop).count();
                }
            }
        }
        total
    }

    /// True when the side to move has at least one legal move.
    pub fn has_moves(&self, g: &Geometry<B>) -> bool {
        let (soldiers, pass, stop) = self.soldier_lanes(g);
        let empty = g.all & !self.occupied();
        // A soldier next to an empty stoppable square, or a king next to any empty square,
        // can move; otherwise only passing over the throne is left, which count_moves handles.
        if !(g.neighbours(soldiers) & stop).is_empty() || !(g.neighbours(self.king_to_move()) & empty).is_empty() {
            return true;
        }
        !(g.neighbours(soldiers) & pass).is_empty() && self.count_moves(g) > 0
    }

    /// True when `m` is legal for the side to move (game end not considered).
    pub fn is_legal(&self, g: &Geometry<B>, from: u32, to: u32) -> bool {
        let fb = B::bit(from);
        let is_king = !(self.king_to_move() & fb).is_empty();
        let is_soldier = !(self.soldier_lanes(g).0 & fb).is_empty();
        if !is_king && !is_soldier {
            return false;
        }
        let Some((dir, dist)) = Move::new(g.square[from as usize], g.square[to as usize]).direction_and_distance()
        else {
            return false;
        };
        let occ = self.occupied();
        let dir = dir as usize;
        let mut at = from;
        for step in 1..=dist {
            let Some(next) = g.step(at, dir) else { return false };
            at = next;
            let b = B::bit(at);
            if !(occ & b).is_empty() || (is_soldier && !(g.soldier_blocked & b).is_empty()) {
                return false;
            }
            if step == dist && is_soldier && !(g.restricted & b).is_empty() {
                return false;
            }
        }
        true
    }

    // ----- making moves ----------------------------------------------------------------------

    /// Plays a move that must be legal; returns what it captured.
    #[inline]
    pub fn play(&mut self, g: &Geometry<B>, from: u32, to: u32) -> Effects<B> {
        let both = B::bit(from) | B::bit(to);
        let kind = if self.side == Side::Attackers {
            self.attackers ^= both;
            ATTACKER
        } else if self.king.has(from) {
            self.king ^= both;
            KING
        } else {
            self.defenders ^= both;
            DEFENDER
        };
        self.hash ^= PIECE_KEYS[kind][from as usize] ^ PIECE_KEYS[kind][to as usize] ^ SIDE_KEY;
        let mut captured = self.custodial_captures(g, to, kind);
        if g.rules.shieldwall && g.edge.has(to) && (kind != KING || g.rules.king_armed) {
            captured |= self.shieldwall_captures(g, to);
        }
        let victim = if kind == ATTACKER { DEFENDER } else { ATTACKER };
        if !captured.is_empty() {
            let mut c = captured;
            while let Some(i) = c.pop() {
                self.hash ^= PIECE_KEYS[victim][i as usize];
            }
            if victim == DEFENDER {
                self.defenders &= !captured;
            } else {
                self.attackers &= !captured;
            }
        }
        let king_captured = kind == ATTACKER && self.king_taken_by(g, to);
        self.side = self.side.opponent();
        Effects { captured, king_captured }
    }

    /// Soldiers trapped between the piece that just arrived on `to` and a friendly piece or
    /// hostile square beyond them.
    #[inline(always)]
    fn custodial_captures(&self, g: &Geometry<B>, to: u32, kind: usize) -> B {
        let (victims, anvils) = match kind {
            ATTACKER => (self.defenders, self.attackers | self.hostile_to_defenders(g)),
            KING if !g.rules.king_armed => return B::ZERO,
            _ => (self.attackers, self.armed_defenders(g) | g.hostile_to_attackers),
        };
        let mover = B::bit(to);
        let mut captured = B::ZERO;
        for dir in 0..4 {
            let next = g.shift(mover, dir) & victims;
            if !next.is_empty() && !(g.shift(next, dir) & anvils).is_empty() {
                captured |= next;
            }
        }
        captured
    }

    /// Rows of enemy pieces along the edge, each with a piece of the mover's side in front,
    /// bracketed at both ends: the mover on `to` at one end, a friendly piece or a corner at the
    /// other. The king in such a row survives; his soldiers do not.
    fn shieldwall_captures(&self, g: &Geometry<B>, to: u32) -> B {
        let (row_pieces, front, closers) = if self.side == Side::Attackers {
            (self.defenders | self.king, self.attackers, self.attackers | g.corners)
        } else {
            let armed = self.armed_defenders(g);
            (self.attackers, armed, armed | g.corners)
        };
        let sq = g.square[to as usize];
        let last = g.size - 1;
        // (direction along the edge, direction pointing inwards) for each edge `to` is on.
        let mut lanes: ArrayVec<(usize, usize), 4> = ArrayVec::new();
        if sq.rank() == 0 || sq.rank() == last {
            let inward = if sq.rank() == 0 { 0 } else { 2 };
            lanes.push((1, inward));
            lanes.push((3, inward));
        }
        if sq.file() == 0 || sq.file() == last {
            let inward = if sq.file() == 0 { 1 } else { 3 };
            lanes.push((0, inward));
            lanes.push((2, inward));
        }
        let mut captured = B::ZERO;
        for (along, inward) in lanes {
            let mut row = B::ZERO;
            let mut len = 0;
            let mut at = B::bit(to);
            loop {
                at = g.shift(at, along);
                if at.is_empty() {
                    break;
                }
                if (at & row_pieces).is_empty() {
                    if len >= 2 && !(at & closers).is_empty() {
                        captured |= row & !self.king;
                    }
                    break;
                }
                if (g.shift(at, inward) & front).is_empty() {
                    break;
                }
                row |= at;
                len += 1;
            }
        }
        captured
    }

    /// Whether the attacker that just arrived on `to` completed the capture of the king.
    fn king_taken_by(&self, g: &Geometry<B>, to: u32) -> bool {
        let mover = B::bit(to);
        if (g.neighbours(mover) & self.king).is_empty() {
            return false;
        }
        match g.rules.king_capture {
            KingCapture::Custodial => {
                let hostile = self.attackers | g.corners | (g.throne & !self.king);
                (0..4).any(|dir| {
                    let k = g.shift(mover, dir);
                    !(k & self.king).is_empty() && !(g.shift(k, dir) & hostile).is_empty()
                })
            }
            _ => self.king_surrounded(g),
        }
    }

    /// The king is enclosed as the four-sided capture modes require (ignoring who moved last).
    pub fn king_surrounded(&self, g: &Geometry<B>) -> bool {
        if self.king.is_empty() {
            return false;
        }
        let around = g.neighbours(self.king);
        match g.rules.king_capture {
            KingCapture::FourSides => {
                (self.king & g.edge).is_empty() && (around & !(self.attackers | g.throne)).is_empty()
            }
            KingCapture::FourSidesEdgeHostile => {
                !(around & self.attackers).is_empty() && (around & !(self.attackers | g.throne | g.corners)).is_empty()
            }
            KingCapture::Custodial => {
                let hostile = self.attackers | g.corners | (g.throne & !self.king);
                (0..2).any(|dir| {
                    let a = g.shift(self.king, dir) & hostile;
                    let b = g.shift(self.king, dir + 2) & hostile;
                    !a.is_empty() && !b.is_empty() && !((a | b) & self.attackers).is_empty()
                })
            }
        }
    }

    // ----- wins other than captures ----------------------------------------------------------

    /// The king stands on an escape square.
    #[inline]
    pub fn king_escaped(&self, g: &Geometry<B>) -> bool {
        !(self.king & g.escape).is_empty()
    }

    /// A straight king move onto an escape square, whoever is to move: the king's only way to
    /// win in one move besides an exit fort. The king stops only at pieces (he may cross the
    /// empty throne and land on a corner).
    pub fn king_escape_move(&self, g: &Geometry<B>) -> Option<(u32, u32)> {
        if self.king.is_empty() {
            return None;
        }
        let from = self.king.lowest();
        let occ = self.occupied();
        for dir in 0..4 {
            let mut at = from;
            while let Some(next) = g.step(at, dir) {
                if occ.has(next) {
                    break;
                }
                if g.escape.has(next) {
                    return Some((from, next));
                }
                at = next;
            }
        }
        None
    }

    /// The king stands on the edge, can move, and is walled in by defenders that can never be
    /// captured, with no attacker inside.
    ///
    /// The fort is the region of empty squares the king can reach (his own square included). Its
    /// rim must hold no attacker, and every rim defender must be one the attackers can never
    /// capture while the defenders stand still (see `walls_stand`).
    pub fn exit_fort(&self, g: &Geometry<B>) -> bool {
        if (self.king & g.edge).is_empty() {
            return false;
        }
        let empty = g.all & !self.occupied();
        let mut fort = self.king;
        let mut around;
        loop {
            around = g.neighbours(fort);
            // An attacker on the rim spoils the fort however far it would grow: stop here
            // rather than flood the rest of an open board.
            if !(around & self.attackers).is_empty() {
                return false;
            }
            let grown = fort | (around & empty);
            if grown == fort {
                break;
            }
            fort = grown;
        }
        if fort == self.king {
            return false; // the king cannot move
        }
        // The rim holds neither empty squares (they would be in the fort) nor attackers.
        let walls = around & !fort;
        self.walls_stand(g, fort, walls)
    }

    /// Whether the attackers can never capture any of `walls`, the rim of `fort`, while the
    /// defenders stand still.
    ///
    /// The defenders that can never be captured are the largest set in which no member can be
    /// taken by attackers that stand only where they can ever get to while the set stands:
    /// * *Reach*: the squares an attacker could ever occupy, flooded from the attackers through
    ///   squares a soldier may pass (no corner, no impassable throne), outside the fort and the
    ///   set. It is generous on purpose: attackers pass through each other and through the
    ///   defenders outside the set as if those were gone. An attacker can stand on reach minus
    ///   the restricted squares (he may cross the empty throne but not stop on it).
    /// * A capture needs, on one axis of the defender, the mover arriving on one neighbour and an
    ///   anvil on the other: a second attacker, or a square hostile to defenders (a corner, the
    ///   empty throne). With one attacker left only a hostile square can be the anvil, and with
    ///   none nothing can be taken. No attacker is ever captured while the defenders stand still
    ///   (the king, shuttling inside the fort, never touches one), so the count only matters as
    ///   it is now. A second attacker counts wherever he stands, even shut away for good.
    /// * So a member is lost when, on some axis, one neighbour is a square an attacker can stand
    ///   on and the other is hostile or, with two attackers or more, such a square too. A
    ///   neighbour that is neither guards that axis: off the board, in the fort unless hostile
    ///   (the king's square included: the king is never hostile to his own men, and when he
    ///   moves his square stays in the fort), a member, or an empty square outside reach (a
    ///   pocket closed off by members), which is as good as the edge.
    ///
    /// The set is found by striking out lost members and flooding again (reach only grows)
    /// until none is lost; a lost wall ends the search at once. While the set stands the
    /// attackers stay within reach and their number never grows, so by induction over the
    /// moves no member is ever taken by a custodial capture.
    ///
    /// Shieldwalls need no check of their own. A shieldwall takes a whole row of pieces along
    /// the edge, each with an attacker in front, bracketed by attackers or corners. Call a run
    /// of members along the edge *exposed* when each has a square an attacker can stand on in
    /// front and both squares beyond the run are such squares or corners. An exposed run touches
    /// nothing else: no fort square, no other member, no pocket. So no wall is in one: each
    /// touches the fort in front or along the edge, and the only fort square that could close a
    /// run is a corner, whose other neighbour is then in the fort too (the king, not on the
    /// corner, reaches it that way), so the wall's front, next to that neighbour, is in the fort
    /// or on the rim. And taking an exposed run changes neither where attackers can go nor any
    /// other member's guards. Any other member's row is never taken: along the edge from it over
    /// members, either one has in front a square no attacker can ever stand on, or the run ends
    /// on a square outside reach that is no corner. That square is an empty square of the fort
    /// or a pocket (empty for good: the row is not closed there), the king (never fronted by an
    /// attacker: his neighbours are the fort and the rim) or a defender that no attacker can
    /// reach (never fronted either).
    fn walls_stand(&self, g: &Geometry<B>, fort: B, walls: B) -> bool {
        // Most forts stand on structure alone: no flood needed. That set's guards are squares no
        // attacker can stand on and that are not hostile, so it lies inside the largest set.
        if (walls & !self.unbreakable_defenders(g, fort)).is_empty() {
            return true;
        }
        let hostile = self.hostile_to_defenders(g);
        let pairs = self.attackers.count() >= 2;
        let open = g.all & !g.soldier_blocked & !fort;
        let mut safe = self.defenders;
        let mut reach = self.attackers;
        loop {
            let pass = open & !safe;
            loop {
                let grown = reach | (g.neighbours(reach) & pass);
                if grown == reach {
                    break;
                }
                reach = grown;
            }
            let stand = reach & !g.restricted;
            let anvil = if pairs { stand | hostile } else { hostile };
            let lost = safe
                & ((g.east(stand) & g.west(anvil))
                    | (g.west(stand) & g.east(anvil))
                    | (g.north(stand) & g.south(anvil))
                    | (g.south(stand) & g.north(anvil)));
            if lost.is_empty() {
                return true;
            }
            if !(lost & walls).is_empty() {
                return false;
            }
            safe &= !lost;
        }
    }

    /// The structural part of `walls_stand`, without reach: the largest set of defenders in
    /// which every member, on each axis, has a neighbour off the board, in the fort (the king's
    /// square included) but not a square hostile to defenders, or another member. Members guard
    /// each other, so the set is found by striking out members that lack a guard until none
    /// does. Any square no attacker can stand on would do as a guard; these are the ones known
    /// without a flood.
    fn unbreakable_defenders(&self, g: &Geometry<B>, fort: B) -> B {
        let shelter = fort & !self.hostile_to_defenders(g);
        let mut safe = self.defenders;
        loop {
            let guards = shelter | safe;
            let across_files = g.first_or_last_file | g.east(guards) | g.west(guards);
            let across_ranks = g.first_or_last_rank | g.north(guards) | g.south(guards);
            let next = safe & across_files & across_ranks;
            if next == safe {
                return safe;
            }
            safe = next;
        }
    }

    /// The attackers enclose the king and every defender: none can reach the edge through
    /// squares free of attackers. A board with no defenders and no king is not encircled.
    pub fn encircled(&self, g: &Geometry<B>) -> bool {
        let mut reach = self.defenders | self.king;
        if reach.is_empty() || !(reach & g.edge).is_empty() {
            return false;
        }
        let free = g.all & !self.attackers;
        loop {
            let grown = (reach | g.neighbours(reach)) & free;
            if !(grown & g.edge).is_empty() {
                return false;
            }
            if grown == reach {
                return true;
            }
            reach = grown;
        }
    }
}
