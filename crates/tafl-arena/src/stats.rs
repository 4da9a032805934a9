//! Match statistics: Elo from a score, confidence intervals from game (trinomial) and game-pair
//! (pentanomial) results, likelihood of superiority, and the sequential probability ratio test.
//!
//! Scores are from one player's view (win 1, draw ½, loss 0). Elo uses the logistic model:
//! `score = 1 / (1 + 10^(-elo / 400))`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The two-sided 95% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Elo difference that gives an expected `score` in (0, 1); ±infinity at 0 and 1.
#[must_use]
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / score - 1.0).log10()
    }
}

/// The expected score of a player `elo` points stronger.
#[must_use]
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Wins, draws and losses from one player's view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    /// Games won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost.
    pub losses: u64,
}

impl Wdl {
    /// Results from counts.
    #[must_use]
    pub const fn new(wins: u64, draws: u64, losses: u64) -> Wdl {
        Wdl { wins, draws, losses }
    }
    /// Games played.
    #[must_use]
    pub const fn games(self) -> u64 {
        self.wins + self.draws + self.losses
    }
    /// Points: a win 1, a draw ½.
    #[must_use]
    pub fn points(self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }
    /// The mean score, ½ before any game.
    #[must_use]
    pub fn score(self) -> f64 {
        if self.games() == 0 { 0.5 } else { self.points() / self.games() as f64 }
    }
    /// The same results from the opponent's view.
    #[must_use]
    pub const fn flipped(self) -> Wdl {
        Wdl { wins: self.losses, draws: self.draws, losses: self.wins }
    }
    /// Adds one game's score (1, ½ or 0).
    pub fn add(&mut self, score: f64) {
        if score > 0.75 {
            self.wins += 1;
        } else if score < 0.25 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }
    /// Both results together.
    #[must_use]
    pub const fn plus(self, other: Wdl) -> Wdl {
        Wdl { wins: self.wins + other.wins, draws: self.draws + other.draws, losses: self.losses + other.losses }
    }
    fn distribution(self) -> Distribution {
        Distribution::new(&[(1.0, self.wins as f64), (0.5, self.draws as f64), (0.0, self.losses as f64)])
    }
}

impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "+{} ={} -{}", self.wins, self.draws, self.losses)
    }
}

/// Results of game pairs (the same opening, sides swapped) from one player's view: how many
/// pairs scored 0, ½, 1, 1½ and 2 points. Pairs cancel most of the opening's and the side's
/// bias, so their variance is the honest one for paired matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pentanomial(pub [u64; 5]);

impl Pentanomial {
    /// Adds a pair that scored `points` (0, ½, 1, 1½ or 2).
    pub fn add(&mut self, points: f64) {
        let i = (points * 2.0).round().clamp(0.0, 4.0) as usize;
        self.0[i] += 1;
    }
    /// Pairs played.
    #[must_use]
    pub fn pairs(&self) -> u64 {
        self.0.iter().sum()
    }
    fn distribution(&self) -> Distribution {
        let c = self.0.map(|x| x as f64);
        Distribution::new(&[(0.0, c[0]), (0.25, c[1]), (0.5, c[2]), (0.75, c[3]), (1.0, c[4])])
    }
    /// The distribution with [`PENTANOMIAL_PRIOR`] added to every bin, as fishtest does before
    /// an SPRT: a few pairs that all scored the same no longer have zero variance.
    fn regularised(&self) -> Distribution {
        let c = self.0.map(|x| x as f64 + PENTANOMIAL_PRIOR);
        Distribution::new(&[(0.0, c[0]), (0.25, c[1]), (0.5, c[2]), (0.75, c[3]), (1.0, c[4])])
    }
}

/// The count added to each of the five pair bins before an SPRT's LLR (fishtest's 1e-3).
pub const PENTANOMIAL_PRIOR: f64 = 1e-3;

/// The least per-game variance an SPRT's LLR assumes: results that all agree (every pair split
/// 1–1, every game drawn) would otherwise make the normal approximation certain after a few
/// games. A standard deviation of about 0.03 points per game.
pub const SPRT_MIN_VARIANCE: f64 = 1e-3;

/// Pairs a match needs before its SPRT may decide: the normal approximation behind the LLR
/// needs a sample, whatever the variance estimate says.
pub const SPRT_MIN_PAIRS: u64 = 10;

