//! Training samples and the shard files that hold them.
//!
//! A sample is a position in compact form (the three piece sets as 256-bit masks, side to
//! move, repetition count, plies since capture), a sparse policy target, the game's outcome
//! and, since format 2, the board the game ended on (the target of the net's ownership head).
//!
//! # Shard file
//! ```text
//! magic       8 bytes   "TAFLSHRD"
//! header_len  u32 LE
//! header      bincode ShardHeader (format version, variant, encoding version, board size,
//!             count, games, model, payload length, FNV-1a 64 of the payload)
//! payload     bincode Vec<Sample> (format 1: samples without `ending`, still read)
//! ```
//! Shards are written to a hidden temporary name in the same directory, synced, then renamed:
//! a reader sees a whole shard or none. A shard that fails any check (magic, version, variant,
//! encoding, length, checksum, decoding) is reported with its path and skipped by the trainer.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tafl_rules::{Piece, Position, Setup, Side, Square, Variant};

/// First bytes of every shard.
pub const MAGIC: &[u8; 8] = b"TAFLSHRD";
/// Layout version of the shard format this build writes. It reads this one and format 1 (the
/// samples before [`Sample::ending`]).
pub const SHARD_FORMAT_VERSION: u32 = 2;

/// The pieces on the board when a game ended, in the masks' layout of [`Sample`]: where each
/// side's pieces stood at the end, the target of the net's ownership head (an attack that lost
/// still shows where the king broke out and which soldiers fell).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ending {
    /// Attacker soldiers.
    pub attackers: [u64; 4],
    /// Defender soldiers.
    pub defenders: [u64; 4],
    /// The king (empty when he was captured).
    pub king: [u64; 4],
}

impl Ending {
    /// The pieces of `position`, the last of a game.
    #[must_use]
    pub fn of_position(position: &Position) -> Ending {
        let size = position.size();
        let mut e = Ending { attackers: [0; 4], defenders: [0; 4], king: [0; 4] };
        for (piece, mask) in
            [(Piece::Attacker, &mut e.attackers), (Piece::Defender, &mut e.defenders), (Piece::King, &mut e.king)]
        {
            for sq in position.squares(piece) {
                set_bit(mask, sq.index(size));
            }
        }
        e
    }

    /// Who holds square index `i` (`rank * size + file`) at the end: 1 an attacker, -1 a
    /// defender or the king, 0 nobody.
    #[must_use]
    pub fn owner(&self, i: u32) -> f32 {
        let has = |mask: &[u64; 4]| i < 256 && mask[(i / 64) as usize] >> (i % 64) & 1 == 1;
        if has(&self.attackers) {
            1.0
        } else if has(&self.defenders) || has(&self.king) {
            -1.0
        } else {
            0.0
        }
    }

    /// The king's square index at the end; `None` when he was captured.
    #[must_use]
    pub fn king_square(&self) -> Option<u32> {
        bits(&self.king).next()
    }
}

/// One training position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Attacker soldiers: bit `rank * size + file`, 256 bits (boards up to 15x15).
    pub attackers: [u64; 4],
    /// Defender soldiers, same layout.
    pub defenders: [u64; 4],
    /// The king, same layout (empty when there is none).
    pub king: [u64; 4],
    /// 0: attackers to move, 1: defenders.
    pub side_to_move: u8,
    /// Occurrences of this position so far, this one included.
    pub repetitions: u8,
    /// Plies since the last capture.
    pub plies_since_capture: u16,
    /// Ply of the game at which the position occurred.
    pub ply: u16,
    /// Policy target: (policy index, probability), summing to one.
    pub policy: Vec<(u16, f32)>,
    /// Outcome of the game for the side to move: 1 win, 0 draw, -1 loss.
    pub value: f32,
    /// The search's root value for the side to move, for diagnostics.
    pub root_value: f32,
    /// Relative weight of the sample when the trainer draws from the window.
    pub weight: f32,
    /// The board the game ended on; `None` in format 1 shards.
    pub ending: Option<Ending>,
}

