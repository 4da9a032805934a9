//! Tests of [`super`]: kept in a file of their own so that `model.rs` stays a map of the net.

use super::*;
use crate::backend::device;

fn tiny() -> TaflNetConfig {
    TaflNetConfig::new(7, 5, 2, 8).with_global_pool_interval(2)
}

#[test]
fn weights_are_finite_until_one_is_not() {
    /// Makes the `n`-th float tensor NaN, and leaves the others.
    struct Poison(usize);
    impl burn::module::ModuleMapper for Poison {
        fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
            self.0 = self.0.wrapping_sub(1);
            if self.0 == 0 { param.map(|t| t.add_scalar(f32::NAN)) } else { param }
        }
    }
    let net = tiny().init(&device());
    assert!(net.weights_finite());
    assert!(!net.clone().map(&mut Poison(1)).weights_finite());
    assert!(!net.map(&mut Poison(7)).weights_finite());
}

#[test]
fn a_net_grown_into_more_planes_plays_as_before() {
    let config = tiny();
    let net = config.init(&device());
    let (positions, area) = (3, 49);
    let old: Vec<f32> = (0..positions * 5 * area).map(|i| ((i * 7919) % 13) as f32 / 13.0).collect();
    // The same positions with three more planes each, full of values the old net never saw.
    let mut new = Vec::new();
    for position in old.chunks_exact(5 * area) {
        new.extend_from_slice(position);
        new.extend((0..3 * area).map(|i| 1.0 + i as f32));
    }
    let before = net.valid().predict(&config, &old, &device()).expect("predict");
    let (grown, grown_config) = net.with_input_planes(&config, 8);
    assert_eq!(grown_config.input_planes, 8);
    let after = grown.valid().predict(&grown_config, &new, &device()).expect("predict");
    assert_eq!(before.values, after.values);
    assert_eq!(before.policy_logits, after.policy_logits);
}

#[test]
fn a_net_grown_heads_by_side_plays_as_before_and_reads_the_side_plane() {
    let config = tiny();
    let net = config.init(&device());
    let area = 49;
    // Two positions, the attackers to move in the first and the defenders in the second.
    let mut planes: Vec<f32> = (0..2 * 5 * area).map(|i| ((i * 7919) % 13) as f32 / 13.0).collect();
    planes[DEFENDERS_TO_MOVE * area..][..area].fill(0.0);
    planes[(5 + DEFENDERS_TO_MOVE) * area..][..area].fill(1.0);
    let before = net.valid().predict(&config, &planes, &device()).expect("predict");
    let (grown, grown_config) = net.with_heads_by_side(&config);
    assert!(grown_config.has_heads_by_side());
    assert!(grown_config.flops_per_position() > config.flops_per_position());
    let after = grown.clone().valid().predict(&grown_config, &planes, &device()).expect("predict");
    assert_eq!(before, after);
    // Moving the defenders' value head moves the second position's value only.
    let mut moved = grown;
    let heads = moved.defenders.as_mut().expect("grown");
    heads.value.out.bias = heads.value.out.bias.take().map(|b| Param::from_tensor(b.val().add_scalar(0.5)));
    let moved = moved.valid().predict(&grown_config, &planes, &device()).expect("predict");
    assert_eq!(moved.values[0], before.values[0]);
    assert!((moved.values[1] - before.values[1]).abs() > 1e-3, "{:?} against {:?}", moved.values, before.values);
    assert_eq!(moved.policy_logits, before.policy_logits);
}

#[test]
fn output_shapes() {
    let config = tiny();
    let net = config.init(&device());
    let out = net.forward(Tensor::zeros([3, 5, 7, 7], &device()));
    assert_eq!(out.policy_logits.dims(), [3, config.policy_len()]);
    assert_eq!(out.value.dims(), [3]);
}

