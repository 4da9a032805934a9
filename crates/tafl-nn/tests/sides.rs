//! Heads by side (issue 32's lever 5): a net grown into them plays as before, trains, survives a
//! checkpoint, and configs written before them load without them.

mod common;

use tafl_nn::checkpoint::{self, CheckpointMeta, Expected};
use tafl_nn::train::TrainConfig;
use tafl_nn::{TaflNetConfig, Trainer, device};

#[test]
fn a_net_grown_into_heads_by_side_trains_and_survives_a_checkpoint() {
    let config = common::tiny_config();
    let before = config.init(&device());
    let (grown, grown_config) = before.clone().with_heads_by_side(&config);
    assert!(grown_config.has_heads_by_side());
    assert_eq!(common::outputs(&grown, &grown_config), common::outputs(&before, &config));

    let mut trainer = Trainer::new(grown, TrainConfig::new().with_learning_rate(1e-2));
    let data = common::random_batch(&grown_config, 8, 5, &trainer.device());
    let first = trainer.step(&data);
    let mut last = first;
    for _ in 0..30 {
        last = trainer.step(&data);
    }
    assert!(last.total < first.total, "{first:?} -> {last:?}");
    let trained = trainer.model();

    let dir = std::env::temp_dir().join(format!("tafl-nn-test-{}-sides", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    checkpoint::save(&dir, &trained, &grown_config, &CheckpointMeta::new("copenhagen", 1), None).expect("save");
    let expected = Expected { variant: "copenhagen".into(), encoding_version: 1 };
    let loaded = checkpoint::load(&dir, &expected, &device()).expect("load");
    assert_eq!(loaded.config, grown_config);
    assert_eq!(common::outputs(&loaded.model, &grown_config), common::outputs(&trained, &grown_config));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn configs_written_before_heads_by_side_load_with_one_pair() {
    let json = serde_json::to_value(common::tiny_config()).expect("json");
    let mut old = json.as_object().expect("an object").clone();
    assert!(old.remove("heads_by_side").is_some(), "the config names the heads: {json}");
    let config: TaflNetConfig = serde_json::from_value(serde_json::Value::Object(old)).expect("an old config loads");
    assert!(!config.has_heads_by_side());
    assert_eq!(config, common::tiny_config());
}
