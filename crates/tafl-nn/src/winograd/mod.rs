//! Winograd's minimal filtering F(4x4, 3x3) for the 3x3 convolutions of [`crate::packed`]
//! ([`crate::packed::InferencePath::Winograd`]).
//!
//! A 3x3 convolution computes each output square from 9 taps. Winograd's algorithm (Lavin &
//! Gray, "Fast Algorithms for Convolutional Neural Networks", 2016) computes a 4x4 tile of
//! outputs from the 6x6 window of inputs around it with 36 multiplications per pair of channels
//! instead of 144: each window goes to a transform domain (Bᵀ d B), each 3x3 kernel once per
//! model (G g Gᵀ), the two meet as 36 independent matrix products, one per point of the 6x6
//! domain ([channels out × channels in] · [channels in × tiles · positions]), and the products
//! come back to squares (Aᵀ m A), where the bias, the skip connection and the ReLU are added
//! on the way out. The board is padded to a multiple of 4: 11x11 becomes 3x3 tiles of 4x4
//! outputs (12x12), each tile reading a 6x6 window that overlaps its neighbours' by 2, so a
//! layer costs 9 · 36 = 324 multiplications per channel pair and position against
//! 121 · 9 = 1 089 for the direct convolution: 3.4 times fewer.
//!
//! Why F(4x4, 3x3) and not F(2x2, 3x3): on 11x11 the smaller tiles need 36 tiles of 16 points,
//! 576 multiplications per channel pair (1.9 times fewer than direct, against 3.4), and four
//! times as many tiles to transform. The bigger tiles' price is rounding: their matrices hold
//! 1/24 and 8. With the points 0, ±1, ±2 and ∞ an f32 layer with weights and inputs of order 1
//! stays within 3e-6 of the direct one relative to its largest output (`winograd/tests.rs`), and
//! whole nets well within the 1e-4 asked. Against Burn's forward: random b4c48, b6c64 and
//! b10c128 nets, policy logits within 9e-7 and values within 1e-7 (the `im2col` path: 8e-7);
//! the shipped b4c48 on 200 positions of random games, logits (up to 7.4) within 1.3e-5, values
//! within 2.2e-6 and move priors within 1.8e-6 (`im2col`: 5.3e-6, 9.4e-7, 1.3e-6). F(2x2) has
//! nothing to win back here.
//!
//! The transforms work on [`LANES`] positions of a slice at once, one per vector lane, so that
//! each step of a transform is one vector operation whatever the tile. For that the trunk keeps
//! its activations as [`Bordered`], positions innermost and the board in a border of zeros,
//! from the input planes to the heads: converting from and to `[channel][position · square]`
//! at every layer (one scalar copy per value each way) measured as costly as the transforms.
//! The transforms are plain Rust, compiled for the best instruction set found at run time
//! through [`pulp::Arch::dispatch`] (AVX-512 here), which lets the compiler vectorise them
//! without any `unsafe` of ours; the matrix products go through [`crate::matmul`].

use std::array::from_fn;
use std::ops::Range;

use rayon::prelude::*;

use crate::matmul::{Threads, matmul, matmul_t};

/// Side of the output tile of one transform.
const TILE: usize = 4;
/// Side of the input window of a tile: the tile and the kernel's reach of one square around it.
const WINDOW: usize = TILE + 2;
/// Points of the transform domain: one matrix product each.
pub(crate) const POINTS: usize = WINDOW * WINDOW;
/// Positions transformed together, one per vector lane (16 `f32`: one AVX-512 register).
const LANES: usize = 16;

/// One value for each of [`LANES`] positions.
type Lanes = [f32; LANES];
/// A square array of lanes: a window, a tile or a point of the transform domain per entry.
type Square<const N: usize> = [[Lanes; N]; N];

/// Activations of a slice as the Winograd trunk keeps them from layer to layer:
/// `[channel][square of the bordered board][position]`. The positions are innermost, so that
/// the transforms read and write whole vectors of lanes; the board sits in a border of zeros
/// (one square above and left, the tiles' overhang and one more below and right), the
/// convolution's padding, so that no window needs a bounds check. Only the squares of the
/// board are ever written: the border stays zero.
#[derive(Debug, Clone)]
pub(crate) struct Bordered {
    channels: usize,
    tiling: Tiling,
    values: Vec<f32>,
}

