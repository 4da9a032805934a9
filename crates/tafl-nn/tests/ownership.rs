//! The ownership head: it learns its targets, leaves play alone, survives a checkpoint, and old
//! checkpoints without it still load.

mod common;

use tafl_nn::train::TrainConfig;
use tafl_nn::{TaflNetConfig, TrainBatch, Trainer, device};

fn with_head() -> TaflNetConfig {
    common::tiny_config().with_ownership_head(Some(true))
}

/// A batch with ownership targets that follow from its planes (the owner of a square is plane 0
/// minus plane 1, the king's square the first square of plane 2), so that they can be learnt;
/// the last sample does not know its end.
fn batch(config: &TaflNetConfig, n: usize, device: &tafl_nn::Device) -> TrainBatch {
    let area = config.board_size * config.board_size;
    let planes = common::random_planes(config, n, 3);
    let per = config.input_planes * area;
    let mut owner = vec![0.0; n * area];
    let mut king = vec![0.0; n * area];
    let mut known = vec![1.0; n];
    for b in 0..n {
        let p = &planes[b * per..];
        for i in 0..area {
            owner[b * area + i] = p[i] - p[area + i];
        }
        if let Some(k) = (0..area).find(|&i| p[2 * area + i] > 0.0) {
            king[b * area + k] = 1.0;
        }
    }
    known[n - 1] = 0.0;
    let last = (n - 1) * area..n * area;
    owner[last.clone()].iter_mut().for_each(|o| *o = 0.0);
    king[last].iter_mut().for_each(|k| *k = 0.0);
    let plain = common::random_batch(config, n, 3, device);
    plain.with_ownership(config, &owner, &known, &king, device).expect("lengths fit")
}

#[test]
fn the_head_learns_its_targets() {
    let config = with_head();
    let mut trainer = Trainer::new(config.init(&device()), TrainConfig::new().with_learning_rate(1e-2));
    let data = batch(&config, 16, &trainer.device());
    let first = trainer.step(&data);
    assert!(first.ownership > 0.0 && first.king > 0.0, "{first:?}");
    let expected = first.policy + first.value + 1.5 * first.ownership + 0.1 * first.king;
    assert!((first.total - expected).abs() < 1e-4 * expected.abs().max(1.0), "{first:?}");
    let mut last = first;
    for _ in 0..60 {
        last = trainer.step(&data);
    }
    assert!(last.ownership < 0.5 * first.ownership, "owners: {} -> {}", first.ownership, last.ownership);
    assert!(last.king < 0.5 * first.king, "king: {} -> {}", first.king, last.king);
    // A batch without targets trains the head on nothing.
    let plain = common::random_batch(&config, 4, 9, &trainer.device());
    let stats = trainer.step(&plain);
    assert_eq!((stats.ownership, stats.king), (0.0, 0.0));
}

#[test]
fn a_grown_head_plays_as_before_and_survives_a_checkpoint() {
    let config = common::tiny_config();
    let mut trainer = Trainer::new(config.init(&device()), TrainConfig::new().with_learning_rate(1e-2));
    let data = common::random_batch(&config, 8, 5, &trainer.device());
    for _ in 0..3 {
        trainer.step(&data);
    }
    let before = trainer.model();
    let (grown, grown_config) = trainer.model().with_ownership_head(&config, &device());
    assert!(grown_config.has_ownership_head());
    assert_eq!(common::outputs(&grown, &grown_config), common::outputs(&before, &config));
    common::assert_survives_a_checkpoint(&grown, &grown_config, "ownership");
}

#[test]
fn configs_written_before_the_head_load_without_it() {
    let config = common::tiny_config_without("ownership_head");
    assert!(!config.has_ownership_head());
    assert_eq!(config, common::tiny_config());
}
