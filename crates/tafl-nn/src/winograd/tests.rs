use super::*;

/// Small pseudo-random values in [−1, 1).
fn values(len: usize, seed: usize) -> Vec<f32> {
    (0..len).map(|i| ((i * 7919 + seed * 104_729) % 2001) as f32 / 1000.0 - 1.0).collect()
}

#[test]
fn winograd_one_dimension_is_a_correlation() {
    // Aᵀ [(G g) ⊙ (Bᵀ d)] = the 4 outputs of a 3-tap correlation over 6 inputs.
    for seed in 0..20 {
        let d: [f32; WINDOW] = values(WINDOW, seed).try_into().expect("6 values");
        let g: [f32; 3] = values(3, seed + 100).try_into().expect("3 values");
        let u = kernel_1d(g.map(f64::from)).map(|v| v as f32);
        let v = input_1d(d);
        let y = output_1d(from_fn(|k| u[k] * v[k]));
        for (i, y) in y.into_iter().enumerate() {
            let direct: f32 = (0..3).map(|t| d[i + t] * g[t]).sum();
            assert!((y - direct).abs() < 1e-5, "seed {seed}, output {i}: {y} vs {direct}");
        }
    }
}

/// The direct 'same' 3x3 convolution in `f64`: `x` is `[in][position · square]`.
fn direct(
    weight: &[f32],
    bias: &[f32],
    x: &[f32],
    [channels_out, channels_in, size, positions]: [usize; 4],
) -> Vec<f64> {
    let area = size * size;
    let n = positions * area;
    let mut out = vec![0.0; channels_out * n];
    for o in 0..channels_out {
        for p in 0..positions {
            for (r, f) in (0..size).flat_map(|r| (0..size).map(move |f| (r, f))) {
                let mut sum = f64::from(bias[o]);
                for i in 0..channels_in {
                    for (ky, kx) in (0..3).flat_map(|y| (0..3).map(move |x| (y, x))) {
                        let (rr, ff) = ((r + ky).checked_sub(1), (f + kx).checked_sub(1));
                        let (Some(rr), Some(ff)) = (rr, ff) else { continue };
                        if rr < size && ff < size {
                            let w = weight[((o * channels_in + i) * 3 + ky) * 3 + kx];
                            sum += f64::from(w) * f64::from(x[i * n + p * area + rr * size + ff]);
                        }
                    }
                }
                out[o * n + p * area + r * size + f] = sum;
            }
        }
    }
    out
}

#[test]
fn winograd_conv_equals_the_direct_conv_on_every_board_size() {
    // 7x7 (one tile short of 8), 9x9 (three tiles, mostly padding), 11x11, 13x13; a lane
    // run that fills a vector and one that does not; both ways of multiplying.
    for (size, positions) in [(7, 3), (9, 1), (11, 17), (13, 2), (4, 1)] {
        let (channels_out, channels_in) = (5, 3);
        let weight = values(channels_out * channels_in * 9, size);
        let bias = values(channels_out, size + 1);
        let x = values(channels_in * positions * size * size, size + 2);
        let conv = WinogradConv::new(&weight, &bias, channels_out, channels_in);
        let expected = direct(&weight, &bias, &x, [channels_out, channels_in, size, positions]);
        // Rounding grows with the terms summed, not with their (cancelling) sum: measure
        // the error against the largest output.
        let scale = expected.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
        let x = Bordered::from_columns(&x, channels_in, Tiling::new(size, positions));
        for threads in [Threads::One, Threads::Pool] {
            let got = conv.apply(&x, None, false, threads, &mut Scratch::default()).to_columns();
            assert_eq!(got.len(), expected.len());
            let worst = got.iter().zip(&expected).map(|(g, e)| (f64::from(*g) - e).abs()).fold(0.0, f64::max);
            assert!(worst <= 5e-6 * scale, "{size}x{size}: max error {worst} against outputs up to {scale}");
        }
    }
}

/// The direct weight gradient of the 'same' 3x3 convolution in `f64`, `[out][in][3][3]`:
/// `x` is `[in][position · square]`, `grad` is `[out][position · square]`.
fn direct_weight_grad(x: &[f32], grad: &[f32], [channels_out, channels_in, size, positions]: [usize; 4]) -> Vec<f64> {
    let (area, n) = (size * size, positions * size * size);
    let mut out = vec![0.0; channels_out * channels_in * 9];
    for (o, i, ky, kx) in
        (0..channels_out).flat_map(|o| (0..channels_in).flat_map(move |i| (0..9).map(move |t| (o, i, t / 3, t % 3))))
    {
        let mut sum = 0.0;
        for (p, r, f) in (0..positions).flat_map(|p| (0..area).map(move |s| (p, s / size, s % size))) {
            let (Some(rr), Some(ff)) = ((r + ky).checked_sub(1), (f + kx).checked_sub(1)) else { continue };
            if rr < size && ff < size {
                let g = f64::from(grad[o * n + p * area + r * size + f]);
                sum += g * f64::from(x[i * n + p * area + rr * size + ff]);
            }
        }
        out[((o * channels_in + i) * 3 + ky) * 3 + kx] = sum;
    }
    out
}