impl Bordered {
    fn zeros(channels: usize, tiling: Tiling) -> Self {
        Self { channels, tiling, values: vec![0.0; channels * tiling.plane()] }
    }

    /// `board(channel, position)` is that board's `size²` squares, rank-major.
    fn from_boards<'a>(channels: usize, tiling: Tiling, board: impl Fn(usize, usize) -> &'a [f32]) -> Self {
        let mut out = Self::zeros(channels, tiling);
        let (positions, size) = (tiling.positions, tiling.size);
        for (channel, plane) in out.planes_mut().enumerate() {
            for position in 0..positions {
                // Rank by rank, each a run of squares `positions` apart (no per-square lookup:
                // this runs four times per convolution while training).
                for (rank, row) in board(channel, position).chunks_exact(size.max(1)).take(size).enumerate() {
                    let start = tiling.bordered(rank, 0) * positions + position;
                    plane[start..].iter_mut().step_by(positions).zip(row).for_each(|(to, &value)| *to = value);
                }
            }
        }
        out
    }

    /// The input planes of `tiling.positions` positions, `[position][plane][square]`.
    pub(crate) fn from_planes(planes: &[f32], channels: usize, tiling: Tiling) -> Self {
        let area = tiling.area();
        assert_eq!(
            planes.len(),
            tiling.positions * channels * area,
            "not {} positions of {channels} planes",
            tiling.positions
        );
        Self::from_boards(channels, tiling, |plane, position| &planes[(position * channels + plane) * area..][..area])
    }

    /// Activations laid out as the rest of [`crate::packed`] has them: `[channel][position ·
    /// square]` (for the tests: the trunk goes from planes to columns only).
    #[cfg(test)]
    pub(crate) fn from_columns(x: &[f32], channels: usize, tiling: Tiling) -> Self {
        let area = tiling.area();
        assert_eq!(
            x.len(),
            channels * tiling.positions * area,
            "not {channels} channels of {} positions",
            tiling.positions
        );
        Self::from_boards(channels, tiling, |channel, position| {
            &x[(channel * tiling.positions + position) * area..][..area]
        })
    }

    /// Back to `[position][channel][square]`, the layout of [`Self::from_planes`] and of a
    /// Burn tensor `[batch, channels, size, size]` (for training, [`crate::conv_train`]), into `out`.
    ///
    /// # Panics
    /// If `out` is not `positions · channels · size²` long.
    pub(crate) fn write_planes(&self, out: &mut [f32]) {
        let (positions, area) = (self.tiling.positions, self.tiling.area());
        assert_eq!(
            out.len(),
            positions * self.channels * area,
            "not {positions} positions of {} planes",
            self.channels
        );
        let size = self.tiling.size;
        for (channel, plane) in self.planes().enumerate() {
            for position in 0..positions {
                let board = &mut out[(position * self.channels + channel) * area..][..area];
                for (rank, row) in board.chunks_exact_mut(size.max(1)).enumerate() {
                    let start = self.tiling.bordered(rank, 0) * positions + position;
                    row.iter_mut().zip(plane[start..].iter().step_by(positions)).for_each(|(to, &value)| *to = value);
                }
            }
        }
    }

    /// Back to `[channel][position · square]`, for the heads.
    pub(crate) fn to_columns(&self) -> Vec<f32> {
        let (positions, area) = (self.tiling.positions, self.tiling.area());
        let mut out = vec![0.0; self.channels * positions * area];
        for (plane, columns) in self.planes().zip(out.chunks_exact_mut((positions * area).max(1))) {
            for (position, board) in columns.chunks_exact_mut(area.max(1)).enumerate() {
                for (value, square) in board.iter_mut().zip(self.tiling.board_squares()) {
                    *value = plane[square * positions + position];
                }
            }
        }
        out
    }

    /// Mean and max of each channel over each position's board, `[position][means of every
    /// channel, then maxima]`, as [`crate::packed`]'s global pooling gives them.
    pub(crate) fn global_pool(&self) -> Vec<f32> {
        let (channels, positions) = (self.channels, self.tiling.positions);
        let area = self.tiling.area() as f32;
        let mut out = vec![0.0; positions * 2 * channels];
        for (channel, plane) in self.planes().enumerate() {
            for first in (0..positions).step_by(LANES) {
                let width = LANES.min(positions - first);
                let (mut sum, mut max, mut lanes) = ([0.0; LANES], [f32::NEG_INFINITY; LANES], [0.0; LANES]);
                for square in self.tiling.board_squares() {
                    load(&plane[square * positions + first..], width, &mut lanes);
                    sum.iter_mut().zip(&lanes).for_each(|(s, v)| *s += v);
                    max.iter_mut().zip(&lanes).for_each(|(m, v)| *m = m.max(*v));
                }
                for (lane, (sum, max)) in sum.iter().zip(&max).enumerate().take(width) {
                    let pooled = &mut out[(first + lane) * 2 * channels..][..2 * channels];
                    pooled[channel] = sum / area;
                    pooled[channels + channel] = *max;
                }
            }
        }
        out
    }

    /// Adds `bias[position][channel]` to every square of that position's board in that channel
    /// (the global pooling branch's output); the border stays zero.
    pub(crate) fn add_position_bias(&mut self, bias: &[f32]) {
        let (channels, tiling) = (self.channels, self.tiling);
        assert_eq!(bias.len(), tiling.positions * channels, "not one bias per position and channel");
        let mut lanes = vec![0.0; tiling.positions];
        for (channel, plane) in self.planes_mut().enumerate() {
            lanes.iter_mut().zip(bias.iter().skip(channel).step_by(channels)).for_each(|(l, b)| *l = *b);
            for square in tiling.board_squares() {
                let values = &mut plane[square * tiling.positions..][..tiling.positions];
                values.iter_mut().zip(&lanes).for_each(|(v, b)| *v += b);
            }
        }
    }

    fn planes(&self) -> impl Iterator<Item = &[f32]> {
        self.values.chunks_exact(self.tiling.plane().max(1)).take(self.channels)
    }

    fn planes_mut(&mut self) -> impl Iterator<Item = &mut [f32]> {
        let channels = self.channels;
        self.values.chunks_exact_mut(self.tiling.plane().max(1)).take(channels)
    }
}

