//! Pieces of the Gumbel root (Danihelka et al. 2022, "Policy improvement by planning with
//! Gumbel"): the sequential-halving visit schedule and the completed Q-values.

/// The visit count each simulation of sequential halving gives its action: simulation `i` visits
/// an action (among those still considered) that has exactly `sequence[i]` visits so far.
///
/// `considered` actions start; each of the `ceil(log2 considered)` phases gives every survivor
/// `max(1, visits / (phases * survivors))` visits, then halves the survivors (never below 2).
/// This is `get_sequence_of_considered_visits` of DeepMind's `mctx`: keeping no phase state
/// lets any number of simulations be in flight at once.
#[must_use]
pub(crate) fn considered_visits(considered: usize, visits: usize) -> Vec<u32> {
    if considered <= 1 {
        return (0..visits as u32).collect();
    }
    let phases = (considered as f64).log2().ceil() as usize;
    let mut sequence = Vec::with_capacity(visits);
    let mut counts = vec![0u32; considered];
    let mut survivors = considered;
    while sequence.len() < visits {
        let extra = (visits / (phases * survivors)).max(1);
        for _ in 0..extra {
            sequence.extend_from_slice(&counts[..survivors]);
            counts[..survivors].iter_mut().for_each(|c| *c += 1);
        }
        survivors = (survivors / 2).max(2);
    }
    sequence.truncate(visits);
    sequence
}

/// Completed Q-values of a node's children, from the node's side to move.
pub(crate) struct Completed {
    /// `q[i]` for edge `i`: the child's mean value when visited (or proven), else `v_mix`.
    pub q: Vec<f32>,
    /// The scale of `sigma`: `(c_visit + max_b N(b)) * c_scale`.
    pub scale: f32,
    /// The smallest completed Q among the moves not proven lost.
    pub low: f32,
    /// The spread of those Q-values (at least `MIN_SPREAD`).
    pub spread: f32,
}

/// The smallest spread the completed Q-values are rescaled by (mctx's epsilon), so that equal
/// values give equal, finite sigmas.
pub(crate) const MIN_SPREAD: f32 = 1e-6;

impl Completed {
    /// `sigma(q)`, with `q` rescaled to [0, 1] by the smallest and largest completed Q of the
    /// node's moves not proven lost, as mctx does. Without the rescale, a value head that rates
    /// every move of one side near -1 leaves the improved policy almost equal to the prior.
    pub fn sigma(&self, q: f32) -> f32 {
        self.scale * (q - self.low) / self.spread
    }
}

/// The value that completes the Q of unvisited children: the network value mixed with the
/// prior-weighted mean Q of the visited children, weighted by their visit count (the paper's
/// `v_mix`, eq. 33).
#[must_use]
pub(crate) fn mixed_value(raw_value: f32, priors: &[f32], q: &[Option<f32>], visits: &[u32]) -> f32 {
    let mut sum_n = 0.0f32;
    let mut sum_p = 0.0f32;
    let mut sum_pq = 0.0f32;
    for ((&p, q), &n) in priors.iter().zip(q).zip(visits) {
        if let Some(q) = *q
            && n > 0
        {
            sum_n += n as f32;
            sum_p += p.max(f32::MIN_POSITIVE);
            sum_pq += p.max(f32::MIN_POSITIVE) * q;
        }
    }
    if sum_n == 0.0 { raw_value } else { (raw_value + sum_n * sum_pq / sum_p) / (1.0 + sum_n) }
}

/// `softmax(x)` in place.
pub(crate) fn softmax(xs: &mut [f32]) {
    let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !max.is_finite() {
        let n = xs.len().max(1) as f32;
        xs.iter_mut().for_each(|x| *x = 1.0 / n);
        return;
    }
    let mut sum = 0.0;
    for x in xs.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    xs.iter_mut().for_each(|x| *x /= sum);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_schedule_matches_mctx() {
        // mctx: get_sequence_of_considered_visits(4, 16)
        assert_eq!(considered_visits(4, 16), vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
        assert_eq!(considered_visits(1, 3), vec![0, 1, 2]);
        assert_eq!(considered_visits(16, 8), vec![0; 8]);
        assert_eq!(considered_visits(2, 5), vec![0, 0, 1, 1, 2]);
    }

    #[test]
    fn mixed_value_weights_by_prior_among_visited() {
        let v = mixed_value(0.0, &[0.5, 0.25, 0.25], &[Some(1.0), Some(-1.0), None], &[1, 1, 0]);
        // (0 + 2 * (0.5 - 0.25) / 0.75) / 3
        assert!((v - 2.0 * (0.25 / 0.75) / 3.0).abs() < 1e-6);
    }
}