/// Scores in [0, 1] with counts (fractional once regularised): a sample mean and variance.
struct Distribution {
    n: f64,
    mean: f64,
    /// Variance of one sample.
    variance: f64,
}

impl Distribution {
    fn new(outcomes: &[(f64, f64)]) -> Distribution {
        let n: f64 = outcomes.iter().map(|o| o.1).sum();
        if n == 0.0 {
            return Distribution { n, mean: 0.5, variance: 0.0 };
        }
        let mean = outcomes.iter().map(|&(x, c)| x * c).sum::<f64>() / n;
        let variance = outcomes.iter().map(|&(x, c)| c * (x - mean).powi(2)).sum::<f64>() / n;
        Distribution { n, mean, variance }
    }

    fn estimate(&self) -> EloEstimate {
        // Every sample equal at an interior score (say five pairs of one win and one draw): the
        // sample variance is zero but the true one is not known. Fall back to the variance of a
        // single game with that expected score rather than report a zero-width interval.
        let variance = if self.variance == 0.0 && self.mean > 0.0 && self.mean < 1.0 {
            self.mean * (1.0 - self.mean)
        } else {
            self.variance
        };
        let stderr = if self.n == 0.0 { f64::INFINITY } else { (variance / self.n).sqrt() };
        let mut lower = (self.mean - Z95 * stderr).max(0.0);
        let mut upper = (self.mean + Z95 * stderr).min(1.0);
        // Every sample at an end (all won or all lost): the normal interval collapses to a
        // point at ±infinity. Use the exact binomial bound for n straight successes instead,
        // 0.025^(1/n) (two-sided 95%), so the other end stays finite and honest.
        if self.n > 0.0 && self.variance == 0.0 {
            let bound = 0.025f64.powf(1.0 / self.n);
            if self.mean >= 1.0 {
                lower = bound;
            } else if self.mean <= 0.0 {
                upper = 1.0 - bound;
            }
        }
        EloEstimate {
            score: self.mean,
            elo: elo_from_score(self.mean),
            lower: elo_from_score(lower),
            upper: elo_from_score(upper),
            samples: self.n as u64,
        }
    }

    /// The GSPRT log-likelihood ratio of H1 (`s1`) against H0 (`s0`) in the normal
    /// approximation used by fishtest and cutechess: `n (s1 - s0) (2 mean - s0 - s1) / (2 var)`.
    fn llr(&self, s0: f64, s1: f64) -> f64 {
        if self.n < 2.0 {
            return 0.0;
        }
        // All samples (nearly) equal: a floor keeps the ratio finite and modest.
        let variance = self.variance.max(SPRT_MIN_VARIANCE);
        self.n * (s1 - s0) * (2.0 * self.mean - s0 - s1) / (2.0 * variance)
    }
}

/// An Elo difference with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// The mean score per game.
    pub score: f64,
    /// The Elo difference it implies.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub lower: f64,
    /// Upper end of the 95% interval.
    pub upper: f64,
    /// Samples (games or pairs) it rests on.
    pub samples: u64,
}

impl EloEstimate {
    /// From game results: the trinomial (win/draw/loss) variance.
    #[must_use]
    pub fn trinomial(wdl: Wdl) -> EloEstimate {
        wdl.distribution().estimate()
    }
    /// From game pairs: the pentanomial variance.
    #[must_use]
    pub fn pentanomial(pairs: &Pentanomial) -> EloEstimate {
        pairs.distribution().estimate()
    }
    /// Half the width of the interval, for `elo ± margin` displays; infinite (never NaN) when
    /// an end is infinite, as after a 100% or 0% score.
    #[must_use]
    pub fn margin(&self) -> f64 {
        if self.lower.is_finite() && self.upper.is_finite() { (self.upper - self.lower) / 2.0 } else { f64::INFINITY }
    }
}

impl fmt::Display for EloEstimate {
    /// `+12.3 [+1.0, +23.4]`; after a 100% (0%) score the Elo is `+inf` (`-inf`), with the
    /// finite end of the interval and a note.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:+.1} [{:+.1}, {:+.1}]", self.elo, self.lower, self.upper)?;
        if self.elo == f64::INFINITY {
            write!(f, " (every point won: no finite estimate)")?;
        } else if self.elo == f64::NEG_INFINITY {
            write!(f, " (every point lost: no finite estimate)")?;
        }
        Ok(())
    }
}

