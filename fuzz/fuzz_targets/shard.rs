#![no_main]
//! Sample shards (bytes of `selfplay/*.shard`, local or from object storage): decoding never
//! panics, and neither does turning the samples of a shard that decodes into a training batch.
//!
//! The first byte chooses what the rest is: the bytes of a whole shard (even), or a payload to
//! which the target adds a valid header with its length and checksum (odd), so that the fuzzer
//! reaches the sample decoder and the batch encoder past the checksum; with bit 3 set, that
//! header says format 1 (the samples before endings), so both sample layouts are decoded.
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rand::SeedableRng;
use tafl_rules::Variant;
use tafl_run::shard::{ShardExpect, ShardHeader, decode_shard, frame_payload};

const PATH: &str = "fuzz.shard";

fn wrapped(variant: &Variant, payload: &[u8]) -> Vec<u8> {
    let mut header = ShardHeader::new(variant, 1, "m000000".into());
    // The sample count is the payload's leading length, when there is one.
    header.count = payload.get(..8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
    frame_payload(Path::new(PATH), header, payload).unwrap_or_default()
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let variant = Variant::preset("brandubh").unwrap_or_else(|| unreachable!("a preset"));
    let expect = ShardExpect { variant: variant.name().into(), encoding_version: tafl_nn::POLICY_VERSION };
    let mut bytes = if mode % 2 == 1 { wrapped(variant, rest) } else { rest.to_vec() };
    if mode % 2 == 1 && mode & 8 == 8 && bytes.len() >= 16 {
        // The header's first field is its format version.
        bytes[12..16].copy_from_slice(&1u32.to_le_bytes());
    }
    let Ok((header, samples)) = decode_shard(Path::new(PATH), &bytes, &expect) else { return };
    assert_eq!(header.count, samples.len() as u64);
    let refs: Vec<_> = samples.iter().collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(u64::from(mode));
    // Both encodings: the tactical planes play every move of both sides from each position.
    let planes = if mode & 4 == 4 { tafl_nn::TACTICAL_INPUT_PLANES } else { tafl_nn::INPUT_PLANES };
    let batch = tafl_zero::optimize::encode_batch(&refs, variant, planes, mode & 2 == 2, 0.25, &mut rng);
    let rows = batch.value.len();
    assert!(rows <= samples.len());
    assert_eq!(batch.planes.len(), rows * planes * 49);
    assert_eq!(batch.policy.len(), batch.legal.len());
    assert_eq!((batch.owner.len(), batch.king.len(), batch.known.len()), (rows * 49, rows * 49, rows));
});