/// A sample of shard format 1, read into a [`Sample`] without an ending.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct SampleV1 {
    attackers: [u64; 4],
    defenders: [u64; 4],
    king: [u64; 4],
    side_to_move: u8,
    repetitions: u8,
    plies_since_capture: u16,
    ply: u16,
    policy: Vec<(u16, f32)>,
    value: f32,
    root_value: f32,
    weight: f32,
}

impl From<SampleV1> for Sample {
    fn from(s: SampleV1) -> Sample {
        Sample {
            attackers: s.attackers,
            defenders: s.defenders,
            king: s.king,
            side_to_move: s.side_to_move,
            repetitions: s.repetitions,
            plies_since_capture: s.plies_since_capture,
            ply: s.ply,
            policy: s.policy,
            value: s.value,
            root_value: s.root_value,
            weight: s.weight,
            ending: None,
        }
    }
}

fn set_bit(mask: &mut [u64; 4], i: u32) {
    mask[(i / 64) as usize] |= 1 << (i % 64);
}

fn bits(mask: &[u64; 4]) -> impl Iterator<Item = u32> + '_ {
    (0..256u32).filter(move |&i| mask[(i / 64) as usize] >> (i % 64) & 1 == 1)
}

impl Sample {
    /// A sample of `position` with an empty target (filled in by self-play).
    #[must_use]
    pub fn of_position(position: &Position, repetitions: usize, plies_since_capture: usize, ply: usize) -> Sample {
        // The pieces are laid out as an ending's are.
        let Ending { attackers, defenders, king } = Ending::of_position(position);
        Sample {
            attackers,
            defenders,
            king,
            side_to_move: u8::from(position.side_to_move() == Side::Defenders),
            repetitions: u8::try_from(repetitions).unwrap_or(u8::MAX),
            plies_since_capture: u16::try_from(plies_since_capture).unwrap_or(u16::MAX),
            ply: u16::try_from(ply).unwrap_or(u16::MAX),
            policy: Vec::new(),
            value: 0.0,
            root_value: 0.0,
            weight: 1.0,
            ending: None,
        }
    }

    /// Sets the targets from how the game ended: the value from its winner (`None`: a draw), 1
    /// when the side to move won, -1 when it lost, 0 for a draw; and its last position.
    pub fn set_outcome(&mut self, winner: Option<Side>, last: &Position) {
        self.value = match winner {
            Some(w) if w == self.side() => 1.0,
            Some(_) => -1.0,
            None => 0.0,
        };
        self.ending = Some(Ending::of_position(last));
    }

    /// The side to move.
    #[must_use]
    pub fn side(&self) -> Side {
        if self.side_to_move == 0 { Side::Attackers } else { Side::Defenders }
    }

    /// The position, rebuilt for `variant`; `None` when the masks do not make a valid position
    /// of it (a shard of another variant that slipped through, or damage).
    #[must_use]
    pub fn position(&self, variant: &'static Variant) -> Option<Position> {
        let size = variant.size();
        let area = u32::from(size) * u32::from(size);
        let mut setup = Setup::empty(size, self.side());
        for (piece, mask) in
            [(Piece::Attacker, &self.attackers), (Piece::Defender, &self.defenders), (Piece::King, &self.king)]
        {
            for i in bits(mask) {
                if i >= area {
                    return None;
                }
                let sq = Square::from_index(i, size);
                if setup.get(sq).is_some() {
                    return None;
                }
                setup.set(sq, Some(piece));
            }
        }
        Position::from_setup(variant, &setup).ok()
    }
}