/// A 3x3 convolution with 'same' padding in the Winograd domain, with its bias.
#[derive(Debug, Clone)]
pub(crate) struct WinogradConv {
    channels_in: usize,
    channels_out: usize,
    /// `[point][out][in]`: the left operand of each point's matrix product (G g Gᵀ of every
    /// kernel, one value per point).
    points: Vec<f32>,
    bias: Vec<f32>,
}

impl WinogradConv {
    /// Transforms a 3x3 convolution's `weight`, `[out][in][3][3]` as Burn holds it, once.
    ///
    /// # Panics
    /// If `weight` or `bias` does not have the length of `channels_out` x `channels_in` 3x3
    /// kernels and `channels_out` biases.
    pub(crate) fn new(weight: &[f32], bias: &[f32], channels_out: usize, channels_in: usize) -> Self {
        let pairs = channels_out * channels_in;
        assert_eq!(weight.len(), pairs * 9, "not {channels_out} x {channels_in} 3x3 kernels");
        assert_eq!(bias.len(), channels_out, "not {channels_out} biases");
        let mut points = vec![0.0; POINTS * pairs];
        // Kernel `pair` is (out, in) = (pair / channels_in, pair % channels_in): its value at a
        // point lands at [point][out][in], which is `point · pairs + pair`.
        for (pair, kernel) in weight.chunks_exact(9).enumerate() {
            for (point, value) in kernel_transform(kernel).into_iter().enumerate() {
                points[point * pairs + pair] = value;
            }
        }
        Self { channels_in, channels_out, points, bias: bias.to_vec() }
    }

    /// `relu?(conv(x) + bias + residual?)`: the same outputs as the direct convolution up to
    /// rounding.
    ///
    /// # Panics
    /// If `x` does not have this convolution's input channels, or `residual` its output
    /// channels, or they are not of one slice.
    pub(crate) fn apply(
        &self,
        x: &Bordered,
        residual: Option<&Bordered>,
        relu: bool,
        threads: Threads,
        scratch: &mut Scratch,
    ) -> Bordered {
        assert_eq!(x.channels, self.channels_in, "input channels");
        if let Some(skip) = residual {
            assert_eq!((skip.channels, skip.tiling), (self.channels_out, x.tiling), "residual of another shape");
        }
        pulp::Arch::new().dispatch(Layer { conv: self, x, finish: Finish { residual, relu }, threads, scratch })
    }

