//! The exported ONNX model computes what Burn computes, as seen by an independent runtime
//! (tract), and export reports bad paths as errors.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use onnx_ir::{Message, ModelProto};
use tafl_nn::onnx::{self, OnnxError};
use tafl_nn::train::TrainConfig;
use tafl_nn::{INPUT_PLANES, TaflNet, TaflNetConfig, Trainer, device, encoding};
use tafl_rules::{Game, Variant};
use tract_onnx::prelude::*;

const TOLERANCE: f32 = 1e-4;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-nn-onnx-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Copenhagen, two blocks of 16 channels, the second with global pooling: every kind of
/// layer of the real nets, small enough to train a few steps here.
fn config() -> TaflNetConfig {
    TaflNetConfig::new(11, INPUT_PLANES, 2, 16).with_global_pool_interval(2)
}

/// A net with trained weights and batch-norm statistics far from the identity, so that
/// folding them into the convolutions is really exercised.
fn trained(config: &TaflNetConfig) -> TaflNet {
    let mut trainer = Trainer::new(config.init(&device()), TrainConfig::new().with_learning_rate(1e-2));
    let batch = common::random_batch(config, 8, 5, &trainer.device());
    for _ in 0..3 {
        trainer.step(&batch);
    }
    trainer.model()
}

/// The planes of real positions: the Copenhagen start and positions after 3, 10 and 30
/// pseudo-random legal moves (fewer if the game ends first).
fn positions() -> (Vec<f32>, usize) {
    let variant = Variant::copenhagen();
    let mut rng = common::Numbers::new(17);
    let games: Vec<Game> = [0, 3, 10, 30]
        .into_iter()
        .map(|plies| {
            let mut game = Game::new(variant);
            for _ in 0..plies {
                let moves = game.legal_moves();
                if game.outcome().is_over() || moves.is_empty() {
                    break;
                }
                let pick = (rng.next() * moves.len() as f32) as usize;
                game.play(moves[pick.min(moves.len() - 1)]).expect("a legal move");
            }
            game
        })
        .collect();
    let refs: Vec<&Game> = games.iter().collect();
    (encoding::encode_games(&refs, variant.size(), INPUT_PLANES), games.len())
}

/// Policy logits and values of tract running the ONNX file at `path` on `planes`.
fn run_tract(path: &Path, config: &TaflNetConfig, planes: &[f32], batch: usize) -> (Vec<f32>, Vec<f32>) {
    let model = tract_onnx::onnx()
        .model_for_path(path)
        .expect("tract reads the model")
        .into_optimized()
        .expect("tract optimises the model")
        .into_runnable()
        .expect("tract plans the model");
    let size = config.board_size;
    let input = Tensor::from_shape(&[batch, config.input_planes, size, size], planes).expect("input shape");
    let out = model.run(tvec!(input.into())).expect("tract runs the model");
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].shape(), [batch, config.policy_len()]);
    assert_eq!(out[1].shape(), [batch]);
    let read =
        |i: usize| out[i].to_plain_array_view::<f32>().expect("f32 output").iter().copied().collect::<Vec<f32>>();
    (read(0), read(1))
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Names of the graph's inputs and outputs, and the symbol of its input's first axis.
fn boundaries(path: &Path) -> (Vec<String>, Vec<String>, String) {
    let bytes = fs::read(path).expect("the model file");
    let model = ModelProto::parse_from_bytes(&bytes).expect("valid protobuf");
    let names = |values: &[onnx_ir::ValueInfoProto]| values.iter().map(|v| v.name.clone()).collect();
    let batch = model.graph.input[0].type_.tensor_type().shape.dim[0].dim_param().to_string();
    (names(&model.graph.input), names(&model.graph.output), batch)
}