#[test]
fn folded_batch_norm_matches_batch_norm() {
    use burn::tensor::Distribution;
    let d = device();
    let mut layer = ConvBn::new(5, 6, 3, &d);
    let random = |lo: f64, hi: f64| Tensor::<1>::random([6], Distribution::Uniform(lo, hi), &d);
    layer.norm.gamma = Param::from_tensor(random(0.5, 2.0));
    layer.norm.beta = Param::from_tensor(random(-1.0, 1.0));
    layer.norm.running_mean = RunningState::new(random(-1.0, 1.0));
    layer.norm.running_var = RunningState::new(random(0.5, 2.0));
    let x = Tensor::<4>::random([2, 5, 7, 7], Distribution::Default, &d);
    let folded: Vec<f32> = layer.forward(x.clone()).into_data().try_to_vec::<f32>().unwrap_or_default();
    let reference = layer.norm.forward(layer.conv.forward(x));
    let reference: Vec<f32> = reference.into_data().try_to_vec::<f32>().unwrap_or_default();
    assert_eq!(folded.len(), 2 * 6 * 49);
    for (a, b) in folded.iter().zip(&reference) {
        assert!((a - b).abs() < 1e-4 * (1.0 + b.abs()), "{a} vs {b}");
    }
}

#[test]
fn folded_net_matches_unfolded() {
    let config = tiny();
    let net = config.init(&device());
    let planes: Vec<f32> = (0..3 * 5 * 49).map(|i| ((i * 37) % 11) as f32 / 11.0).collect();
    let plain = net.predict(&config, &planes, &device()).expect("whole");
    let folded = net.fold_batch_norms().predict(&config, &planes, &device()).expect("whole");
    for (a, b) in plain.policy_logits.iter().chain(&plain.values).zip(folded.policy_logits.iter().chain(&folded.values))
    {
        assert!((a - b).abs() < 1e-4 * (1.0 + a.abs()), "{a} vs {b}");
    }
}

#[test]
fn large_batches_in_slices_match_one_by_one() {
    let config = tiny();
    let d = device();
    let net = config.init(&d);
    let batch = INFERENCE_CHUNK + 3;
    let x = Tensor::<4>::random([batch, 5, 7, 7], burn::tensor::Distribution::Default, &d);
    let whole = net.forward(x.clone());
    assert_eq!(whole.value.dims(), [batch]);
    let last = net.forward_whole(x.narrow(0, batch - 1, 1));
    let whole_values: Vec<f32> = whole.value.into_data().try_to_vec::<f32>().unwrap_or_default();
    let last_value: Vec<f32> = last.value.into_data().try_to_vec::<f32>().unwrap_or_default();
    assert!((whole_values[batch - 1] - last_value[0]).abs() < 1e-5);
}

#[test]
fn predict_reads_back_plain_vectors() {
    let config = tiny();
    let net = config.init(&device());
    let planes = vec![0.5; 2 * 5 * 49];
    let p = net.predict(&config, &planes, &device()).expect("whole positions");
    assert_eq!((p.policy_logits.len(), p.values.len()), (2 * config.policy_len(), 2));
    assert!(net.predict(&config, &planes[1..], &device()).is_err());
}

#[test]
fn names_and_flops() {
    let config = TaflNetConfig::new(11, 12, 6, 64);
    assert_eq!(config.name(), "b6c64");
    // Twelve 3x3 64->64 convolutions dominate: 12 · 2 · 9 · 64 · 64 · 121 ≈ 107 MFLOP.
    let flops = config.flops_per_position();
    assert!((100_000_000..130_000_000).contains(&flops), "{flops}");
}

#[test]
fn policy_is_square_major() {
    // Logit index of (square, move) must read channel `move` at that square.
    let config = tiny();
    let net = config.init(&device());
    let x = Tensor::<4>::random([1, 5, 7, 7], burn::tensor::Distribution::Default, &device());
    let head_in = relu(net.stem.forward(x));
    let trunk = net.blocks.iter().fold(head_in, |x, b| b.forward(x));
    let channels = net.policy.out.forward(relu(net.policy.hidden.forward(trunk.clone())));
    let flat = net.policy.forward(trunk);
    let channels: Vec<f32> = channels.into_data().try_to_vec::<f32>().unwrap_or_default();
    let flat: Vec<f32> = flat.into_data().try_to_vec::<f32>().unwrap_or_default();
    let (size, moves) = (7, 24);
    for (square, m) in [(0, 0), (3, 5), (48, 23), (20, 11)] {
        assert_eq!(flat[square * moves + m], channels[m * size * size + square]);
    }
}