    /// Each point's product `[out × in] · [in × tiles · positions]` for one row of tiles, one
    /// after the other or, with the pool's threads, side by side.
    fn multiply(&self, transformed: &[f32], tiling: Tiling, threads: Threads, products: &mut Vec<f32>) {
        let [m, k, n] = [self.channels_out, self.channels_in, tiling.row_columns()];
        // Every product overwrites its destination, so the buffer need not be zeroed again,
        // except when there is nothing to multiply (no input channels): then the products are
        // the zeros left here (chunks of at least 1 make the chunk iterators empty).
        if k == 0 {
            products.clear();
        }
        products.resize(POINTS * m * n, 0.0);
        let (lhs, rhs, dst) = ((m * k).max(1), (k * n).max(1), (m * n).max(1));
        let product = |((a, b), c): ((&[f32], &[f32]), &mut [f32])| matmul(a, b, c, [m, k, n], false, Threads::One);
        match threads {
            Threads::One => {
                let jobs = self
                    .points
                    .chunks_exact(lhs)
                    .zip(transformed.chunks_exact(rhs))
                    .zip(products.chunks_exact_mut(dst));
                jobs.for_each(product);
            }
            Threads::Pool => {
                let jobs = self
                    .points
                    .par_chunks_exact(lhs)
                    .zip(transformed.par_chunks_exact(rhs))
                    .zip(products.par_chunks_exact_mut(dst));
                jobs.for_each(product);
            }
        }
    }

    /// Aᵀ m A of every tile of the row `tiles` in every output channel, plus bias, residual and
    /// ReLU, into `out`; squares of the padding are dropped.
    #[inline(always)]
    fn transform_outputs(&self, products: &[f32], tiles: Range<usize>, finish: Finish<'_>, out: &mut Bordered) {
        let tiling = out.tiling;
        let (columns, positions) = (tiling.row_columns(), tiling.positions);
        let point_stride = self.channels_out * columns;
        let skips = finish.residual.map(Bordered::planes);
        let mut skips = skips.into_iter().flatten();
        // Reused from tile to tile: every value is overwritten each time.
        let mut m = [[[0.0; LANES]; WINDOW]; WINDOW];
        let mut work = Work::default();
        for (channel, (plane, &bias)) in out.planes_mut().zip(&self.bias).enumerate() {
            let epilogue = Epilogue { bias, skip: skips.next(), relu: finish.relu };
            for (column_tile, tile) in tiles.clone().enumerate() {
                for first in (0..positions).step_by(LANES) {
                    let width = LANES.min(positions - first);
                    let at = channel * columns + column_tile * positions + first;
                    for (point, lanes) in m.iter_mut().flatten().enumerate() {
                        load(&products[point * point_stride + at..], width, lanes);
                    }
                    transform_2d(&m, &mut work.half_out, &mut work.tile, output_1d);
                    write_tile(&work.tile, Spot { tile, first, width }, tiling, epilogue, plane);
                }
            }
        }
    }
}

/// The gradient of a 3x3 "same" convolution's weight in the transform domain, `[point][out][in]`,
/// from its input `x` and the gradient `grad` of its output (of one slice, without bias):
/// [`kernel_grads`] takes it back to the kernels once the slices are summed.
///
/// The forward pass makes each output tile `Y = Aᵀ (Σ_in U ⊙ V) A` from the transformed
/// kernels `U = G g Gᵀ` and windows `V = Bᵀ d B`, so the gradient of `U` is the sum over tiles
/// of `(A dY Aᵀ) ⊙ V`: at each point, one product `[out × tiles] · [tiles × in]` (Lavin & Gray
/// again), 3.4 times fewer multiplications than `grad · im2col(x)ᵀ` and no 9-fold copy of
/// the input. The border of `grad` is zero, so the tiles' overhang adds nothing.
///
/// # Panics
/// If `x` and `grad` are not of one tiling.
pub(crate) fn point_grads(x: &Bordered, grad: &Bordered) -> Vec<f32> {
    assert_eq!(x.tiling, grad.tiling, "input and gradient of one slice");
    pulp::Arch::new().dispatch(PointGrads { x, grad })
}

