//! Shared helpers of the integration tests.
#![allow(dead_code)]

use burn::tensor::{Tensor, TensorData};
use tafl_nn::policy::policy_len;
use tafl_nn::{Device, TaflNet, TaflNetConfig, TrainBatch, device};

/// A tiny net: 7x7 board, 4 planes, two blocks of 8 channels, one with global pooling.
pub fn tiny_config() -> TaflNetConfig {
    TaflNetConfig::new(7, 4, 2, 8)
        .with_global_pool_interval(2)
        .with_policy_channels(8)
        .with_value_channels(8)
        .with_value_hidden(16)
}

/// Deterministic xorshift numbers in `[0, 1)`.
pub struct Numbers(u64);

impl Numbers {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Input planes as plain values, `[batch][plane][rank][file]`, zeros and ones.
pub fn random_planes(config: &TaflNetConfig, batch: usize, seed: u64) -> Vec<f32> {
    let mut rng = Numbers::new(seed);
    let n = batch * config.input_planes * config.board_size * config.board_size;
    (0..n).map(|_| if rng.next() < 0.3 { 1.0 } else { 0.0 }).collect()
}

/// A random batch: some legal moves per position, a random distribution over them, a random value.
pub fn random_batch(config: &TaflNetConfig, batch: usize, seed: u64, device: &Device) -> TrainBatch {
    random_batch_with_entropy(config, batch, seed, device).0
}

/// [`random_batch`] and the mean entropy of its policy targets: the least policy loss possible.
pub fn random_batch_with_entropy(
    config: &TaflNetConfig,
    batch: usize,
    seed: u64,
    device: &Device,
) -> (TrainBatch, f32) {
    let mut rng = Numbers::new(seed ^ 0xabcd);
    let moves = policy_len(config.board_size);
    let legal: Vec<bool> = (0..batch * moves).map(|_| rng.next() < 0.1).collect();
    let mut policy: Vec<f32> = legal.iter().map(|&l| if l { rng.next() } else { 0.0 }).collect();
    for row in policy.chunks_mut(moves) {
        let sum: f32 = row.iter().sum();
        row.iter_mut().for_each(|p| *p /= sum.max(1e-6));
    }
    let entropy = -policy.iter().filter(|&&p| p > 0.0).map(|&p| p * p.ln()).sum::<f32>() / batch as f32;
    let value: Vec<f32> = (0..batch).map(|_| 2.0 * rng.next() - 1.0).collect();
    let planes = random_planes(config, batch, seed);
    let batch = TrainBatch::from_slices(config, &planes, &policy, &legal, &value, device).expect("consistent lengths");
    (batch, entropy)
}

/// The policy logits and values of `model` on three fixed random positions: what a player reads.
pub fn outputs(model: &TaflNet, config: &TaflNetConfig) -> (Vec<f32>, Vec<f32>) {
    let size = config.board_size;
    let planes = random_planes(config, 3, 11);
    let input = Tensor::<4>::from_data(TensorData::new(planes, [3, config.input_planes, size, size]), &device());
    let out = model.forward(input);
    (
        out.policy_logits.into_data().try_to_vec::<f32>().expect("f32"),
        out.value.into_data().try_to_vec::<f32>().expect("f32"),
    )
}

/// [`tiny_config`] as a build before `key` (a field of the config's JSON) wrote it: the JSON
/// without that key, read back.
pub fn tiny_config_without(key: &str) -> TaflNetConfig {
    let json = serde_json::to_value(tiny_config()).expect("json");
    let mut old = json.as_object().expect("an object").clone();
    assert!(old.remove(key).is_some(), "the config names {key}: {json}");
    serde_json::from_value(serde_json::Value::Object(old)).expect("an older config loads")
}

/// Saves `model` as a Copenhagen checkpoint (in a scratch folder named after `name`), loads it
/// back and asserts that the config and what a player reads came back the same.
pub fn assert_survives_a_checkpoint(model: &TaflNet, config: &TaflNetConfig, name: &str) {
    use tafl_nn::checkpoint::{self, CheckpointMeta, Expected};
    let dir = std::env::temp_dir().join(format!("tafl-nn-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    checkpoint::save(&dir, model, config, &CheckpointMeta::new("copenhagen", 1), None).expect("save");
    let expected = Expected { variant: "copenhagen".into(), encoding_version: 1 };
    let loaded = checkpoint::load(&dir, &expected, &device()).expect("load");
    assert_eq!(&loaded.config, config);
    assert_eq!(outputs(&loaded.model, config), outputs(model, config));
    let _ = std::fs::remove_dir_all(&dir);
}
