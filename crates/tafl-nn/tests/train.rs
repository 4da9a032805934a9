//! Training lowers the loss on a fixed batch, for both optimisers.

mod common;

use tafl_nn::train::{OptimizerKind, TrainConfig};
use tafl_nn::{Trainer, device};

/// Trains a tiny net for twenty steps on one batch; returns the loss above its floor (the
/// entropy of the policy targets) at the first and the last step.
fn train_twenty_steps(optimizer: OptimizerKind, learning_rate: f64) -> (f32, f32) {
    let config = common::tiny_config();
    let train = TrainConfig::new().with_optimizer(optimizer).with_learning_rate(learning_rate);
    let mut trainer = Trainer::new(config.init(&device()), train);
    let (batch, floor) = common::random_batch_with_entropy(&config, 16, 7, &trainer.device());
    let first = trainer.step(&batch).total;
    let mut last = first;
    for _ in 1..20 {
        last = trainer.step(&batch).total;
        assert!(last.is_finite());
    }
    assert!(trainer.evaluate(&batch).total.is_finite());
    (first - floor, last - floor)
}

#[test]
fn adamw_lowers_the_loss() {
    let (first, last) = train_twenty_steps(OptimizerKind::AdamW, 1e-2);
    assert!(last < 0.5 * first, "excess loss {first} -> {last}");
}

#[test]
fn sgd_lowers_the_loss() {
    let (first, last) = train_twenty_steps(OptimizerKind::Sgd, 2e-2);
    assert!(last < 0.8 * first, "excess loss {first} -> {last}");
}

#[test]
fn illegal_moves_get_no_probability() {
    let config = common::tiny_config();
    let batch = common::random_batch(&config, 2, 3, &device());
    let out = config.init(&device()).forward(batch.planes.clone());
    let masked = out.policy_logits + (batch.legal.clone() - 1.0) * tafl_nn::train::ILLEGAL_LOGIT_PENALTY;
    let probs = burn::tensor::activation::softmax(masked, 1);
    let probs: Vec<f32> = probs.into_data().try_to_vec::<f32>().expect("f32 data");
    let legal: Vec<f32> = batch.legal.into_data().try_to_vec::<f32>().expect("f32 data");
    let illegal_mass: f32 = probs.iter().zip(&legal).filter(|(_, l)| **l == 0.0).map(|(p, _)| p).sum();
    assert!(illegal_mass < 1e-6, "{illegal_mass}");
}

#[test]
fn batch_lengths_are_checked() {
    let config = common::tiny_config();
    let err = tafl_nn::TrainBatch::from_slices(&config, &[0.0; 3], &[], &[], &[0.0], &device());
    assert!(err.is_err());
}