/// `Gᵀ m G` of every kernel's points `[point][out][in]` (summed by the caller over slices):
/// the weight gradient `[out][in][3][3]` as Burn holds the weight.
pub(crate) fn kernel_grads(points: &[f32], channels_out: usize, channels_in: usize) -> Vec<f32> {
    let pairs = channels_out * channels_in;
    assert_eq!(points.len(), POINTS * pairs, "not {channels_out} x {channels_in} kernels of points");
    let mut out = vec![0.0; pairs * 9];
    for (pair, kernel) in out.chunks_exact_mut(9).enumerate() {
        let m = |k: usize, l: usize| f64::from(points[(k * WINDOW + l) * pairs + pair]);
        // `half[l][r]`: (Gᵀ m)[r][l], column by column.
        let half: [[f64; 3]; WINDOW] = from_fn(|l| kernel_grad_1d(from_fn(|k| m(k, l))));
        for (r, row) in kernel.chunks_exact_mut(3).enumerate() {
            let back = kernel_grad_1d(from_fn(|l| half[l][r]));
            row.iter_mut().zip(back).for_each(|(o, v)| *o = v as f32);
        }
    }
    out
}

/// [`point_grads`] for [`pulp::Arch::dispatch`] (see [`Layer`]).
struct PointGrads<'a> {
    x: &'a Bordered,
    grad: &'a Bordered,
}

impl pulp::WithSimd for PointGrads<'_> {
    type Output = Vec<f32>;

    /// Row of tiles by row of tiles, as [`Layer`], each point's product added to its sum.
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Vec<f32> {
        let Self { x, grad } = self;
        let (c_in, c_out, columns) = (x.channels, grad.channels, x.tiling.row_columns());
        let mut points = vec![0.0; POINTS * c_out * c_in];
        let (mut windows, mut grads) = (Vec::new(), Vec::new());
        let (lhs, rhs, dst) = ((c_out * columns).max(1), (c_in * columns).max(1), (c_out * c_in).max(1));
        for tiles in x.tiling.tile_rows() {
            transform_inputs(x, tiles.clone(), &mut windows);
            transform_output_grads(grad, tiles, &mut grads);
            let jobs = grads.chunks_exact(lhs).zip(windows.chunks_exact(rhs)).zip(points.chunks_exact_mut(dst));
            for ((g, v), p) in jobs {
                matmul_t(g, v, p, [c_out, columns, c_in], [false, true], true, Threads::One);
            }
        }
        points
    }
}

/// A dY Aᵀ of each output tile of the row `tiles` in every channel of `grad`, written as each
/// point's `[channel][tile of the row · position]` (the layout of [`transform_inputs`]). A
/// tile's outputs sit one square in from its window's corner.
#[inline(always)]
fn transform_output_grads(grad: &Bordered, tiles: Range<usize>, out: &mut Vec<f32>) {
    transform_to_points::<TILE>(grad, tiles, 1, output_grad_1d, out);
}

/// One call of [`WinogradConv::apply`], for [`pulp::Arch::dispatch`]: everything but the
/// matrix products is plain loops over lanes, compiled once per instruction set and run with
/// the best one this CPU has. (A closure would not do: its body is not inlined into the
/// dispatched function, and so runs without the vector instructions.)
struct Layer<'a> {
    conv: &'a WinogradConv,
    x: &'a Bordered,
    finish: Finish<'a>,
    threads: Threads,
    scratch: &'a mut Scratch,
}

impl pulp::WithSimd for Layer<'_> {
    type Output = Bordered;

    /// One row of tiles at a time: transformed inputs and products of a whole layer (1.3 MB
    /// each for 64 channels and 16 positions) would not stay in a core's L2 cache from one
    /// step to the next, those of a row do.
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Bordered {
        let Self { conv, x, finish, threads, scratch } = self;
        let mut out = Bordered::zeros(conv.channels_out, x.tiling);
        for tiles in x.tiling.tile_rows() {
            transform_inputs(x, tiles.clone(), &mut scratch.transformed);
            conv.multiply(&scratch.transformed, x.tiling, threads, &mut scratch.products);
            conv.transform_outputs(&scratch.products, tiles, finish, &mut out);
        }
        out
    }
}

/// The stack arrays of the output transform, allocated (and zeroed) once per layer rather
/// than once per tile.
struct Work {
    /// Aᵀ m of a point matrix.
    half_out: [[Lanes; WINDOW]; TILE],
    /// Aᵀ m A: an output tile.
    tile: Square<TILE>,
}

