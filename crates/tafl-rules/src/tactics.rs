//! What either side could do with its next move, whoever is to move: the captures it could
//! make, where the king could run, and the squares from which he would threaten to escape.
//! The rules engine plays each move to find out (a pass for the side not to move), so the
//! answers are exactly the rules' (shieldwalls, hostile squares, the king's capture), not a
//! pattern's guess. The net reads them as feature planes (tafl-nn's encoding version 2):
//! facts a few residual blocks would otherwise have to learn to see.

use crate::{Position, Side, Square};

/// Threats one move ahead, for both sides. Squares may repeat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tactics {
    /// Squares the king can move to.
    pub king_reach: Vec<Square>,
    /// Per square of `king_reach` from which the king would have a move onto an escape square:
    /// the square and the number of escape squares he would then reach (two or more is a fork
    /// one attacker move cannot block).
    pub escape_threats: Vec<(Square, u8)>,
    /// Pieces of each side (`[attackers, defenders]`) that the other side captures with some
    /// move of its next turn; the king counts when a move would complete his capture.
    pub capturable: [Vec<Square>; 2],
    /// Squares a piece of each side (`[attackers, defenders]`) can move to and capture.
    pub capturing: [Vec<Square>; 2],
}

fn index(side: Side) -> usize {
    match side {
        Side::Attackers => 0,
        Side::Defenders => 1,
    }
}

/// The threats of `position` one move ahead, for both sides.
#[must_use]
pub fn tactics(position: &Position) -> Tactics {
    let mut tactics = Tactics::default();
    let king = position.king();
    for side in [Side::Attackers, Side::Defenders] {
        let mover = position.with_side_to_move(side);
        let (own, other) = (index(side), index(side.opponent()));
        for &m in &mover.legal_moves() {
            let mut after = mover;
            let played = after.play_unchecked(m);
            if !played.captured.is_empty() || played.king_captured {
                tactics.capturing[own].push(m.to);
                tactics.capturable[other].extend(played.captured.iter().copied());
                tactics.capturable[other].extend(king.filter(|_| played.king_captured));
            }
            if Some(m.from) == king {
                tactics.king_reach.push(m.to);
                let escapes = escapes_from(&after, m.to);
                if escapes > 0 {
                    tactics.escape_threats.push((m.to, escapes));
                }
            }
        }
    }
    tactics
}

