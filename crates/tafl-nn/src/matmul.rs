//! The one matrix product of [`crate::packed`]: `c (+)= a · b` on row-major `f32` slices,
//! through the `gemm` crate (the kernels Burn's `flex` backend uses, AVX-512 chosen at run time).
//!
//! `gemm::gemm` takes raw pointers and strides, so it is an `unsafe fn`; this module is the
//! only place in the workspace that calls it, behind a safe function that checks every length
//! first. The safe alternative, Burn's own `matmul` on the flex backend, costs a copy of each
//! operand into a tensor and of the product out of it, and measured slower (see the README's
//! performance table: `tafl bench nn --conv stock,fast,fast-burn`).
#![allow(unsafe_code)]

/// How [`matmul`] may use threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Threads {
    /// On the calling thread only: the caller already runs one product per core.
    One,
    /// On rayon's current pool, as `gemm` sees fit for the size.
    Pool,
}

/// `c = a · b`, or `c += a · b` when `accumulate`, where `a` is `m × k`, `b` is `k × n` and
/// `c` is `m × n`, each row-major and contiguous.
///
/// # Panics
/// If a slice's length is not the product of its dimensions.
pub(crate) fn matmul(a: &[f32], b: &[f32], c: &mut [f32], dims: [usize; 3], accumulate: bool, threads: Threads) {
    matmul_t(a, b, c, dims, [false, false], accumulate, threads);
}

/// [`matmul`] with either factor stored transposed: with `transposed[0]`, `a` holds the
/// `k × m` matrix whose transpose is the left factor; with `transposed[1]`, `b` holds the
/// `n × k` matrix whose transpose is the right factor. `gemm` reads through strides, so no
/// transposed copy is made.
///
/// # Panics
/// If a slice's length is not the product of its dimensions.
pub(crate) fn matmul_t(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    [m, k, n]: [usize; 3],
    transposed: [bool; 2],
    accumulate: bool,
    threads: Threads,
) {
    assert_eq!(a.len(), m * k, "lhs is not {m} x {k}");
    assert_eq!(b.len(), k * n, "rhs is not {k} x {n}");
    assert_eq!(c.len(), m * n, "dst is not {m} x {n}");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            c.fill(0.0);
        }
        return;
    }
    let parallelism = match threads {
        Threads::One => gemm::Parallelism::None,
        Threads::Pool => gemm::Parallelism::Rayon(0),
    };
    let (m_, k_, n_) = (to_isize(m), to_isize(k), to_isize(n));
    // (row stride, column stride) of each factor as stored.
    let (lhs_rs, lhs_cs) = if transposed[0] { (1, m_) } else { (k_, 1) };
    let (rhs_rs, rhs_cs) = if transposed[1] { (1, k_) } else { (n_, 1) };
    // SAFETY: `gemm::gemm` reads the left factor's element (i, j), i < m, j < k, at
    // `a[i·lhs_rs + j·lhs_cs]`: `a[i·k + j]` as stored, or `a[j·m + i]` when transposed; the
    // largest index is m·k − 1 either way, inside `a` (length checked above). Likewise the
    // right factor's (j, l), j < k, l < n, at `b[j·n + l]` or `b[l·k + j]`, at most k·n − 1,
    // inside `b`; and it reads (when `read_dst`) and writes `c[i·n + l]`, inside `c` (length
    // m·n). The strides fit `isize` (checked by `to_isize`; a slice is never longer than
    // `isize::MAX` bytes anyway). `c` is a `&mut` borrow, so it aliases neither `a` nor `b`,
    // and no other thread touches it during the call; `gemm`'s own threads (with
    // `Parallelism::Rayon`) write disjoint blocks of it and have joined when it returns. All
    // values are plain `f32`: any bit pattern is valid.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,  // dst column stride
            n_, // dst row stride
            accumulate,
            a.as_ptr(),
            lhs_cs,
            lhs_rs,
            b.as_ptr(),
            rhs_cs,
            rhs_rs,
            1.0, // alpha: the factor of the old dst (read only when accumulating)
            1.0, // beta: the factor of the product
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// [`matmul`] through Burn's tensor `matmul` on `device` (the safe alternative, kept to be
/// measured against: `tafl bench nn --conv fast-burn`). Copies `a` and `b` into tensors and
/// the product back out.
pub(crate) fn matmul_burn(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    [m, k, n]: [usize; 3],
    accumulate: bool,
    device: &crate::Device,
) {
    use burn::tensor::{Tensor, TensorData};
    assert_eq!(a.len(), m * k, "lhs is not {m} x {k}");
    assert_eq!(b.len(), k * n, "rhs is not {k} x {n}");
    assert_eq!(c.len(), m * n, "dst is not {m} x {n}");
    let lhs = Tensor::<2>::from_data(TensorData::new(a.to_vec(), [m, k]), device);
    let rhs = Tensor::<2>::from_data(TensorData::new(b.to_vec(), [k, n]), device);
    let product = crate::model::read_back(lhs.matmul(rhs));
    if accumulate {
        c.iter_mut().zip(&product).for_each(|(c, p)| *c += p);
    } else {
        c.copy_from_slice(&product);
    }
}