impl Default for Work {
    fn default() -> Self {
        let lanes = [0.0; LANES];
        Self { half_out: [[lanes; WINDOW]; TILE], tile: [[lanes; TILE]; TILE] }
    }
}

/// What follows a layer's convolution.
#[derive(Clone, Copy)]
struct Finish<'a> {
    residual: Option<&'a Bordered>,
    relu: bool,
}

/// What follows the convolution in one output channel.
#[derive(Clone, Copy)]
struct Epilogue<'a> {
    bias: f32,
    /// The residual's plane of this channel.
    skip: Option<&'a [f32]>,
    relu: bool,
}

/// A tile and a run of positions of it: the lanes of one transform.
#[derive(Clone, Copy)]
struct Spot {
    tile: usize,
    first: usize,
    width: usize,
}

/// The shape of one slice of positions in tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tiling {
    size: usize,
    /// Tiles along each side: the board padded to a multiple of [`TILE`].
    per_side: usize,
    positions: usize,
}

impl Tiling {
    /// `positions` boards of `size` x `size`.
    pub(crate) fn new(size: usize, positions: usize) -> Self {
        Self { size, per_side: size.div_ceil(TILE), positions }
    }

    fn area(self) -> usize {
        self.size * self.size
    }

    /// Side of the bordered board: the tiles' outputs and one square of the windows' reach on
    /// each side.
    fn side(self) -> usize {
        self.per_side * TILE + 2
    }

    /// Values of one channel of a [`Bordered`].
    fn plane(self) -> usize {
        self.side() * self.side() * self.positions
    }

    /// The bordered square of the board's square (`rank`, `file`).
    fn bordered(self, rank: usize, file: usize) -> usize {
        (rank + 1) * self.side() + file + 1
    }

    /// The bordered squares of the board, rank-major.
    fn board_squares(self) -> impl Iterator<Item = usize> {
        (0..self.size).flat_map(move |rank| (0..self.size).map(move |file| self.bordered(rank, file)))
    }

    /// The tiles of each row of tiles, top to bottom.
    fn tile_rows(self) -> impl Iterator<Item = Range<usize>> {
        (0..self.per_side).map(move |row| row * self.per_side..(row + 1) * self.per_side)
    }

    /// Columns of each point's matrix product for a row of tiles: every tile of the row for
    /// every position, tile-major.
    fn row_columns(self) -> usize {
        self.per_side * self.positions
    }

    /// Board coordinates (rank, file) of `tile`'s top-left output; in the bordered board, the
    /// top-left square of the tile's window.
    fn corner(self, tile: usize) -> (usize, usize) {
        (tile / self.per_side * TILE, tile % self.per_side * TILE)
    }
}

/// Buffers of one slice for a row of tiles, reused from row to row and layer to layer.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// `[point][channel in][tile of the row · position]`: each point's right operand.
    transformed: Vec<f32>,
    /// `[point][channel out][tile of the row · position]`: each point's product.
    products: Vec<f32>,
}

/// Bᵀ d B of the window of each of `tiles` (a row) in every channel of `x`, written as each
/// point's `[channel][tile of the row · position]`.
#[inline(always)]
fn transform_inputs(x: &Bordered, tiles: Range<usize>, out: &mut Vec<f32>) {
    transform_to_points::<WINDOW>(x, tiles, 0, input_1d, out);
}

