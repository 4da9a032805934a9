//! Checkpoints round-trip exactly and fail loudly on the wrong variant, encoding or bytes.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use burn::tensor::{Tensor, TensorData};
use tafl_nn::checkpoint::{self, CheckpointError, CheckpointMeta, Expected};
use tafl_nn::train::TrainConfig;
use tafl_nn::{TaflNet, TaflNetConfig, Trainer, device};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-nn-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn expected() -> Expected {
    Expected { variant: "copenhagen".into(), encoding_version: 1 }
}

fn outputs(model: &TaflNet, config: &TaflNetConfig) -> (Vec<f32>, Vec<f32>) {
    let size = config.board_size;
    let planes = common::random_planes(config, 3, 11);
    let input = Tensor::<4>::from_data(TensorData::new(planes, [3, config.input_planes, size, size]), &device());
    let out = model.forward(input);
    (out.policy_logits.into_data().try_to_vec::<f32>().expect("f32"), out.value.into_data().try_to_vec::<f32>().expect("f32"))
}

/// A model with trained weights and non-trivial batch-norm statistics, and its trainer.
fn trained(config: &TaflNetConfig) -> Trainer {
    let mut trainer = Trainer::new(config.init(&device()), TrainConfig::new().with_learning_rate(1e-2));
    let batch = common::random_batch(config, 8, 5, &trainer.device());
    for _ in 0..3 {
        trainer.step(&batch);
    }
    trainer
}

fn save_trained(dir: &Path) -> (TaflNet, TaflNetConfig) {
    let config = common::tiny_config();
    let trainer = trained(&config);
    let meta = CheckpointMeta::new("copenhagen", 1).with_field("parent", "m0000");
    checkpoint::save(dir, &trainer.model(), &config, &meta, Some(trainer.optimizer())).expect("save");
    (trainer.model(), config)
}

#[test]
fn round_trip_is_bit_exact() {
    let dir = scratch("roundtrip").join("m0001");
    let (model, config) = save_trained(&dir);
    let loaded = checkpoint::load(&dir, &expected(), &device()).expect("load");
    assert_eq!(loaded.config, config);
    assert_eq!(loaded.meta.extra.get("parent"), Some(&serde_json::json!("m0000")));
    assert_eq!(outputs(&loaded.model, &config), outputs(&model, &config));
    assert!(!dir.parent().expect("parent").read_dir().expect("list").any(|e| {
        e.map(|e| e.file_name().to_string_lossy().contains(".tmp-")).unwrap_or(false)
    }));
}

#[test]
fn optimizer_state_resumes() {
    let dir = scratch("resume").join("m0001");
    save_trained(&dir);
    let loaded = checkpoint::load(&dir, &expected(), &device()).expect("load");
    let train = TrainConfig::new();
    let optim = checkpoint::load_optimizer(&dir, &loaded.meta, train.optimizer()).expect("optimizer");
    let optim = optim.expect("state was saved");
    let mut trainer = Trainer::resume(loaded.model, optim, train);
    let batch = common::random_batch(&loaded.config, 8, 5, &trainer.device());
    assert!(trainer.step(&batch).total.is_finite());
}

#[test]
fn resumed_training_continues_exactly() {
    let dir = scratch("exact").join("m0001");
    let config = common::tiny_config();
    let mut original = trained(&config);
    let meta = CheckpointMeta::new("copenhagen", 1);
    checkpoint::save(&dir, &original.model(), &config, &meta, Some(original.optimizer())).expect("save");
    let loaded = checkpoint::load(&dir, &expected(), &device()).expect("load");
    let train = TrainConfig::new().with_learning_rate(1e-2);
    let optim = checkpoint::load_optimizer(&dir, &loaded.meta, train.optimizer()).expect("read");
    let mut resumed = Trainer::resume(loaded.model, optim.expect("saved"), train);
    let batch = common::random_batch(&config, 8, 5, &original.device());
    let (a, b) = (original.step(&batch), resumed.step(&batch));
    assert_eq!(a, b, "same loss before the step");
    assert_eq!(outputs(&original.model(), &config), outputs(&resumed.model(), &config), "same update");
}

#[test]
fn existing_directory_is_not_overwritten() {
    let dir = scratch("exists").join("m0001");
    save_trained(&dir);
    let config = common::tiny_config();
    let meta = CheckpointMeta::new("copenhagen", 1);
    let err = checkpoint::save(&dir, &config.init(&device()), &config, &meta, None);
    assert!(matches!(err, Err(CheckpointError::AlreadyExists(_))), "{err:?}");
}

#[test]
fn truncated_weights_are_reported() {
    let dir = scratch("truncated").join("m0001");
    save_trained(&dir);
    let weights = dir.join("weights.bpk");
    let bytes = fs::read(&weights).expect("read");
    fs::write(&weights, &bytes[..bytes.len() / 2]).expect("truncate");
    let err = checkpoint::load(&dir, &expected(), &device()).expect_err("must fail");
    assert!(matches!(err, CheckpointError::Truncated { .. }), "{err}");
    assert!(err.to_string().contains("truncated"), "{err}");
}

#[test]
fn corrupt_weights_are_reported() {
    let dir = scratch("corrupt").join("m0001");
    save_trained(&dir);
    let weights = dir.join("weights.bpk");
    let mut bytes = fs::read(&weights).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    fs::write(&weights, &bytes).expect("corrupt");
    let err = checkpoint::load(&dir, &expected(), &device()).expect_err("must fail");
    assert!(matches!(err, CheckpointError::Corrupt { .. }), "{err}");
}

#[test]
fn wrong_variant_is_reported() {
    let dir = scratch("variant").join("m0001");
    save_trained(&dir);
    let brandubh = Expected { variant: "brandubh".into(), encoding_version: 1 };
    let err = checkpoint::load(&dir, &brandubh, &device()).expect_err("must fail");
    assert!(matches!(err, CheckpointError::WrongVariant { .. }), "{err}");
    assert!(err.to_string().contains("copenhagen") && err.to_string().contains("brandubh"), "{err}");
}

#[test]
fn wrong_encoding_is_reported() {
    let dir = scratch("encoding").join("m0001");
    save_trained(&dir);
    let newer = Expected { variant: "copenhagen".into(), encoding_version: 2 };
    let err = checkpoint::load(&dir, &newer, &device()).expect_err("must fail");
    assert!(matches!(err, CheckpointError::WrongEncoding { expected: 2, found: 1 }), "{err}");
}

#[test]
fn weights_of_another_shape_are_reported() {
    let dir = scratch("shape").join("m0001");
    save_trained(&dir);
    let mut wider = common::tiny_config();
    wider.channels = 16;
    let json = serde_json::to_vec(&wider).expect("json");
    fs::write(dir.join("config.json"), json).expect("write config");
    let err = checkpoint::load(&dir, &expected(), &device()).expect_err("must fail");
    assert!(matches!(err, CheckpointError::Weights { .. }), "{err}");
}
