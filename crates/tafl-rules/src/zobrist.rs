//! Zobrist keys, generated at compile time.

/// Keys for [attacker, defender, king] on each of up to 256 squares.
pub(crate) static PIECE_KEYS: [[u64; 256]; 3] = piece_keys();
/// Toggled when the side to move changes.
pub(crate) const SIDE_KEY: u64 = splitmix(0xdead_beef_cafe_f00d);

const fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const fn piece_keys() -> [[u64; 256]; 3] {
    let mut keys = [[0u64; 256]; 3];
    let mut p = 0;
    while p < 3 {
        let mut i = 0;
        while i < 256 {
            keys[p][i] = splitmix((p as u64) << 16 | i as u64);
            i += 1;
        }
        p += 1;
    }
    keys
}