fn to_isize(x: usize) -> isize {
    isize::try_from(x).unwrap_or_else(|_| unreachable!("a slice length fits isize"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f32], b: &[f32], [m, k, n]: [usize; 3]) -> Vec<f32> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..k {
                for l in 0..n {
                    c[i * n + l] += a[i * k + j] * b[j * n + l];
                }
            }
        }
        c
    }

    #[test]
    fn matches_the_naive_product() {
        for dims in [[1, 1, 1], [3, 5, 7], [64, 576, 242], [40, 32, 121], [2, 0, 3], [0, 4, 4]] {
            let [m, k, n] = dims;
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 / 13.0 - 0.5).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 / 11.0 - 0.5).collect();
            let expected = naive(&a, &b, dims);
            for threads in [Threads::One, Threads::Pool] {
                let mut c = vec![f32::NAN; m * n];
                matmul(&a, &b, &mut c, dims, false, threads);
                let mut twice = c.clone();
                matmul(&a, &b, &mut twice, dims, true, threads);
                for ((x, y), e) in c.iter().zip(&twice).zip(&expected) {
                    assert!((x - e).abs() < 1e-4, "{dims:?}: {x} vs {e}");
                    assert!((y - 2.0 * e).abs() < 2e-4, "{dims:?}: {y} vs 2 x {e}");
                }
            }
        }
    }

    fn transpose(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        (0..cols * rows).map(|i| x[(i % rows) * cols + i / rows]).collect()
    }

    #[test]
    fn transposed_factors_give_the_same_product() {
        for dims in [[1, 1, 1], [3, 5, 7], [48, 432, 300], [2, 0, 3]] {
            let [m, k, n] = dims;
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 / 13.0 - 0.5).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 / 11.0 - 0.5).collect();
            let expected = naive(&a, &b, dims);
            let (at, bt) = (transpose(&a, m, k), transpose(&b, k, n));
            for (lhs, rhs, flags) in [(&a, &bt, [false, true]), (&at, &b, [true, false]), (&at, &bt, [true, true])] {
                let mut c = vec![f32::NAN; m * n];
                matmul_t(lhs, rhs, &mut c, dims, flags, false, Threads::Pool);
                for (x, e) in c.iter().zip(&expected) {
                    assert!((x - e).abs() < 1e-4, "{dims:?} {flags:?}: {x} vs {e}");
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "rhs is not")]
    fn wrong_lengths_panic_before_any_product() {
        matmul(&[1.0; 6], &[1.0; 5], &mut [0.0; 4], [2, 3, 2], false, Threads::One);
    }
}