/// `F s Fᵀ` into the transform domain, for the `IN` x `IN` square `inset` squares in from the
/// window corner of each of `tiles` (a row) in every channel of `x`, where `f` applies F to a
/// column or row: written as each point's `[channel][tile of the row · position]`.
#[inline(always)]
fn transform_to_points<const IN: usize>(
    x: &Bordered,
    tiles: Range<usize>,
    inset: usize,
    f: impl Fn([f32; IN]) -> [f32; WINDOW] + Copy,
    out: &mut Vec<f32>,
) {
    let tiling = x.tiling;
    let (side, positions, columns) = (tiling.side(), tiling.positions, tiling.row_columns());
    let point_stride = x.channels * columns;
    // Every value is written below: no need to zero what the last layer left.
    out.resize(POINTS * point_stride, 0.0);
    // Allocated (and zeroed) once per row of tiles rather than once per tile.
    let mut square = [[[0.0; LANES]; IN]; IN];
    let mut half = [[[0.0; LANES]; IN]; WINDOW];
    let mut domain = [[[0.0; LANES]; WINDOW]; WINDOW];
    for (channel, plane) in x.planes().enumerate() {
        for (column_tile, tile) in tiles.clone().enumerate() {
            let (rank, file) = tiling.corner(tile);
            for first in (0..positions).step_by(LANES) {
                let width = LANES.min(positions - first);
                for (r, row) in square.iter_mut().enumerate() {
                    let start = ((rank + inset + r) * side + file + inset) * positions + first;
                    for (c, lanes) in row.iter_mut().enumerate() {
                        load(&plane[start + c * positions..], width, lanes);
                    }
                }
                transform_2d(&square, &mut half, &mut domain, f);
                let at = channel * columns + column_tile * positions + first;
                for (point, lanes) in domain.iter().flatten().enumerate() {
                    store(lanes, &mut out[point * point_stride + at..], width);
                }
            }
        }
    }
}

/// Adds the bias and the residual to an output tile, applies the ReLU and writes the squares
/// that are on the board to `plane` (one channel of a [`Bordered`]).
#[inline(always)]
fn write_tile(y: &Square<TILE>, spot: Spot, tiling: Tiling, epilogue: Epilogue<'_>, plane: &mut [f32]) {
    let (size, positions) = (tiling.size, tiling.positions);
    let (rank, file) = tiling.corner(spot.tile);
    let activate = |v: f32| if epilogue.relu { v.max(0.0) } else { v };
    for (i, row) in y.iter().enumerate().take(size.saturating_sub(rank)) {
        for (j, lanes) in row.iter().enumerate().take(size.saturating_sub(file)) {
            let at = tiling.bordered(rank + i, file + j) * positions + spot.first;
            let out = plane[at..at + spot.width].iter_mut().zip(lanes);
            match epilogue.skip {
                Some(skip) => {
                    out.zip(&skip[at..at + spot.width]).for_each(|((o, y), s)| *o = activate(y + epilogue.bias + s))
                }
                None => out.for_each(|(o, y)| *o = activate(y + epilogue.bias)),
            }
        }
    }
}

/// `width` lanes from the start of `from` into `lanes`, the rest zero; a whole vector when it
/// is full.
#[inline(always)]
fn load(from: &[f32], width: usize, lanes: &mut Lanes) {
    if width == LANES {
        lanes.copy_from_slice(&from[..LANES]);
    } else {
        lanes.iter_mut().zip(from.iter().take(width).chain(std::iter::repeat(&0.0))).for_each(|(l, v)| *l = *v);
    }
}

/// The first `width` lanes to the start of `to`.
#[inline(always)]
fn store(lanes: &Lanes, to: &mut [f32], width: usize) {
    if width == LANES {
        to[..LANES].copy_from_slice(lanes);
    } else {
        to.iter_mut().zip(lanes).take(width).for_each(|(t, l)| *t = *l);
    }
}

/// `out = F x Fᵀ` for the matrix F that `f` applies to a vector: `f` down every column (into
/// `columns`, `F x`), then along every row, lane by lane (each loop over the lanes is one vector
/// operation).
#[inline(always)]
fn transform_2d<const IN: usize, const OUT: usize>(
    x: &Square<IN>,
    columns: &mut [[Lanes; IN]; OUT],
    out: &mut Square<OUT>,
    f: impl Fn([f32; IN]) -> [f32; OUT],
) {
    // No `array::from_fn` here: what is not inlined would run without the vector instructions
    // `pulp` compiled the caller for.
    for c in 0..IN {
        for lane in 0..LANES {
            let mut column = [0.0; IN];
            column.iter_mut().zip(x).for_each(|(v, row)| *v = row[c][lane]);
            columns.iter_mut().zip(f(column)).for_each(|(row, value)| row[c][lane] = value);
        }
    }
    for (out_row, row) in out.iter_mut().zip(columns.iter()) {
        for lane in 0..LANES {
            let mut line = [0.0; IN];
            line.iter_mut().zip(row).for_each(|(v, lanes)| *v = lanes[lane]);
            out_row.iter_mut().zip(f(line)).for_each(|(lanes, value)| lanes[lane] = value);
        }
    }
}