/// Likelihood of superiority: the probability that the player is stronger, from its wins and
/// losses (draws carry no information): `½ (1 + erf((W - L) / √(2 (W + L))))`.
#[must_use]
pub fn likelihood_of_superiority(wdl: Wdl) -> f64 {
    let decisive = (wdl.wins + wdl.losses) as f64;
    if decisive == 0.0 {
        return 0.5;
    }
    0.5 * (1.0 + erf((wdl.wins as f64 - wdl.losses as f64) / (2.0 * decisive).sqrt()))
}

/// The error function, with a fractional error below 1.2e-7 (Numerical Recipes' Chebyshev
/// fit of erfc).
#[must_use]
pub fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 { 1.0 - erfc } else { erfc - 1.0 }
}

/// A sequential probability ratio test: H0 "the Elo difference is `elo0`" against H1 "it is
/// `elo1`", with error rates `alpha` (accepting H1 when H0 holds) and `beta`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sprt {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// False positive rate.
    pub alpha: f64,
    /// False negative rate.
    pub beta: f64,
}

/// What an SPRT says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SprtDecision {
    /// Not decided yet.
    Continue,
    /// H0 accepted: not `elo1` stronger.
    AcceptH0,
    /// H1 accepted: `elo1` stronger (or more).
    AcceptH1,
}

/// An SPRT's state: its log-likelihood ratio, the bounds and the decision.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtStatus {
    /// The log-likelihood ratio.
    pub llr: f64,
    /// Accept H0 at or below this.
    pub lower: f64,
    /// Accept H1 at or above this.
    pub upper: f64,
    /// The decision.
    pub decision: SprtDecision,
}

impl Sprt {
    /// `(lower, upper)`: `ln(beta / (1 - alpha))` and `ln((1 - beta) / alpha)`.
    #[must_use]
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }
    /// The log-likelihood ratio from game results.
    #[must_use]
    pub fn llr_trinomial(&self, wdl: Wdl) -> f64 {
        wdl.distribution().llr(score_from_elo(self.elo0), score_from_elo(self.elo1))
    }
    /// The log-likelihood ratio from game pairs (pair score halved, so per-game scores), with
    /// [`PENTANOMIAL_PRIOR`] in every bin and the variance at least [`SPRT_MIN_VARIANCE`].
    #[must_use]
    pub fn llr_pentanomial(&self, pairs: &Pentanomial) -> f64 {
        pairs.regularised().llr(score_from_elo(self.elo0), score_from_elo(self.elo1))
    }
    /// A match's status from its game pairs: the pentanomial LLR, and no decision before
    /// [`SPRT_MIN_PAIRS`] pairs.
    #[must_use]
    pub fn status_pentanomial(&self, pairs: &Pentanomial) -> SprtStatus {
        let mut status = self.status(self.llr_pentanomial(pairs));
        if pairs.pairs() < SPRT_MIN_PAIRS {
            status.decision = SprtDecision::Continue;
        }
        status
    }
    /// The status for a log-likelihood ratio.
    #[must_use]
    pub fn status(&self, llr: f64) -> SprtStatus {
        let (lower, upper) = self.bounds();
        let decision = if llr >= upper {
            SprtDecision::AcceptH1
        } else if llr <= lower {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        };
        SprtStatus { llr, lower, upper, decision }
    }
}

/// A bad `--sprt` text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad SPRT `{text}`: {why} (expected elo0=0,elo1=10,alpha=0.05,beta=0.05)")]
pub struct SprtParseError {
    /// The text.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

impl FromStr for Sprt {
    type Err = SprtParseError;

