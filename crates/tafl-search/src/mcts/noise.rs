//! Random numbers the search needs: Gumbel, Gamma and Dirichlet samples.
//!
//! Written out here (a few lines each) rather than pulling `rand_distr`, whose releases follow
//! `rand`'s and would pin the workspace's `rand` version.

use rand::Rng;

/// A standard Gumbel sample: `-ln(-ln U)`.
pub(crate) fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    // U in (0, 1): both logarithms stay finite.
    let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    (-(-u.ln()).ln()) as f32
}

/// A standard normal sample (Box–Muller).
fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Gamma(alpha, 1) sample (Marsaglia and Tsang 2000; alpha < 1 by boosting with U^(1/alpha)).
pub(crate) fn gamma<R: Rng + ?Sized>(rng: &mut R, alpha: f64) -> f64 {
    if alpha < 1.0 {
        let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
        return gamma(rng, alpha + 1.0) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A sample of the symmetric Dirichlet distribution with concentration `alpha` over `n` items.
pub(crate) fn dirichlet<R: Rng + ?Sized>(rng: &mut R, alpha: f32, n: usize) -> Vec<f32> {
    let mut xs: Vec<f64> = (0..n).map(|_| gamma(rng, f64::from(alpha.max(1e-3)))).collect();
    let sum: f64 = xs.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        xs.iter_mut().for_each(|x| *x /= sum);
    } else {
        // All samples underflowed (tiny alpha): the limit is a single item.
        xs.iter_mut().for_each(|x| *x = 0.0);
        if n > 0 {
            xs[rng.random_range(0..n)] = 1.0;
        }
    }
    xs.into_iter().map(|x| x as f32).collect()
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    #[test]
    fn gamma_has_the_right_mean() {
        let mut rng = StdRng::seed_from_u64(1);
        for alpha in [0.1, 0.3, 1.0, 2.5] {
            let n = 20_000;
            let mean = (0..n).map(|_| gamma(&mut rng, alpha)).sum::<f64>() / f64::from(n);
            assert!((mean - alpha).abs() < 0.05 * alpha.max(1.0), "alpha {alpha}: mean {mean}");
        }
    }

    #[test]
    fn dirichlet_sums_to_one() {
        let mut rng = StdRng::seed_from_u64(2);
        let d = dirichlet(&mut rng, 0.1, 100);
        assert!((d.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        assert!(d.iter().all(|&x| x >= 0.0));
    }

    #[test]
    fn gumbel_has_the_right_mean() {
        let mut rng = StdRng::seed_from_u64(3);
        let n = 20_000;
        let mean = (0..n).map(|_| f64::from(gumbel(&mut rng))).sum::<f64>() / f64::from(n);
        // The Euler–Mascheroni constant.
        assert!((mean - 0.5772).abs() < 0.03, "mean {mean}");
    }
}