/// Bᵀ d for a window's column or row `d`: the inputs at the points 0, 1, −1, 2, −2 and ∞.
///
/// Bᵀ = [4 0 −5 0 1 0; 0 −4 −4 1 1 0; 0 4 −4 −1 1 0; 0 −2 −1 2 1 0; 0 2 −1 −2 1 0; 0 4 0 −5 0 1],
/// with the shared sums computed once.
#[inline(always)]
fn input_1d([d0, d1, d2, d3, d4, d5]: [f32; WINDOW]) -> [f32; WINDOW] {
    let (a, b) = (d3 + d4, d1 + d2);
    let (c, e) = (d4 - d3, d1 - d2);
    let (f, g) = (d4 - d2, d3 - d1);
    [4.0 * d0 - 5.0 * d2 + d4, a - 4.0 * b, c + 4.0 * e, f + 2.0 * g, f - 2.0 * g, 4.0 * d1 - 5.0 * d3 + d5]
}

/// Aᵀ m for a column or row `m` of the transform domain: the 4 outputs of a tile.
///
/// Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 0; 0 1 1 4 4 0; 0 1 −1 8 −8 1].
#[inline(always)]
fn output_1d([m0, m1, m2, m3, m4, m5]: [f32; WINDOW]) -> [f32; TILE] {
    let (sum12, diff12) = (m1 + m2, m1 - m2);
    let (sum34, diff34) = (m3 + m4, m3 - m4);
    [m0 + sum12 + sum34, diff12 + 2.0 * diff34, sum12 + 4.0 * sum34, diff12 + 8.0 * diff34 + m5]
}

/// A y for a tile's column or row `y` of output gradients: the transpose of [`output_1d`].
///
/// A = [1 0 0 0; 1 1 1 1; 1 −1 1 −1; 1 2 4 8; 1 −2 4 −8; 0 0 0 1].
#[inline(always)]
fn output_grad_1d([y0, y1, y2, y3]: [f32; TILE]) -> [f32; WINDOW] {
    let (even, odd) = (y0 + y2, y1 + y3);
    let (even2, odd2) = (y0 + 4.0 * y2, 2.0 * y1 + 8.0 * y3);
    [y0, even + odd, even - odd, even2 + odd2, even2 - odd2, y3]
}

/// Gᵀ m for a column or row `m` of a kernel's points: the transpose of [`kernel_1d`].
fn kernel_grad_1d([m0, m1, m2, m3, m4, m5]: [f64; WINDOW]) -> [f64; 3] {
    [m0 / 4.0 - (m1 + m2) / 6.0 + (m3 + m4) / 24.0, (m2 - m1) / 6.0 + (m3 - m4) / 12.0, (m3 + m4 - m1 - m2) / 6.0 + m5]
}

/// G g for a kernel's column or row `g`, in `f64` (once per model, so rounding only once).
///
/// G = [1/4 0 0; −1/6 −1/6 −1/6; −1/6 1/6 −1/6; 1/24 1/12 1/6; 1/24 −1/12 1/6; 0 0 1].
fn kernel_1d([g0, g1, g2]: [f64; 3]) -> [f64; WINDOW] {
    [
        g0 / 4.0,
        -(g0 + g1 + g2) / 6.0,
        -(g0 - g1 + g2) / 6.0,
        (g0 + 2.0 * g1 + 4.0 * g2) / 24.0,
        (g0 - 2.0 * g1 + 4.0 * g2) / 24.0,
        g2,
    ]
}

/// G g Gᵀ of a 3x3 kernel `[ky][kx]`, point-major (`[6][6]` flattened).
fn kernel_transform(kernel: &[f32]) -> [f32; POINTS] {
    let g = |r: usize, c: usize| f64::from(kernel[r * 3 + c]);
    // `columns[c][k]`: (G g)[k][c].
    let columns: [[f64; WINDOW]; 3] = from_fn(|c| kernel_1d([g(0, c), g(1, c), g(2, c)]));
    let mut out = [0.0; POINTS];
    for (k, row) in out.chunks_exact_mut(WINDOW).enumerate() {
        let transformed = kernel_1d([columns[0][k], columns[1][k], columns[2][k]]);
        row.iter_mut().zip(transformed).for_each(|(o, v)| *o = v as f32);
    }
    out
}

#[cfg(test)]
mod tests;
