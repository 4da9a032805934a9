#![no_main]
//! Checkpoints (`meta.json`, `config.json`, `weights.bpk` of a model or a bundle): loading never
//! panics, and a net that loads evaluates a position of the variant it was loaded for.
//!
//! Input: a flag byte, then `meta.json` and `config.json`, each after its length (u16, little
//! endian), then the weights. With bit 0 of the flag set, the target writes the true lengths and
//! checksums of the other two files into the meta (when it parses), so that the fuzzer reaches
//! the config checks and Burn's record decoder past the digests.
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use tafl_nn::checkpoint::{CheckpointFiles, CheckpointMeta, FileDigest};
use tafl_nn::{NetEvaluator, evaluator::expected_for};
use tafl_rules::{Game, Variant};
use tafl_search::Evaluator;

fn part<'a>(data: &mut &'a [u8]) -> &'a [u8] {
    let Some((len, rest)) = data.split_first_chunk::<2>() else { return std::mem::take(data) };
    let len = usize::from(u16::from_le_bytes(*len)).min(rest.len());
    let (part, rest) = rest.split_at(len);
    *data = rest;
    part
}

fuzz_target!(|data: &[u8]| {
    let Some((&flag, mut data)) = data.split_first() else { return };
    let mut meta = part(&mut data).to_vec();
    let config = part(&mut data).to_vec();
    let weights = data.to_vec();
    if flag & 1 == 1
        && let Ok(mut m) = serde_json::from_slice::<CheckpointMeta>(&meta)
    {
        m.config = Some(FileDigest::of(&config));
        m.weights = Some(FileDigest::of(&weights));
        meta = serde_json::to_vec(&m).unwrap_or_default();
    }
    let variant = Variant::preset("brandubh").unwrap_or_else(|| unreachable!("a preset"));
    let files = CheckpointFiles { meta, config, weights };
    let Ok(net) = NetEvaluator::decode(Path::new("fuzz-checkpoint"), files, &expected_for(variant)) else { return };
    let game = Game::new(variant);
    let evaluation = net.evaluate(&[&game]);
    assert_eq!(evaluation.len(), 1);
});