    /// Parses `elo0=0,elo1=10,alpha=0.05,beta=0.05`; `alpha` and `beta` default to 0.05.
    fn from_str(text: &str) -> Result<Sprt, SprtParseError> {
        let err = |why: String| SprtParseError { text: text.to_string(), why };
        let (mut elo0, mut elo1) = (None, None);
        let (mut alpha, mut beta) = (0.05, 0.05);
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| err(format!("`{part}` is not KEY=VALUE")))?;
            let value: f64 = value.trim().parse().map_err(|_| err(format!("`{key}` needs a number")))?;
            match key.trim() {
                "elo0" => elo0 = Some(value),
                "elo1" => elo1 = Some(value),
                "alpha" => alpha = value,
                "beta" => beta = value,
                k => return Err(err(format!("unknown key `{k}`"))),
            }
        }
        let elo0 = elo0.ok_or_else(|| err("`elo0` missing".into()))?;
        let elo1 = elo1.ok_or_else(|| err("`elo1` missing".into()))?;
        if elo1 <= elo0 {
            return Err(err("elo1 must exceed elo0".into()));
        }
        if !(0.0 < alpha && alpha < 0.5 && 0.0 < beta && beta < 0.5) {
            return Err(err("alpha and beta must lie in (0, 0.5)".into()));
        }
        Ok(Sprt { elo0, elo1, alpha, beta })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn elo_of_known_scores() {
        assert!(close(elo_from_score(0.75), 190.848_501_887_865, 1e-9));
        assert!(close(elo_from_score(0.5), 0.0, 1e-12));
        assert!(close(elo_from_score(0.25), -190.848_501_887_865, 1e-9));
        assert!(close(score_from_elo(190.848_501_887_865), 0.75, 1e-12));
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
    }

    #[test]
    fn trinomial_interval() {
        // 60 wins, 20 draws, 20 losses: score 0.7, variance 0.16, stderr 0.04.
        let e = EloEstimate::trinomial(Wdl::new(60, 20, 20));
        assert!(close(e.score, 0.7, 1e-12));
        assert!(close(e.elo, 147.190_714_117_837_76, 1e-9));
        assert!(close(e.lower, 86.225_015_200_304_23, 1e-6));
        assert!(close(e.upper, 218.251_777_641_074_8, 1e-6));
    }

    #[test]
    fn pentanomial_interval() {
        // Pairs scoring 0, ½, 1, 1½, 2: 5, 10, 20, 40, 25; mean 0.675, variance 0.075625.
        let e = EloEstimate::pentanomial(&Pentanomial([5, 10, 20, 40, 25]));
        assert!(close(e.score, 0.675, 1e-12));
        assert!(close(e.elo, 126.968_164_740_860_26, 1e-9));
        assert!(close(e.lower, 85.855_500_693_719_1, 1e-6));
        assert!(close(e.upper, 171.814_502_360_340_98, 1e-6));
    }

    #[test]
    fn los() {
        assert!(close(likelihood_of_superiority(Wdl::new(60, 20, 20)), 0.999_996_127_891_784_5, 1e-6));
        assert!(close(likelihood_of_superiority(Wdl::new(10, 5, 10)), 0.5, 1e-7));
        assert!(close(likelihood_of_superiority(Wdl::new(0, 5, 0)), 0.5, 1e-9));
        assert!(close(erf(0.5), 0.520_499_877_813_046_5, 2e-7));
        assert!(close(erf(-1.5), -0.966_105_146_475_310_7, 2e-7));
    }

    #[test]
    fn sprt_decides_synthetic_results() {
        let sprt: Sprt = "elo0=0,elo1=10,alpha=0.05,beta=0.05".parse().unwrap();
        let (lower, upper) = sprt.bounds();
        assert!(close(lower, -2.944_438_979_166_44, 1e-9) && close(upper, 2.944_438_979_166_44, 1e-9));
        // A 70% score: 180 wins, 60 draws, 60 losses.
        let llr = sprt.llr_trinomial(Wdl::new(180, 60, 60));
        assert!(close(llr, 5.201_139_935_787_3, 1e-6));
        assert_eq!(sprt.status(llr).decision, SprtDecision::AcceptH1);
        // A 40% score: 150 wins, 100 draws, 250 losses.
        let llr = sprt.llr_trinomial(Wdl::new(150, 100, 250));
        assert!(close(llr, -4.058_457_765_034_349, 1e-6));
        assert_eq!(sprt.status(llr).decision, SprtDecision::AcceptH0);
        // Too few games to say.
        assert_eq!(sprt.status(sprt.llr_trinomial(Wdl::new(60, 20, 20))).decision, SprtDecision::Continue);
        // Pairs: a strong player is accepted, a weak one rejected.
        assert_eq!(
            sprt.status(sprt.llr_pentanomial(&Pentanomial([2, 10, 30, 60, 48]))).decision,
            SprtDecision::AcceptH1
        );
        assert_eq!(
            sprt.status(sprt.llr_pentanomial(&Pentanomial([60, 80, 60, 30, 10]))).decision,
            SprtDecision::AcceptH0
        );
    }

