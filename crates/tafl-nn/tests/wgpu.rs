//! The net on Burn's wgpu backend against `flex` on the CPU: the forward pass, training steps
//! and a checkpoint's round trip. Built only with `--features wgpu`; on a machine without a GPU,
//! Mesa's lavapipe (a Vulkan device in software) runs wgpu's kernels:
//! `scripts/wgpu-lavapipe.sh` installs it and runs this file.
#![cfg(feature = "wgpu")]

mod common;

use std::fs;

use burn::module::Module;

use tafl_nn::checkpoint::{self, CheckpointMeta, Expected};
use tafl_nn::train::{OptimizerKind, TrainConfig};
use tafl_nn::{Device, Prediction, TaflNet, TaflNetConfig, Trainer};

/// Outputs and losses agree to this much, relative to the largest output.
const TOLERANCE: f32 = 1e-4;

fn gpu() -> Device {
    tafl_nn::device()
}

fn predict(net: &TaflNet, config: &TaflNetConfig, device: &Device) -> Prediction {
    let planes = common::random_planes(config, 5, 3);
    net.clone().to_device(device).predict(config, &planes, device).expect("whole positions")
}

fn assert_close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let scale = a.iter().chain(b).fold(1.0_f32, |m, v| m.max(v.abs()));
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= TOLERANCE * scale, "{what}[{i}]: {x} on wgpu, {y} on flex");
    }
}

fn assert_same(gpu: &Prediction, flex: &Prediction, what: &str) {
    assert_close(&gpu.policy_logits, &flex.policy_logits, &format!("{what}: policy"));
    assert_close(&gpu.values, &flex.values, &format!("{what}: values"));
}

#[test]
fn the_device_is_wgpu() {
    assert_eq!(tafl_nn::backend::BACKEND_NAME, "wgpu");
    assert_ne!(gpu(), Device::flex());
}

#[test]
fn forward_training_and_a_checkpoint_match_flex() {
    let config = common::tiny_config();
    let net = config.init(&Device::flex());
    assert_same(&predict(&net, &config, &gpu()), &predict(&net, &config, &Device::flex()), "fresh net");

    // Plain SGD: the same gradients give the same weights, step after step.
    let sgd = TrainConfig::new().with_optimizer(OptimizerKind::Sgd).with_momentum(0.0).with_learning_rate(0.05);
    let [(gpu_losses, gpu_net), (flex_losses, flex_net)] = [gpu(), Device::flex()].map(|device| {
        let mut trainer = Trainer::on(net.clone(), sgd.clone(), &device);
        let batch = common::random_batch(&config, 8, 5, &trainer.device());
        let losses: Vec<f32> = (0..5).map(|_| trainer.step(&batch).total).collect();
        (losses, trainer.model())
    });
    assert_close(&gpu_losses, &flex_losses, "losses");
    assert!(gpu_losses[4] < gpu_losses[0], "no learning on wgpu: {gpu_losses:?}");
    let trained = predict(&gpu_net, &config, &gpu());
    assert_same(&trained, &predict(&flex_net, &config, &Device::flex()), "trained net");

    // Saved from the GPU, loaded back onto it and onto the CPU.
    let dir = std::env::temp_dir().join(format!("tafl-nn-wgpu-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let meta = CheckpointMeta::new("copenhagen", 1);
    checkpoint::save(&dir, &gpu_net, &config, &meta, None).expect("save");
    let expected = Expected { variant: "copenhagen".into(), encoding_version: tafl_nn::ENCODING_VERSION };
    for device in [gpu(), Device::flex()] {
        let loaded = checkpoint::load(&dir, &expected, &device).expect("load");
        assert_same(&predict(&loaded.model, &config, &device), &trained, "loaded checkpoint");
    }
    let _ = fs::remove_dir_all(&dir);
}