/// The header of a shard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// [`SHARD_FORMAT_VERSION`].
    pub format_version: u32,
    /// The variant's name.
    pub variant: String,
    /// `tafl_nn::encoding::POLICY_VERSION` of the policy indices (positions are stored as
    /// setups, so the input encoding of the net that trains on them does not matter).
    pub encoding_version: u32,
    /// Board side.
    pub board_size: u8,
    /// Samples in the payload.
    pub count: u64,
    /// Whole games whose samples are in the payload.
    pub games: u64,
    /// The model that played them.
    pub model: String,
    /// Seconds since the Unix epoch when written.
    pub created: u64,
    /// Payload length in bytes.
    pub payload_len: u64,
    /// FNV-1a 64 of the payload.
    pub checksum: u64,
}

impl ShardHeader {
    /// The header of a new shard of `games` games of `variant` played by `model`; [`write_shard`]
    /// fills in the version, count, length and checksum.
    #[must_use]
    pub fn new(variant: &Variant, games: u64, model: String) -> ShardHeader {
        ShardHeader {
            format_version: 0,
            variant: variant.name().to_string(),
            encoding_version: tafl_nn::POLICY_VERSION,
            board_size: variant.size(),
            count: 0,
            games,
            model,
            created: crate::writer::now() as u64,
            payload_len: 0,
            checksum: 0,
        }
    }
}

/// A file stem for the `n`-th shard a process writes: milliseconds, worker id
/// ([`crate::writer::worker_id`]) and `n`, so that stems sort by time and writers on one run
/// never collide.
#[must_use]
pub fn shard_stem(n: u32) -> String {
    format!("{:013}-{}-{n:04}", (crate::writer::now() * 1000.0) as u64, crate::writer::worker_id())
}

/// What a reader requires of a shard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardExpect {
    /// The variant's name.
    pub variant: String,
    /// The encoding version.
    pub encoding_version: u32,
}

/// Why a shard could not be written or read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a shard of this build, of another variant or encoding, or damaged.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// FNV-1a, 64 bits.
#[must_use]
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

use tafl_files::write_atomic;

/// Writes a shard of `samples` atomically.
///
/// # Errors
/// I/O or encoding errors, naming the file.
pub fn write_shard(path: &Path, header: ShardHeader, samples: &[Sample]) -> Result<(), ShardError> {
    let bytes = encode_shard(path, header, samples)?;
    write_atomic(path, &bytes).map_err(|source| ShardError::Io { path: path.to_path_buf(), source })
}

/// A shard of `samples` as the bytes of its file (`path` names it in errors).
///
/// # Errors
/// Encoding errors.
pub fn encode_shard(path: &Path, mut header: ShardHeader, samples: &[Sample]) -> Result<Vec<u8>, ShardError> {
    let payload = bincode::serialize(samples)
        .map_err(|e| ShardError::Invalid { path: path.to_path_buf(), reason: e.to_string() })?;
    header.count = samples.len() as u64;
    frame_payload(path, header, &payload)
}

/// A shard's bytes around an already encoded `payload`: `header` with the version, length and
/// checksum filled in (its sample count is the caller's). The fuzz target frames arbitrary
/// payloads with it, to reach the sample decoder past the checksum.
///
/// # Errors
/// Encoding errors.
pub fn frame_payload(path: &Path, mut header: ShardHeader, payload: &[u8]) -> Result<Vec<u8>, ShardError> {
    let invalid = |reason: String| ShardError::Invalid { path: path.to_path_buf(), reason };
    header.format_version = SHARD_FORMAT_VERSION;
    header.payload_len = payload.len() as u64;
    header.checksum = fnv1a(payload);
    let head = bincode::serialize(&header).map_err(|e| invalid(e.to_string()))?;
    let mut bytes = Vec::with_capacity(12 + head.len() + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&u32::try_from(head.len()).map_err(|e| invalid(e.to_string()))?.to_le_bytes());
    bytes.extend_from_slice(&head);
    bytes.extend_from_slice(payload);
    Ok(bytes)
}