#[test]
fn winograd_weight_gradient_equals_the_direct_one_on_every_board_size() {
    for (size, positions) in [(7, 3), (9, 1), (11, 17), (13, 2), (4, 1), (11, 0)] {
        let (channels_out, channels_in) = (4, 3);
        let tiling = Tiling::new(size, positions);
        let x = values(channels_in * positions * size * size, size + 5);
        let grad = values(channels_out * positions * size * size, size + 6);
        let expected = direct_weight_grad(&x, &grad, [channels_out, channels_in, size, positions]);
        let points = point_grads(
            &Bordered::from_columns(&x, channels_in, tiling),
            &Bordered::from_columns(&grad, channels_out, tiling),
        );
        let got = kernel_grads(&points, channels_out, channels_in);
        assert_eq!(got.len(), expected.len());
        // Each gradient sums up to 17 boards of products: the error is measured against the
        // largest, as for the forward pass.
        let scale = expected.iter().fold(1.0_f64, |m, e| m.max(e.abs()));
        let worst = got.iter().zip(&expected).map(|(g, e)| (f64::from(*g) - e).abs()).fold(0.0, f64::max);
        assert!(worst <= 5e-6 * scale, "{size}x{size}, {positions} positions: max error {worst} against {scale}");
    }
}

#[test]
fn winograd_adds_the_residual_before_the_relu() {
    let (size, positions, channels) = (5, 2, 2);
    let n = positions * size * size;
    let weight = values(channels * channels * 9, 1);
    let bias = values(channels, 2);
    let x = values(channels * n, 3);
    let skip = values(channels * n, 4);
    let conv = WinogradConv::new(&weight, &bias, channels, channels);
    let tiling = Tiling::new(size, positions);
    let (x, bordered_skip) =
        (Bordered::from_columns(&x, channels, tiling), Bordered::from_columns(&skip, channels, tiling));
    let plain = conv.apply(&x, None, false, Threads::One, &mut Scratch::default()).to_columns();
    let fused = conv.apply(&x, Some(&bordered_skip), true, Threads::One, &mut Scratch::default()).to_columns();
    for ((p, s), f) in plain.iter().zip(&skip).zip(&fused) {
        assert!((f - (p + s).max(0.0)).abs() < 1e-6, "{f} vs relu({p} + {s})");
    }
}

#[test]
fn winograd_takes_no_positions() {
    let conv = WinogradConv::new(&values(2 * 3 * 9, 0), &[0.5, -0.5], 2, 3);
    let x = Bordered::from_columns(&[], 3, Tiling::new(11, 0));
    let out = conv.apply(&x, None, true, Threads::One, &mut Scratch::default());
    assert!(out.to_columns().is_empty() && out.global_pool().is_empty());
}

#[test]
fn planes_round_trip_through_the_bordered_layout() {
    let tiling = Tiling::new(7, 3);
    let planes = values(3 * 5 * 49, 4);
    let mut back = vec![f32::NAN; planes.len()];
    Bordered::from_planes(&planes, 5, tiling).write_planes(&mut back);
    assert_eq!(back, planes);
}

#[test]
fn winograd_bordered_boards_keep_their_squares_and_a_zero_border() {
    // 3 positions (a lane run short of a vector) of 2 channels on 5x5 (bordered: 10x10).
    let (size, positions, channels) = (5, 3, 2);
    let (tiling, area) = (Tiling::new(size, positions), size * size);
    let x = values(channels * positions * area, 7);
    let mut bordered = Bordered::from_columns(&x, channels, tiling);
    assert_eq!(bordered.to_columns(), x);
    // [position][plane][square] is [channel][position · square] with the loops swapped.
    let planes: Vec<f32> = (0..positions)
        .flat_map(|p| (0..channels).flat_map(move |c| (0..area).map(move |s| (c, p, s))))
        .map(|(c, p, s)| x[(c * positions + p) * area + s])
        .collect();
    assert_eq!(Bordered::from_planes(&planes, channels, tiling).values, bordered.values);
    // Pooling: mean and max of each board.
    let pooled = bordered.global_pool();
    for (c, p) in (0..channels).flat_map(|c| (0..positions).map(move |p| (c, p))) {
        let board = &x[(c * positions + p) * area..][..area];
        let mean = board.iter().sum::<f32>() / area as f32;
        let max = board.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert!((pooled[p * 2 * channels + c] - mean).abs() < 1e-6);
        assert_eq!(pooled[p * 2 * channels + channels + c], max);
    }
    // A bias per position and channel lands on the board's squares only.
    let bias: Vec<f32> = (0..positions * channels).map(|i| i as f32 + 1.0).collect();
    bordered.add_position_bias(&bias);
    let shifted = bordered.to_columns();
    for (i, (after, before)) in shifted.iter().zip(&x).enumerate() {
        let (c, p) = (i / (positions * area), i / area % positions);
        assert!((after - before - bias[p * channels + c]).abs() < 1e-6);
    }
    let on_board: Vec<usize> = tiling.board_squares().collect();
    for plane in bordered.planes() {
        for (square, lanes) in plane.chunks_exact(positions).enumerate() {
            assert!(on_board.contains(&square) || lanes.iter().all(|v| *v == 0.0), "square {square} of the border");
        }
    }
}