    #[test]
    fn identical_pairs_do_not_give_a_zero_width_interval() {
        let e = EloEstimate::pentanomial(&Pentanomial([0, 0, 0, 5, 0]));
        assert!((e.elo - elo_from_score(0.75)).abs() < 1e-9);
        assert!(e.lower < e.elo - 50.0 && e.upper > e.elo + 50.0, "{e}");
    }

    #[test]
    fn sprt_is_not_certain_after_a_few_identical_pairs() {
        let sprt: Sprt = "elo0=0,elo1=10,alpha=0.05,beta=0.05".parse().unwrap();
        // Three pairs, each split 1–1: zero sample variance, but six games decide nothing.
        let pairs = Pentanomial([0, 0, 3, 0, 0]);
        let llr = sprt.llr_pentanomial(&pairs);
        assert!(llr.is_finite() && llr > sprt.bounds().0, "{llr}");
        assert_eq!(sprt.status(llr).decision, SprtDecision::Continue);
        assert_eq!(sprt.status_pentanomial(&pairs).decision, SprtDecision::Continue);
        // Nor do nine pairs that all scored 2, with a lopsided test: below the minimum.
        let lopsided: Sprt = "elo0=0,elo1=50".parse().unwrap();
        let sweep = Pentanomial([0, 0, 0, 0, SPRT_MIN_PAIRS - 1]);
        assert_eq!(lopsided.status(lopsided.llr_pentanomial(&sweep)).decision, SprtDecision::AcceptH1);
        assert_eq!(lopsided.status_pentanomial(&sweep).decision, SprtDecision::Continue);
        // From the minimum on it may decide.
        let sweep = Pentanomial([0, 0, 0, 0, SPRT_MIN_PAIRS]);
        assert_eq!(lopsided.status_pentanomial(&sweep).decision, SprtDecision::AcceptH1);
        // Many identical split pairs do, in the end, accept H0.
        let many = Pentanomial([0, 0, 200, 0, 0]);
        assert_eq!(sprt.status_pentanomial(&many).decision, SprtDecision::AcceptH0);
        // The real pentanomial tests are unchanged by the prior.
        assert_eq!(sprt.status_pentanomial(&Pentanomial([2, 10, 30, 60, 48])).decision, SprtDecision::AcceptH1);
        assert_eq!(sprt.status_pentanomial(&Pentanomial([60, 80, 60, 30, 10])).decision, SprtDecision::AcceptH0);
    }

    #[test]
    fn a_clean_sweep_has_an_infinite_elo_and_a_finite_lower_bound() {
        let e = EloEstimate::trinomial(Wdl::new(10, 0, 0));
        assert_eq!(e.elo, f64::INFINITY);
        assert!(e.lower.is_finite() && e.lower > 0.0, "{}", e.lower);
        assert!(close(e.lower, elo_from_score(0.025f64.powf(0.1)), 1e-9));
        assert_eq!(e.margin(), f64::INFINITY);
        let text = e.to_string();
        assert!(text.starts_with("+inf [+") && text.contains("every point won"), "{text}");
        let e = EloEstimate::pentanomial(&Pentanomial([10, 0, 0, 0, 0]));
        assert_eq!(e.elo, f64::NEG_INFINITY);
        assert!(e.upper.is_finite() && e.upper < 0.0);
        assert!(e.to_string().starts_with("-inf [-inf, -"), "{e}");
        assert!(!EloEstimate::trinomial(Wdl::new(5, 3, 2)).to_string().contains("no finite"));
    }

    #[test]
    fn sprt_parsing_names_the_problem() {
        let s: Sprt = "elo0=0,elo1=5".parse().unwrap();
        assert_eq!((s.alpha, s.beta), (0.05, 0.05));
        let e = "elo0=0,elo2=5".parse::<Sprt>().unwrap_err();
        assert!(e.to_string().contains("elo2"));
        assert!("elo0=5,elo1=0".parse::<Sprt>().is_err());
    }
}