/// Escape squares the king on `king` reaches in one move, were it the defenders' turn.
fn escapes_from(position: &Position, king: Square) -> u8 {
    let defenders = position.with_side_to_move(Side::Defenders);
    defenders.legal_moves().iter().filter(|m| m.from == king).fold(0u8, |n, &m| {
        let mut after = defenders;
        after.play_unchecked(m);
        n + u8::from(after.king_escaped())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_square;
    use crate::{Piece, Setup, Variant};

    fn position(variant: &str, side: Side, pieces: &[(&str, Piece)]) -> Position {
        let variant = Variant::preset(variant).expect("preset");
        let mut setup = Setup::empty(variant.size(), side);
        for &(sq, piece) in pieces {
            setup.set(parse_square(sq, variant.size()).expect("square"), Some(piece));
        }
        Position::from_setup(variant, &setup).expect("a legal setup")
    }

    fn sq(text: &str) -> Square {
        parse_square(text, 11).expect("square")
    }

    fn sorted(mut squares: Vec<Square>) -> Vec<Square> {
        squares.sort_by_key(|s| (s.rank(), s.file()));
        squares.dedup();
        squares
    }

    #[test]
    fn captures_are_found_for_the_side_not_to_move_too() {
        // An attacker on d4 with a defender on e4: an attacker arriving on f4 takes it, and a
        // defender arriving on c4 takes the attacker. Whoever is to move, both threats show.
        let pieces = [
            ("d4", Piece::Attacker),
            ("e4", Piece::Defender),
            ("f9", Piece::Attacker),
            ("c9", Piece::Defender),
            ("h10", Piece::King),
        ];
        for side in [Side::Attackers, Side::Defenders] {
            let t = tactics(&position("copenhagen", side, &pieces));
            assert_eq!(sorted(t.capturable[1].clone()), vec![sq("e4")], "{side:?} to move");
            assert_eq!(sorted(t.capturing[0].clone()), vec![sq("f4")], "{side:?} to move");
            assert_eq!(sorted(t.capturable[0].clone()), vec![sq("d4")], "{side:?} to move");
            assert_eq!(sorted(t.capturing[1].clone()), vec![sq("c4")], "{side:?} to move");
        }
    }

    #[test]
    fn a_near_miss_is_no_threat() {
        // The square beyond the defender is blocked by another defender: no attacker move takes e4.
        let pieces = [("d4", Piece::Attacker), ("e4", Piece::Defender), ("f4", Piece::Defender), ("h10", Piece::King)];
        let t = tactics(&position("copenhagen", Side::Attackers, &pieces));
        assert!(t.capturable[1].is_empty(), "{:?}", t.capturable[1]);
        assert!(t.capturing[0].is_empty(), "{:?}", t.capturing[0]);
    }

    #[test]
    fn the_king_sees_his_escapes_and_forks() {
        // The king on c3 of an all but empty board reaches every square of rank 3 and file c;
        // on the edge squares of those lines he would see two corners each (c1: a1 and k1).
        let t = tactics(&position("copenhagen", Side::Attackers, &[("c3", Piece::King), ("h8", Piece::Attacker)]));
        assert_eq!(t.king_reach.len(), 20, "{:?}", t.king_reach);
        let threat = |s: &str| t.escape_threats.iter().find(|&&(q, _)| q == sq(s)).map(|&(_, n)| n);
        assert_eq!(threat("c1"), Some(2), "on c1 he sees a1 and k1");
        assert_eq!(threat("a3"), Some(2), "on a3 he sees a1 and a11");
        assert_eq!(threat("c5"), None, "c5 is on no open line to a corner");
        assert!(t.capturable.iter().all(Vec::is_empty));
    }

    #[test]
    fn a_blocked_line_is_no_escape() {
        // A defender on b1 stands between c1 and a1: from c1 the king sees k1 only.
        let blocked = [("c3", Piece::King), ("b1", Piece::Defender), ("h8", Piece::Attacker)];
        let t = tactics(&position("copenhagen", Side::Defenders, &blocked));
        let threat = |t: &Tactics, s: &str| t.escape_threats.iter().find(|&&(q, _)| q == sq(s)).map(|&(_, n)| n);
        assert_eq!(threat(&t, "c1"), Some(1));
        // An attacker there is no block: the king arriving on c1 takes him against the corner.
        let taken = [("c3", Piece::King), ("b1", Piece::Attacker)];
        let t = tactics(&position("copenhagen", Side::Defenders, &taken));
        assert_eq!(threat(&t, "c1"), Some(2));
        assert_eq!(sorted(t.capturable[0].clone()), vec![sq("b1")]);
    }

    #[test]
    fn the_kings_capture_counts_as_capturable() {
        // The king on f8, attackers on e8, g8 and f9: an attacker arriving on f7 completes the
        // capture (four sides, away from the throne).
        let pieces = [
            ("f8", Piece::King),
            ("e8", Piece::Attacker),
            ("g8", Piece::Attacker),
            ("f9", Piece::Attacker),
            ("j7", Piece::Attacker),
            ("a5", Piece::Defender),
        ];
        let t = tactics(&position("copenhagen", Side::Defenders, &pieces));
        assert!(t.capturable[1].contains(&sq("f8")), "{:?}", t.capturable[1]);
        assert!(t.capturing[0].contains(&sq("f7")), "{:?}", t.capturing[0]);
    }
}
