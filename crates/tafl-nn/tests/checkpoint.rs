//! Checkpoints round-trip exactly and fail loudly on the wrong variant, encoding or bytes.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

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
    assert_eq!(common::outputs(&loaded.model, &config), common::outputs(&model, &config));
    assert!(
        !dir.parent()
            .expect("parent")
            .read_dir()
            .expect("list")
            .any(|e| { e.map(|e| e.file_name().to_string_lossy().contains(".tmp-")).unwrap_or(false) })
    );
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
    assert_eq!(common::outputs(&original.model(), &config), common::outputs(&resumed.model(), &config), "same update");
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
    // A caller of a newer encoding reads the older one too; one of an older does not.
    let newer = Expected { variant: "copenhagen".into(), encoding_version: 2 };
    checkpoint::load(&dir, &newer, &device()).expect("version 1 under a build of version 2");
    let older = Expected { variant: "copenhagen".into(), encoding_version: 0 };
    let err = checkpoint::load(&dir, &older, &device()).expect_err("must fail");
    assert!(matches!(err, CheckpointError::WrongEncoding { expected: 0, found: 1 }), "{err}");
    assert!(err.to_string().contains("version 1"), "{err}");
}

#[test]
fn weights_of_another_shape_are_reported() {
    let dir = scratch("shape").join("m0001");
    save_trained(&dir);
    let mut wider = common::tiny_config();
    wider.channels = 16;
    let json = serde_json::to_vec(&wider).expect("json");
    fs::write(dir.join("config.json"), json).expect("write config");
    // meta.json records the digest of config.json: the edit is caught there.
    let err = checkpoint::load(&dir, &expected(), &device()).expect_err("must fail");
    assert!(
        matches!(err, CheckpointError::Corrupt { .. } | CheckpointError::Truncated { .. })
            && err.to_string().contains("config.json"),
        "{err}"
    );
    // Without that digest (a checkpoint written before it), Burn finds the shapes do not fit.
    let mut meta: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("meta.json")).expect("read")).expect("json");
    meta.as_object_mut().expect("object").remove("config");
    fs::write(dir.join("meta.json"), serde_json::to_vec(&meta).expect("json")).expect("write");
    let err = checkpoint::load(&dir, &expected(), &device()).expect_err("must fail");
    assert!(matches!(err, CheckpointError::Weights { .. }), "{err}");
}

/// Every damage to a saved checkpoint gives an error, or (where the byte is not checked: JSON
/// whitespace, a timestamp) the same net; never a panic. Truncations of the small files at every
/// length, of the weights at 64 places; single-byte flips everywhere in the small files and at a
/// stride in the weights.
#[test]
fn every_damage_to_a_checkpoint_fails_cleanly_or_changes_nothing() {
    let dir = scratch("damage").join("m0001");
    let (model, config) = save_trained(&dir);
    let reference = common::outputs(&model, &config);
    let same_net = |dir: &Path, what: &str| match checkpoint::load(dir, &expected(), &device()) {
        Err(_) => {}
        Ok(loaded) => {
            assert_eq!(common::outputs(&loaded.model, &loaded.config), reference, "{what} changed the net unnoticed")
        }
    };
    for name in ["meta.json", "config.json", "weights.bpk"] {
        let path = dir.join(name);
        let good = fs::read(&path).expect("read");
        let stride = if name == "weights.bpk" { good.len() / 64 + 1 } else { 1 };
        for len in (0..good.len()).step_by(stride) {
            fs::write(&path, &good[..len]).expect("truncate");
            assert!(checkpoint::load(&dir, &expected(), &device()).is_err(), "{name} cut to {len} bytes was accepted");
        }
        for i in (0..good.len()).step_by(stride.max(1) / 4 + 1) {
            for flip in [0x01u8, 0x20, 0x80] {
                let mut bytes = good.clone();
                bytes[i] ^= flip;
                fs::write(&path, &bytes).expect("damage");
                same_net(&dir, &format!("{name} byte {i} ^ {flip:#x}"));
            }
        }
        fs::write(&path, &good).expect("restore");
    }
    // A config that asks for a huge net is refused before the net is built, even without the
    // digest of config.json (checkpoints written before it had none).
    let mut meta: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("meta.json")).expect("read")).expect("json");
    assert!(meta.as_object_mut().expect("object").remove("config").is_some(), "save records the config's digest");
    fs::write(dir.join("meta.json"), serde_json::to_vec(&meta).expect("json")).expect("write");
    assert_eq!(
        common::outputs(&checkpoint::load(&dir, &expected(), &device()).expect("loads without it").model, &config),
        reference
    );
    for (key, value) in [
        ("channels", 1_000_000u64),
        ("blocks", 1_000_000),
        ("blocks", u64::MAX),
        ("board_size", 1000),
        ("value_hidden", 1 << 40),
    ] {
        let mut json: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("config.json")).expect("read")).expect("json");
        let good = json.clone();
        json[key] = value.into();
        fs::write(dir.join("config.json"), serde_json::to_vec(&json).expect("json")).expect("write");
        let err = checkpoint::load(&dir, &expected(), &device()).expect_err("a huge net must be refused");
        assert!(matches!(err, CheckpointError::Corrupt { .. }), "{key}: {err}");
        fs::write(dir.join("config.json"), serde_json::to_vec(&good).expect("json")).expect("restore");
    }
    // Heads by side on a net without the plane that says who is to move.
    let mut json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("config.json")).expect("read")).expect("json");
    (json["heads_by_side"], json["input_planes"]) = (true.into(), 3.into());
    fs::write(dir.join("config.json"), serde_json::to_vec(&json).expect("json")).expect("write");
    let err = checkpoint::load(&dir, &expected(), &device()).expect_err("no side plane to read");
    assert!(matches!(err, CheckpointError::Corrupt { .. }), "{err}");
}