fn split_header<'a>(path: &Path, bytes: &'a [u8]) -> Result<(ShardHeader, &'a [u8]), ShardError> {
    let invalid = |reason: String| ShardError::Invalid { path: path.to_path_buf(), reason };
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(invalid("not a sample shard (bad magic)".into()));
    }
    let mut len = [0u8; 4];
    len.copy_from_slice(&bytes[8..12]);
    let len = u32::from_le_bytes(len) as usize;
    let head = bytes.get(12..12 + len).ok_or_else(|| invalid("truncated header".into()))?;
    let header: ShardHeader = bincode::deserialize(head).map_err(|e| invalid(format!("bad header: {e}")))?;
    Ok((header, &bytes[12 + len..]))
}

fn check_header(path: &Path, header: &ShardHeader, expect: &ShardExpect) -> Result<(), ShardError> {
    let invalid = |reason: String| Err(ShardError::Invalid { path: path.to_path_buf(), reason });
    if !(1..=SHARD_FORMAT_VERSION).contains(&header.format_version) {
        return invalid(format!(
            "shard format {} (this build reads 1 to {SHARD_FORMAT_VERSION})",
            header.format_version
        ));
    }
    if header.variant != expect.variant {
        return invalid(format!("shard of variant `{}`, expected `{}`", header.variant, expect.variant));
    }
    if header.encoding_version != expect.encoding_version {
        return invalid(format!("encoding version {}, expected {}", header.encoding_version, expect.encoding_version));
    }
    Ok(())
}

/// Reads only the header of a shard and checks it (not the payload).
///
/// # Errors
/// I/O, a foreign or damaged header.
pub fn read_header(path: &Path, expect: &ShardExpect) -> Result<ShardHeader, ShardError> {
    use std::io::Read;
    let io = |source| ShardError::Io { path: path.to_path_buf(), source };
    let mut file = fs::File::open(path).map_err(io)?;
    let mut start = [0u8; 12];
    file.read_exact(&mut start)
        .map_err(|_| ShardError::Invalid { path: path.to_path_buf(), reason: "truncated".into() })?;
    let mut len = [0u8; 4];
    len.copy_from_slice(&start[8..12]);
    let len = (u32::from_le_bytes(len) as usize).min(1 << 20);
    let mut bytes = start.to_vec();
    bytes.resize(12 + len, 0);
    file.read_exact(&mut bytes[12..])
        .map_err(|_| ShardError::Invalid { path: path.to_path_buf(), reason: "truncated header".into() })?;
    let (header, _) = split_header(path, &bytes)?;
    check_header(path, &header, expect)?;
    let total = file.metadata().map_err(io)?.len();
    if total != 12 + len as u64 + header.payload_len {
        return Err(ShardError::Invalid {
            path: path.to_path_buf(),
            reason: format!("{total} bytes, header says {}", 12 + len as u64 + header.payload_len),
        });
    }
    Ok(header)
}

/// Reads a whole shard and checks everything: header, length, checksum, sample count.
///
/// # Errors
/// I/O, a foreign or damaged shard.
pub fn read_shard(path: &Path, expect: &ShardExpect) -> Result<(ShardHeader, Vec<Sample>), ShardError> {
    let bytes = fs::read(path).map_err(|source| ShardError::Io { path: path.to_path_buf(), source })?;
    decode_shard(path, &bytes, expect)
}