#[test]
fn exported_net_matches_burn_in_tract() {
    let config = config();
    let net = trained(&config);
    let dir = scratch("match");
    let path = dir.join("net.onnx");
    let info = onnx::export(&net, &config, &path).expect("export");
    assert_eq!(info.bytes, fs::metadata(&path).expect("written").len());
    assert_eq!((info.opset, info.policy_len, info.input_shape), (18, 4840, [1, INPUT_PLANES, 11, 11]));
    assert_eq!(boundaries(&path), (vec!["planes".into()], vec!["policy".into(), "value".into()], "batch".into()));

    let (planes, _) = positions();
    let burn = assert_tract_matches_burn(&net, &config, &path);

    // The batch axis is dynamic: one position runs too and gives the same numbers.
    let one = config.input_planes * 11 * 11;
    let (policy1, value1) = run_tract(&path, &config, &planes[..one], 1);
    let (dp1, dv1) =
        (max_abs_diff(&policy1, &burn.policy_logits[..config.policy_len()]), max_abs_diff(&value1, &burn.values[..1]));
    eprintln!("batch 1: max abs diff policy {dp1:e}, value {dv1:e}");
    assert!(dp1 < TOLERANCE && dv1 < TOLERANCE, "policy {dp1}, value {dv1}");
    let _ = fs::remove_dir_all(&dir);
}

/// Runs the real positions through the ONNX file at `path` in tract and through `net` in Burn,
/// asserts that they agree, and returns Burn's answer.
fn assert_tract_matches_burn(net: &TaflNet, config: &TaflNetConfig, path: &Path) -> tafl_nn::Prediction {
    let (planes, batch) = positions();
    let burn = net.predict(config, &planes, &device()).expect("whole positions");
    let (policy, value) = run_tract(path, config, &planes, batch);
    let (dp, dv) = (max_abs_diff(&policy, &burn.policy_logits), max_abs_diff(&value, &burn.values));
    eprintln!("batch {batch}: max abs diff policy {dp:e}, value {dv:e}");
    assert!(dp < TOLERANCE && dv < TOLERANCE, "policy {dp}, value {dv}");
    assert!(burn.values.iter().all(|v| v.abs() <= 1.0));
    burn
}

#[test]
fn a_net_with_heads_by_side_exports_what_burn_computes() {
    // The positions have the attackers to move (after 0, 10 and 30 plies) and the defenders
    // (after 3): the graph picks each position's pair of heads as the net does.
    let config = config().with_heads_by_side(Some(true));
    let (planes, batch) = positions();
    let sides: Vec<f32> =
        planes.chunks_exact(planes.len() / batch).map(|p| p[encoding::DEFENDERS_TO_MOVE * 121]).collect();
    assert!(sides.contains(&0.0) && sides.contains(&1.0), "both sides to move: {sides:?}");
    let net = trained(&config);
    let dir = scratch("sides");
    let path = dir.join("net.onnx");
    onnx::export(&net, &config, &path).expect("export");
    assert_tract_matches_burn(&net, &config, &path);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_folded_net_exports_the_same_graph_outputs() {
    // Exporting folds the batch norms; a net folded beforehand must not be folded twice.
    let config = config();
    let net = trained(&config);
    let dir = scratch("folded");
    let (plain, folded) = (dir.join("plain.onnx"), dir.join("folded.onnx"));
    onnx::export(&net, &config, &plain).expect("export");
    onnx::export(&net.fold_batch_norms(), &config, &folded).expect("export folded");
    let (planes, batch) = positions();
    let (p1, v1) = run_tract(&plain, &config, &planes, batch);
    let (p2, v2) = run_tract(&folded, &config, &planes, batch);
    assert!(max_abs_diff(&p1, &p2) < TOLERANCE && max_abs_diff(&v1, &v2) < TOLERANCE);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn bad_paths_are_errors_and_leave_nothing_behind() {
    let config = TaflNetConfig::new(7, INPUT_PLANES, 1, 8);
    let net = config.init(&device());
    let dir = scratch("bad");
    let missing = dir.join("no-such-dir").join("net.onnx");
    let e = onnx::export(&net, &config, &missing).expect_err("missing directory");
    assert!(matches!(e, OnnxError::Io { .. }), "{e}");
    assert!(e.to_string().contains("no-such-dir"), "{e}");
    // A directory where the file should go: the rename fails and the temporary file goes.
    let occupied = dir.join("occupied");
    fs::create_dir_all(occupied.join("inside")).expect("dir");
    let e = onnx::export(&net, &config, &occupied).expect_err("a directory is in the way");
    assert!(matches!(e, OnnxError::Io { .. }), "{e}");
    let left: Vec<_> = fs::read_dir(&dir).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(left, ["occupied"]);
    let _ = fs::remove_dir_all(&dir);
}
