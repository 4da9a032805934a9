//! Heads by side (issue 32's lever 5): a net grown into them plays as before, trains, survives a
//! checkpoint, and configs written before them load without them.

mod common;

use tafl_nn::train::TrainConfig;
use tafl_nn::{Trainer, device};

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
    common::assert_survives_a_checkpoint(&trainer.model(), &grown_config, "sides");
}

#[test]
fn configs_written_before_heads_by_side_load_with_one_pair() {
    let config = common::tiny_config_without("heads_by_side");
    assert!(!config.has_heads_by_side());
    assert_eq!(config, common::tiny_config());
}