/// The header and samples of a shard's bytes, checked as [`read_shard`] checks a file (`path`
/// names it in errors).
///
/// # Errors
/// A foreign or damaged shard.
pub fn decode_shard(path: &Path, bytes: &[u8], expect: &ShardExpect) -> Result<(ShardHeader, Vec<Sample>), ShardError> {
    let invalid = |reason: String| ShardError::Invalid { path: path.to_path_buf(), reason };
    let (header, payload) = split_header(path, bytes)?;
    check_header(path, &header, expect)?;
    if payload.len() as u64 != header.payload_len {
        return Err(invalid(format!("payload of {} bytes, header says {}", payload.len(), header.payload_len)));
    }
    if fnv1a(payload) != header.checksum {
        return Err(invalid("checksum mismatch".into()));
    }
    let bad = |e: bincode::Error| invalid(format!("bad payload: {e}"));
    let samples: Vec<Sample> = if header.format_version == 1 {
        let old: Vec<SampleV1> = bincode::deserialize(payload).map_err(bad)?;
        old.into_iter().map(Sample::from).collect()
    } else {
        bincode::deserialize(payload).map_err(bad)?
    };
    if samples.len() as u64 != header.count {
        return Err(invalid(format!("{} samples, header says {}", samples.len(), header.count)));
    }
    Ok((header, samples))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tafl_rules::Game;

    /// What the tests' shards are read as: Brandubh, encoding 7.
    fn brandubh() -> ShardExpect {
        ShardExpect { variant: "brandubh".into(), encoding_version: 7 }
    }

    /// A Brandubh shard in a fresh folder of its own (`test` names it): two copies of the start
    /// position's sample with `policy`. Returns the folder, the shard and the sample.
    fn two_sample_shard(test: &str, policy: Vec<(u16, f32)>) -> (std::path::PathBuf, std::path::PathBuf, Sample) {
        let dir = std::env::temp_dir().join(format!("tafl-run-shard-{test}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let mut s = Sample::of_position(&Position::start(Variant::preset("brandubh").unwrap()), 1, 0, 0);
        s.policy = policy;
        let path = dir.join("shard.bin");
        write_shard(&path, header("brandubh"), &[s.clone(), s.clone()]).unwrap();
        (dir, path, s)
    }

    fn header(variant: &str) -> ShardHeader {
        ShardHeader {
            format_version: 0,
            variant: variant.into(),
            encoding_version: 7,
            board_size: 7,
            count: 0,
            games: 1,
            model: "m000000".into(),
            created: 0,
            payload_len: 0,
            checksum: 0,
        }
    }

    #[test]
    fn positions_round_trip_through_samples() {
        for name in ["brandubh", "copenhagen", "copenhagen-13"] {
            let variant = Variant::preset(name).unwrap();
            let mut game = Game::new(variant);
            for _ in 0..6 {
                let m = game.legal_moves()[3];
                game.play_unchecked(m);
            }
            let s = Sample::of_position(game.position(), 1, 2, 6);
            assert_eq!(s.position(variant).as_ref(), Some(game.position()), "{name}");
        }
    }

    #[test]
    fn shards_round_trip_and_damage_is_reported() {
        let (dir, path, s) = two_sample_shard("round-trip", vec![(3, 0.5), (9, 0.5)]);
        let expect = brandubh();
        let (h, samples) = read_shard(&path, &expect).unwrap();
        assert_eq!((h.count, samples.len()), (2, 2));
        assert_eq!(samples[1], s);
        assert_eq!(read_header(&path, &expect).unwrap(), h);

        let foreign = ShardExpect { variant: "tablut".into(), encoding_version: 7 };
        assert!(read_shard(&path, &foreign).unwrap_err().to_string().contains("tablut"));
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        fs::write(&path, &bytes).unwrap();
        let e = read_shard(&path, &expect).unwrap_err().to_string();
        assert!(e.contains("checksum") && e.contains("shard.bin"), "{e}");
        fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(read_shard(&path, &expect).is_err());
        assert!(read_header(&path, &expect).is_err());
        fs::write(&path, b"junk").unwrap();
        assert!(read_shard(&path, &expect).unwrap_err().to_string().contains("magic"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn endings_round_trip_and_say_who_holds_each_square() {
        let dir = std::env::temp_dir().join(format!("tafl-zero-shard-ending-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let variant = Variant::preset("brandubh").unwrap();
        let start = Position::start(variant);
        let mut s = Sample::of_position(&start, 1, 0, 0);
        s.set_outcome(Some(Side::Defenders), &start);
        assert_eq!(s.value, -1.0, "the attackers move first and lost");
        let ending = s.ending.unwrap();
        let size = variant.size();
        for sq in start.squares(Piece::Attacker) {
            assert_eq!(ending.owner(sq.index(size)), 1.0);
        }
        for sq in start.squares(Piece::Defender).chain(start.squares(Piece::King)) {
            assert_eq!(ending.owner(sq.index(size)), -1.0);
        }
        let king = start.squares(Piece::King).next().unwrap().index(size);
        assert_eq!(ending.king_square(), Some(king));
        assert_eq!(ending.owner(0), 0.0, "a corner is empty");
        assert_eq!(ending.owner(300), 0.0, "past the masks: nobody");
        let path = dir.join("ending.bin");
        write_shard(&path, header("brandubh"), std::slice::from_ref(&s)).unwrap();
        let expect = brandubh();
        assert_eq!(read_shard(&path, &expect).unwrap().1, [s]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn format_1_shards_are_read_without_endings_and_unknown_formats_refused() {
        let variant = Variant::preset("brandubh").unwrap();
        let mut s = Sample::of_position(&Position::start(variant), 2, 3, 4);
        s.policy = vec![(5, 1.0)];
        s.value = 1.0;
        s.root_value = 0.5;
        s.weight = 0.25;
        let old = SampleV1 {
            attackers: s.attackers,
            defenders: s.defenders,
            king: s.king,
            side_to_move: s.side_to_move,
            repetitions: s.repetitions,
            plies_since_capture: s.plies_since_capture,
            ply: s.ply,
            policy: s.policy.clone(),
            value: s.value,
            root_value: s.root_value,
            weight: s.weight,
        };
        let payload = bincode::serialize(&vec![old]).unwrap();
        let mut h = header("brandubh");
        h.count = 1;
        let path = Path::new("old.bin");
        let mut bytes = frame_payload(path, h, &payload).unwrap();
        // The header's first field is its format version.
        bytes[12..16].copy_from_slice(&1u32.to_le_bytes());
        let expect = brandubh();
        let (h, samples) = decode_shard(path, &bytes, &expect).unwrap();
        assert_eq!(h.format_version, 1);
        assert_eq!(samples, [s]);
        for version in [0u32, SHARD_FORMAT_VERSION + 1] {
            bytes[12..16].copy_from_slice(&version.to_le_bytes());
            let e = decode_shard(path, &bytes, &expect).unwrap_err().to_string();
            assert!(e.contains(&format!("shard format {version}")) && e.contains("old.bin"), "{e}");
        }
    }

    #[test]
    fn every_truncation_and_byte_flip_fails_cleanly() {
        // Shards come from other machines (shared self-play workers, object storage): every
        // prefix of a valid shard and every single damaged byte must give an error or, where
        // the byte is not checked (a timestamp), the same samples; never a panic.
        let (dir, path, s) = two_sample_shard("damage", vec![(3, 0.25), (9, 0.75)]);
        let good = fs::read(&path).unwrap();
        let expect = brandubh();
        let damaged = dir.join("damaged.bin");
        for len in 0..good.len() {
            fs::write(&damaged, &good[..len]).unwrap();
            assert!(read_shard(&damaged, &expect).is_err(), "a prefix of {len} bytes was accepted");
        }
        for i in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bytes = good.clone();
                bytes[i] ^= flip;
                fs::write(&damaged, &bytes).unwrap();
                if let Ok((_, samples)) = read_shard(&damaged, &expect) {
                    assert_eq!(samples, [s.clone(), s.clone()], "byte {i} ^ {flip:#x} changed the samples unnoticed");
                }
            }
        }
        let _ = fs::remove_dir_all(&dir);
    }
}
