//! Joint ratings for a tournament: a Bradley–Terry model fitted by minorization–maximization
//! (Hunter 2004), the method BayesElo uses, with draws counted as half a win for each side and
//! a prior of virtual draws between players who met, so that a player who won (or lost) every
//! game still gets a finite rating. Ratings are Elo with mean 0. Intervals come from the
//! inverse of the Fisher information (the pseudo-inverse of the weighted graph Laplacian).
//!
//! The game is asymmetric but every pairing plays both sides equally often (paired games), so
//! no side advantage is fitted.

use serde::{Deserialize, Serialize};

use crate::stats::{Wdl, Z95};

/// Elo per natural-log unit of strength.
const ELO_PER_NEPER: f64 = 400.0 / std::f64::consts::LN_10;

/// Results between two players, from the first one's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meeting {
    /// The first player's index.
    pub a: usize,
    /// The second player's index.
    pub b: usize,
    /// `a`'s wins, draws and losses against `b`.
    pub wdl: Wdl,
}

/// A fitted rating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// Elo, relative to the field's mean of 0.
    pub elo: f64,
    /// Half the width of the 95% interval (NaN when the player is not connected to the rest).
    pub ci95: f64,
}

/// Fits ratings for `players` players. `prior_draws` virtual draws are added to every pair
/// that met (1 is a good default; 0 gives the plain maximum-likelihood fit).
#[must_use]
pub fn bradley_terry(players: usize, meetings: &[Meeting], prior_draws: f64) -> Vec<Rating> {
    // games[i][j]: games between i and j; wins[i]: points of i (draws count ½).
    let mut games = vec![vec![0.0; players]; players];
    let mut wins = vec![0.0; players];
    for m in meetings {
        if m.a == m.b || m.a >= players || m.b >= players {
            continue;
        }
        let g = m.wdl.games() as f64;
        if g == 0.0 {
            continue;
        }
        games[m.a][m.b] += g;
        games[m.b][m.a] += g;
        wins[m.a] += m.wdl.points();
        wins[m.b] += m.wdl.flipped().points();
    }
    for (row, w) in games.iter_mut().zip(&mut wins) {
        for g in row.iter_mut().filter(|g| **g > 0.0) {
            *g += prior_draws;
            *w += prior_draws / 2.0;
        }
    }
    let mut gamma = vec![1.0; players];
    for _ in 0..10_000 {
        let mut change: f64 = 0.0;
        for i in 0..players {
            let denominator: f64 =
                (0..players).filter(|&j| games[i][j] > 0.0).map(|j| games[i][j] / (gamma[i] + gamma[j])).sum();
            if denominator == 0.0 || wins[i] == 0.0 {
                continue;
            }
            let new = wins[i] / denominator;
            change = change.max((new / gamma[i]).ln().abs());
            gamma[i] = new;
        }
        // Fix the scale: geometric mean 1.
        let mean_log = gamma.iter().map(|g| g.ln()).sum::<f64>() / players.max(1) as f64;
        for g in &mut gamma {
            *g /= mean_log.exp();
        }
        if change < 1e-12 {
            break;
        }
    }
    let theta: Vec<f64> = gamma.iter().map(|g| g.ln()).collect();
    let covariance = laplacian_pseudo_inverse(players, |i, j| {
        let p = 1.0 / (1.0 + (theta[j] - theta[i]).exp());
        games[i][j] * p * (1.0 - p)
    });
    (0..players)
        .map(|i| Rating {
            elo: theta[i] * ELO_PER_NEPER,
            ci95: covariance.as_ref().map_or(f64::NAN, |c| Z95 * c[i][i].max(0.0).sqrt() * ELO_PER_NEPER),
        })
        .collect()
}

/// The pseudo-inverse of the Laplacian of a graph with edge weights `w(i, j)`, as
/// `(L + J/n)^-1 - J/n`; `None` when the graph is not connected.
#[allow(clippy::needless_range_loop, reason = "matrix code reads best with indices")]
fn laplacian_pseudo_inverse(n: usize, w: impl Fn(usize, usize) -> f64) -> Option<Vec<Vec<f64>>> {
    let k = 1.0 / n as f64;
    let mut m = vec![vec![k; n]; n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                let wij = w(i, j);
                m[i][j] -= wij;
                m[i][i] += wij;
            }
        }
    }
    let mut inverse = invert(m)?;
    for row in &mut inverse {
        for x in row.iter_mut() {
            *x -= k;
        }
    }
    Some(inverse)
}

/// Gauss–Jordan inversion with partial pivoting; `None` when singular.
fn invert(mut a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut inv: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let p = a[col][col];
        for j in 0..n {
            a[col][j] /= p;
            inv[col][j] /= p;
        }
        for row in 0..n {
            if row != col {
                let f = a[row][col];
                if f != 0.0 {
                    for j in 0..n {
                        a[row][j] -= f * a[col][j];
                        inv[row][j] -= f * inv[col][j];
                    }
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::elo_from_score;

    #[test]
    fn recovers_the_order_of_three_players() {
        // Player 2 beats 1 beats 0, each time about 70/30.
        let meetings = [
            Meeting { a: 1, b: 0, wdl: Wdl::new(65, 10, 25) },
            Meeting { a: 2, b: 1, wdl: Wdl::new(64, 12, 24) },
            Meeting { a: 2, b: 0, wdl: Wdl::new(80, 10, 10) },
        ];
        let r = bradley_terry(3, &meetings, 1.0);
        assert!(r[2].elo > r[1].elo && r[1].elo > r[0].elo, "{r:?}");
        assert!((r.iter().map(|x| x.elo).sum::<f64>()).abs() < 1e-6);
        for x in &r {
            assert!(x.ci95 > 10.0 && x.ci95 < 150.0, "{x:?}");
        }
    }

    #[test]
    fn two_players_match_the_score_formula() {
        // Without a prior, two players' difference is the Elo of the score.
        let r = bradley_terry(2, &[Meeting { a: 0, b: 1, wdl: Wdl::new(70, 10, 20) }], 0.0);
        let diff = r[0].elo - r[1].elo;
        assert!((diff - elo_from_score(0.75)).abs() < 1e-6, "{diff}");
    }

    #[test]
    fn recovers_known_ratings_from_games_that_fit_them() {
        // Every pair's score is the model's expected score for ratings 0, +100 and +250 (to
        // 1 in 100 000 games): the plain fit must give those ratings back, centred on zero.
        let truth = [0.0, 100.0, 250.0];
        let n = 100_000u64;
        let mut meetings = Vec::new();
        for a in 0..3 {
            for b in a + 1..3 {
                let expected: f64 = 1.0 / (1.0 + 10f64.powf((truth[b] - truth[a]) / 400.0));
                let wins = (expected * n as f64).round() as u64;
                meetings.push(Meeting { a, b, wdl: Wdl::new(wins, 0, n - wins) });
            }
        }
        let r = bradley_terry(3, &meetings, 0.0);
        let mean = truth.iter().sum::<f64>() / 3.0;
        for (i, x) in r.iter().enumerate() {
            assert!((x.elo - (truth[i] - mean)).abs() < 0.5, "player {i}: {r:?}");
        }
        // 100 000 games a pair pin each rating to within a few Elo.
        assert!(r.iter().all(|x| x.ci95 > 0.5 && x.ci95 < 5.0), "{r:?}");
    }

    #[test]
    fn a_perfect_score_stays_finite() {
        let r = bradley_terry(2, &[Meeting { a: 0, b: 1, wdl: Wdl::new(10, 0, 0) }], 1.0);
        assert!(r[0].elo.is_finite() && r[0].elo > r[1].elo);
    }
}
