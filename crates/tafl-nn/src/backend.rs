//! The one place that chooses where tensors live.
//!
//! Burn 0.22 no longer threads a backend type parameter through models and tensors: a
//! `Tensor<D>` carries its backend in its [`Device`]. So the choice that older Burn code made
//! with a `type Backend = ...` alias is made here, by [`device`], and nowhere else.
//! `Device::default()` is never used in this crate, because it prefers any GPU backend that
//! happens to be compiled in (through Cargo feature unification) and can fall back to a slow
//! software adapter.
//!
//! Backends, by Cargo feature of this crate:
//! - default: Burn's pure-Rust CPU backend `flex` (rayon threads, SIMD, AVX-512 matmul kernels
//!   chosen at run time through the `x86-v4` feature).
//! - `wgpu`: Vulkan/Metal/DX12 through wgpu. Slow to build (about 19 minutes on 2 cores).
//! - CUDA is not wired: to add it, enable `burn/cuda` behind a `cuda` feature and return
//!   `Device::cuda(0)` from [`device`]; nothing else in the crate changes.

/// Inference batches larger than this run in slices of this many positions, which keeps the
/// activations of a 64-channel trunk in the CPU caches (the model's forward pass and the
/// Winograd slices of [`crate::conv_train`] both cut there).
pub const INFERENCE_CHUNK: usize = 64;

/// The device type of every tensor in this crate (re-exported from Burn).
pub type Device = burn::tensor::Device;

/// Human-readable name of the backend [`device`] returns, for logs and benchmarks.
#[cfg(not(feature = "wgpu"))]
pub const BACKEND_NAME: &str = "flex (cpu)";
/// Human-readable name of the backend [`device`] returns, for logs and benchmarks.
#[cfg(feature = "wgpu")]
pub const BACKEND_NAME: &str = "wgpu";

/// The inference device: Burn's pure-Rust CPU backend.
#[cfg(not(feature = "wgpu"))]
#[must_use]
pub fn device() -> Device {
    Device::flex()
}

/// The inference device: the default wgpu adapter (a discrete GPU when there is one).
#[cfg(feature = "wgpu")]
#[must_use]
pub fn device() -> Device {
    Device::wgpu(burn::tensor::DeviceKind::DefaultDevice)
}

/// The training device: [`device`] with automatic differentiation enabled.
#[must_use]
pub fn training_device() -> Device {
    device().autodiff()
}