/// Weights whose record calls a float tensor integer data (the dtype in burnpack's header, which
/// only our digest covers; a hostile bundle fixes the digest up). Burn took the record's dtype as
/// is and panicked at the first use (found by the `checkpoint` fuzz target): the load casts to
/// the net's dtype, and the net evaluates.
#[test]
fn a_record_of_integer_dtype_is_cast_not_a_panic() {
    let dir = scratch("dtype").join("m0001");
    let (_, config) = save_trained(&dir);
    let weights = fs::read(dir.join("weights.bpk")).expect("read");
    let from = b"dtypecF32".as_slice();
    let at = weights.windows(from.len()).position(|w| w == from).expect("a float tensor in the header");
    for (name, dtype) in
        [("I32", b"dtypecI32".as_slice()), ("I64", b"dtypecI64".as_slice()), ("U8", b"dtypebU8".as_slice())]
    {
        let mut damaged = weights.clone();
        damaged.splice(at..at + from.len(), dtype.iter().copied());
        fs::write(dir.join("weights.bpk"), &damaged).expect("write");
        let mut meta: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("meta.json")).expect("read")).expect("json");
        meta["weights"] = serde_json::to_value(checkpoint::FileDigest::of(&damaged)).expect("digest");
        fs::write(dir.join("meta.json"), serde_json::to_vec(&meta).expect("json")).expect("write");
        let loaded = std::panic::catch_unwind(|| {
            checkpoint::load(&dir, &expected(), &device()).map(|c| common::outputs(&c.model, &config))
        });
        assert!(loaded.is_ok(), "a record of {name} data panicked");
    }
}

/// Several processes saving the same new model at once (workers starting a new run together):
/// one save wins, every other reports `AlreadyExists`, never an I/O error from the rename.
#[test]
fn saves_racing_for_one_directory_end_in_one_winner() {
    let config = common::tiny_config();
    let model = config.init(&device());
    let meta = CheckpointMeta::new("copenhagen", 1);
    for round in 0..5 {
        let dir = scratch(&format!("race-{round}")).join("m000000");
        let barrier = std::sync::Barrier::new(6);
        let results: Vec<Result<(), CheckpointError>> = std::thread::scope(|s| {
            let saves: Vec<_> = (0..6)
                .map(|_| {
                    // Burn modules are Send, not Sync: a copy for each saver.
                    let model = model.clone();
                    let (dir, config, meta, barrier) = (&dir, &config, &meta, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        checkpoint::save(dir, &model, config, meta, None)
                    })
                })
                .collect();
            saves.into_iter().map(|h| h.join().expect("no panic")).collect()
        });
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1, "{results:?}");
        assert!(results.iter().all(|r| matches!(r, Ok(()) | Err(CheckpointError::AlreadyExists(_)))), "{results:?}");
        assert!(checkpoint::load(&dir, &expected(), &device()).is_ok());
    }
}
