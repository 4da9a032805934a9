//! The danger hint of tafl sites: the king marked when three of his sides are closed (one
//! attacker move from capture), his open lines to corners, and the squares from which he would
//! see two corners (a fork the attackers cannot block twice). Shown by `tafl play` and `tafl serve`.

use crate::{Escape, Move, Piece, Position, Square};

/// Dangers around the king, as tafl sites show them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KingDanger {
    /// Three of his four sides are closed (attackers, or the empty throne): one attacker move
    /// can complete his capture.
    pub surrounded: bool,
    /// Corners the king has an open line to.
    pub sees_corners: Vec<Square>,
    /// Squares the king can reach in one move from which he would see two corners.
    pub forks: Vec<Square>,
}

/// True when every square strictly between `from` and `to` (on one line) is empty, `vacated`
/// counting as empty.
fn open_line(position: &Position, from: Square, to: Square, vacated: Option<Square>) -> bool {
    let Some((dir, dist)) = Move::new(from, to).direction_and_distance() else { return false };
    let (df, dr) = dir.step();
    (1..dist as i8).all(|k| {
        let sq = Square::new((from.file() as i8 + df * k) as u8, (from.rank() as i8 + dr * k) as u8);
        Some(sq) == vacated || position.piece_at(sq).is_none()
    })
}

fn corners(position: &Position) -> Vec<Square> {
    let last = position.size() - 1;
    [Square::new(0, 0), Square::new(last, 0), Square::new(0, last), Square::new(last, last)]
        .into_iter()
        .filter(|c| position.variant().is_corner(*c))
        .collect()
}

/// Corners seen from `from` along open lines (the target corner empty).
fn corners_seen(position: &Position, from: Square, vacated: Option<Square>) -> Vec<Square> {
    corners(position)
        .into_iter()
        .filter(|c| {
            *c != from && position.piece_at(*c).is_none() && (c.file() == from.file() || c.rank() == from.rank())
        })
        .filter(|c| open_line(position, from, *c, vacated))
        .collect()
}

/// The dangers around the king in `position`.
#[must_use]
pub fn king_danger(position: &Position) -> KingDanger {
    let Some(king) = position.king() else { return KingDanger::default() };
    let variant = position.variant();
    let size = position.size();
    let last = size - 1;
    let on_edge = king.file() == 0 || king.rank() == 0 || king.file() == last || king.rank() == last;
    let mut closed = 0;
    for (df, dr) in [(0i8, 1i8), (1, 0), (0, -1), (-1, 0)] {
        let (f, r) = (king.file() as i8 + df, king.rank() as i8 + dr);
        if f < 0 || r < 0 || f > last as i8 || r > last as i8 {
            continue;
        }
        let sq = Square::new(f as u8, r as u8);
        match position.piece_at(sq) {
            Some(Piece::Attacker) => closed += 1,
            None if variant.is_throne(sq) => closed += 1,
            _ => {}
        }
    }
    let mut danger = KingDanger { surrounded: !on_edge && closed >= 3, ..KingDanger::default() };
    if variant.rules().escape == Escape::Corner {
        danger.sees_corners = corners_seen(position, king, None);
        for m in position.legal_moves_from(king) {
            if corners_seen(position, m.to, Some(king)).len() >= 2 {
                danger.forks.push(m.to);
            }
        }
    }
    danger
}

/// Legal king moves (any side to move): helper on positions, without changing who moves.
trait KingMoves {
    fn legal_moves_from(&self, from: Square) -> Vec<Move>;
}

impl KingMoves for Position {
    fn legal_moves_from(&self, from: Square) -> Vec<Move> {
        let Some(piece) = self.piece_at(from) else { return Vec::new() };
        self.with_side_to_move(piece.side()).legal_moves().iter().copied().filter(|m| m.from == from).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn sees_corners_and_forks() {
        let v = Variant::copenhagen();
        // The king on c3 alone: open lines to a... no, c3 sees no corner; from c1 he sees a1 and k1.
        let p = Position::from_fen(v, "11/11/11/11/11/11/11/11/2k8/11/11 a").unwrap();
        let d = king_danger(&p);
        assert!(d.sees_corners.is_empty());
        assert!(d.forks.contains(&Square::new(2, 0)), "{d:?}");
        let p = Position::from_fen(v, "11/11/11/11/11/11/11/11/11/11/2k8 a").unwrap();
        assert_eq!(king_danger(&p).sees_corners.len(), 2);
    }

    #[test]
    fn three_closed_sides_are_danger() {
        let v = Variant::copenhagen();
        let p = Position::from_fen(v, "11/11/11/11/3a7/2aka6/11/11/11/11/11 d").unwrap();
        assert!(king_danger(&p).surrounded);
        let p = Position::from_fen(v, "11/11/11/11/11/2aka6/11/11/11/11/11 d").unwrap();
        assert!(!king_danger(&p).surrounded);
    }
}
