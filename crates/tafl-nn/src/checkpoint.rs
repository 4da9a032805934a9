//! Checkpoint directories: weights, net config, metadata, optionally optimiser state.
//!
//! ```text
//! <dir>/weights.bpk      Burn's burnpack format (parameters, batch-norm statistics, parameter ids)
//! <dir>/config.json      the TaflNetConfig
//! <dir>/meta.json        CheckpointMeta: format version, variant, encoding version, digests, free fields
//! <dir>/optimizer.bpk    optional optimiser state, to resume training exactly
//! ```
//!
//! A checkpoint is written into a temporary directory beside the target and renamed into
//! place, so a reader sees either no checkpoint or a complete one. `meta.json` records the
//! length and FNV-1a digest of each binary file, so a truncated or damaged file is reported
//! as such instead of as a confusing decoding error.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::{ModuleOptimizer, OptimizerRecord};
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use serde::{Deserialize, Serialize};

use crate::backend::Device;
use crate::model::{TaflNet, TaflNetConfig};

/// Version of the checkpoint directory layout this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

const WEIGHTS: &str = "weights.bpk";
const CONFIG: &str = "config.json";
const META: &str = "meta.json";
const OPTIMIZER: &str = "optimizer.bpk";

/// Why a checkpoint could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The target directory already exists; checkpoints are never overwritten.
    #[error("checkpoint {0} already exists")]
    AlreadyExists(PathBuf),
    /// A file could not be read or written.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// `config.json` or `meta.json` is not valid.
    #[error("invalid JSON in {path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: serde_json::Error,
    },
    /// The checkpoint was written in a layout this build does not read.
    #[error("checkpoint format version {found} is not supported (this build reads {FORMAT_VERSION})")]
    UnsupportedFormat {
        /// Version found in `meta.json`.
        found: u32,
    },
    /// The checkpoint belongs to another game variant.
    #[error("checkpoint is for variant `{found}`, expected `{expected}`")]
    WrongVariant {
        /// The variant asked for.
        expected: String,
        /// The variant in `meta.json`.
        found: String,
    },
    /// The checkpoint was trained on another input encoding.
    #[error("checkpoint uses input encoding version {found}; this build reads versions 1 to {expected}")]
    WrongEncoding {
        /// The newest encoding version the caller reads.
        expected: u32,
        /// The encoding version in `meta.json`.
        found: u32,
    },
    /// A binary file is shorter than `meta.json` says.
    #[error("{path} is truncated: {found} bytes, expected {expected}")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Length recorded in `meta.json`.
        expected: u64,
        /// Length on disk.
        found: u64,
    },
    /// A binary file does not match the length or digest recorded in `meta.json`.
    #[error("{path} is corrupt: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What does not match.
        reason: String,
    },
    /// Burn could not encode, decode or apply the weights (for example a config mismatch).
    #[error("weights in {path} do not load: {message}")]
    Weights {
        /// The file.
        path: PathBuf,
        /// Burn's message.
        message: String,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io { path: path.to_path_buf(), source }
}

fn read(path: &Path) -> Result<Vec<u8>, CheckpointError> {
    fs::read(path).map_err(io_error(path))
}

/// Length and digest of one binary file of a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// Length in bytes.
    pub len: u64,
    /// 64-bit FNV-1a hash of the contents, as 16 hex digits.
    #[serde(with = "hex_u64")]
    pub fnv1a: u64,
}

impl FileDigest {
    /// Digest of `bytes`.
    #[must_use]
    pub fn of(bytes: &[u8]) -> Self {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Self { len: bytes.len() as u64, fnv1a: hash }
    }
}

mod hex_u64 {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let text = String::deserialize(d)?;
        u64::from_str_radix(&text, 16).map_err(D::Error::custom)
    }
}

/// Contents of `meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// Layout version; [`save`] sets it to [`FORMAT_VERSION`].
    pub format_version: u32,
    /// Name of the game variant the net plays (e.g. `copenhagen`).
    pub variant: String,
    /// Version of the input encoding and policy layout the net was trained with.
    pub encoding_version: u32,
    /// Digest of `weights.bpk`; filled in by [`save`].
    #[serde(default)]
    pub weights: Option<FileDigest>,
    /// Digest of `optimizer.bpk` when there is one; filled in by [`save`].
    #[serde(default)]
    pub optimizer: Option<FileDigest>,
    /// Digest of `config.json`; filled in by [`save`] (checkpoints written before it have none,
    /// and their config is only checked against the size of the weights).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<FileDigest>,
    /// Free fields: parent model, samples seen, creation time, anything a caller wants.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl CheckpointMeta {
    /// Metadata for a net of `variant` trained on encoding `encoding_version`.
    #[must_use]
    pub fn new(variant: impl Into<String>, encoding_version: u32) -> Self {
        Self {
            format_version: FORMAT_VERSION,
            variant: variant.into(),
            encoding_version,
            weights: None,
            optimizer: None,
            config: None,
            extra: BTreeMap::new(),
        }
    }

    /// Adds a free field.
    #[must_use]
    pub fn with_field(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }
}

/// What a loader requires of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The variant the caller plays.
    pub variant: String,
    /// The newest input encoding version the caller produces; it produces every older one too.
    pub encoding_version: u32,
}

/// A loaded checkpoint.
#[derive(Debug)]
pub struct Checkpoint {
    /// The network, on the device it was loaded to, in evaluation mode.
    pub model: TaflNet,
    /// Its config.
    pub config: TaflNetConfig,
    /// Its metadata.
    pub meta: CheckpointMeta,
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let mut file = fs::File::create(path).map_err(io_error(path))?;
    file.write_all(bytes).map_err(io_error(path))?;
    file.sync_all().map_err(io_error(path))
}

fn json_bytes<T: Serialize>(value: &T, path: &Path) -> Result<Vec<u8>, CheckpointError> {
    serde_json::to_vec_pretty(value).map_err(|source| CheckpointError::Json { path: path.to_path_buf(), source })
}

fn weights_error(path: &Path) -> impl FnOnce(burn::store::RecordError) -> CheckpointError + '_ {
    move |e| CheckpointError::Weights { path: path.to_path_buf(), message: e.to_string() }
}

/// Writes a checkpoint into the new directory `dir`, atomically.
///
/// `meta.format_version` and the digests are filled in here. Pass the optimiser to be able
/// to resume training with its state.
///
/// # Errors
/// [`CheckpointError::AlreadyExists`] if `dir` exists; I/O and encoding errors otherwise. On
/// error nothing is left at `dir` (a temporary directory may remain beside it).
pub fn save(
    dir: &Path,
    model: &TaflNet,
    config: &TaflNetConfig,
    meta: &CheckpointMeta,
    optimizer: Option<&ModuleOptimizer>,
) -> Result<(), CheckpointError> {
    if dir.exists() {
        return Err(CheckpointError::AlreadyExists(dir.to_path_buf()));
    }
    let temp = tafl_files::temp_sibling(dir, "checkpoint");
    fs::create_dir_all(&temp).map_err(io_error(&temp))?;
    let result = write_files(&temp, model, config, meta, optimizer).and_then(|()| {
        fs::rename(&temp, dir).map_err(|e| match e.kind() {
            // Another process saved `dir` between the check above and the rename (two workers
            // starting a new run at once): the same outcome as finding it there.
            std::io::ErrorKind::DirectoryNotEmpty | std::io::ErrorKind::AlreadyExists => {
                CheckpointError::AlreadyExists(dir.to_path_buf())
            }
            _ => io_error(dir)(e),
        })
    });
    if result.is_err() {
        // Best effort: the error that matters is the one being returned.
        let _ = fs::remove_dir_all(&temp);
    }
    result?;
    sync_parent(dir);
    Ok(())
}

/// Makes the rename itself durable. Best effort: not every platform can open a directory.
fn sync_parent(dir: &Path) {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        let _ = fs::File::open(parent).and_then(|d| d.sync_all());
    }
}

fn write_files(
    dir: &Path,
    model: &TaflNet,
    config: &TaflNetConfig,
    meta: &CheckpointMeta,
    optimizer: Option<&ModuleOptimizer>,
) -> Result<(), CheckpointError> {
    let mut meta = meta.clone();
    meta.format_version = FORMAT_VERSION;
    let path = dir.join(WEIGHTS);
    let weights = model.clone().into_record().into_bytes().map_err(weights_error(&path))?;
    write_synced(&path, &weights)?;
    meta.weights = Some(FileDigest::of(&weights));
    meta.optimizer = None;
    if let Some(optim) = optimizer {
        let path = dir.join(OPTIMIZER);
        let state = optim.to_record().into_bytes().map_err(weights_error(&path))?;
        write_synced(&path, &state)?;
        meta.optimizer = Some(FileDigest::of(&state));
    }
    let path = dir.join(CONFIG);
    let config = json_bytes(config, &path)?;
    write_synced(&path, &config)?;
    meta.config = Some(FileDigest::of(&config));
    let path = dir.join(META);
    write_synced(&path, &json_bytes(&meta, &path)?)
}

fn parse_json<T: for<'de> Deserialize<'de>>(path: &Path, bytes: &[u8]) -> Result<T, CheckpointError> {
    serde_json::from_slice(bytes).map_err(|source| CheckpointError::Json { path: path.to_path_buf(), source })
}

/// Checks the bytes of a binary file against its recorded digest.
fn check_digest(path: &Path, bytes: Vec<u8>, digest: Option<FileDigest>) -> Result<Vec<u8>, CheckpointError> {
    let corrupt = |reason: &str| CheckpointError::Corrupt { path: path.to_path_buf(), reason: reason.into() };
    let expected = digest.ok_or_else(|| corrupt("meta.json records no digest for it"))?;
    let found = FileDigest::of(&bytes);
    if found.len < expected.len {
        return Err(CheckpointError::Truncated { path: path.to_path_buf(), expected: expected.len, found: found.len });
    }
    if found.len > expected.len {
        return Err(corrupt(&format!("{} bytes, expected {}", found.len, expected.len)));
    }
    if found.fnv1a != expected.fnv1a {
        return Err(corrupt("checksum mismatch"));
    }
    Ok(bytes)
}

/// Reads and checks `meta.json` of the checkpoint in `dir`.
///
/// # Errors
/// I/O, JSON, format-version, variant and encoding-version errors.
pub fn read_meta(dir: &Path, expected: &Expected) -> Result<CheckpointMeta, CheckpointError> {
    let path = dir.join(META);
    decode_meta(&path, &read(&path)?, expected)
}

fn decode_meta(path: &Path, bytes: &[u8], expected: &Expected) -> Result<CheckpointMeta, CheckpointError> {
    let meta: CheckpointMeta = parse_json(path, bytes)?;
    if meta.format_version != FORMAT_VERSION {
        return Err(CheckpointError::UnsupportedFormat { found: meta.format_version });
    }
    if meta.variant != expected.variant {
        return Err(CheckpointError::WrongVariant { expected: expected.variant.clone(), found: meta.variant });
    }
    if meta.encoding_version == 0 || meta.encoding_version > expected.encoding_version {
        return Err(CheckpointError::WrongEncoding {
            expected: expected.encoding_version,
            found: meta.encoding_version,
        });
    }
    Ok(meta)
}

/// Refuses a config that cannot describe the weights beside it, before a net is built from it:
/// a damaged or hostile `config.json` (it carries no checksum) must give an error, not a net of
/// a million channels.
fn check_config(config: &TaflNetConfig, weights_len: usize, path: &Path) -> Result<(), CheckpointError> {
    let c = config;
    let in_range = (3..=usize::from(tafl_rules::MAX_SIZE)).contains(&c.board_size)
        && (1..=64).contains(&c.input_planes)
        && c.blocks <= 256
        && [c.channels, c.policy_channels, c.value_channels].iter().all(|n| (1..=1024).contains(n))
        && (1..=4096).contains(&c.value_hidden)
        // Heads by side read who is to move from its plane.
        && (!c.has_heads_by_side() || c.input_planes > crate::encoding::DEFENDERS_TO_MOVE);
    // The stem and the trunk's 3x3 convolutions alone hold this many weights, each at least
    // two bytes in any record precision (in range, the product stays far below usize::MAX).
    let trunk = || 9 * c.channels * (c.input_planes + 2 * c.blocks * c.channels);
    if in_range && trunk() * 2 <= weights_len {
        return Ok(());
    }
    Err(CheckpointError::Corrupt {
        path: path.to_path_buf(),
        reason: format!(
            "it describes a net ({} on {}x{}) that {weights_len} bytes of weights cannot hold",
            c.name(),
            c.board_size,
            c.board_size
        ),
    })
}

/// Loads the checkpoint in `dir` onto `device`, in evaluation mode.
///
/// # Errors
/// Any [`CheckpointError`]: missing or unreadable files, a checkpoint for another variant or
/// encoding, truncated or corrupt weights, weights that do not fit the config.
pub fn load(dir: &Path, expected: &Expected, device: &Device) -> Result<Checkpoint, CheckpointError> {
    // The meta first: a foreign checkpoint is named as such before its other files are read.
    let meta = read_meta(dir, expected)?;
    build(dir, meta, read(&dir.join(CONFIG))?, read(&dir.join(WEIGHTS))?, device)
}

/// The bytes of the files a checkpoint's net is built from.
#[derive(Debug, Clone, Default)]
pub struct CheckpointFiles {
    /// `meta.json`.
    pub meta: Vec<u8>,
    /// `config.json`.
    pub config: Vec<u8>,
    /// `weights.bpk`.
    pub weights: Vec<u8>,
}

/// The checkpoint of `files` on `device`, checked as [`load`] checks a directory (`dir` names
/// the files in errors). Every byte may be hostile: bad bytes give an error, never a panic.
///
/// # Errors
/// As [`load`], less the I/O errors.
pub fn decode(
    dir: &Path,
    files: CheckpointFiles,
    expected: &Expected,
    device: &Device,
) -> Result<Checkpoint, CheckpointError> {
    let meta = decode_meta(&dir.join(META), &files.meta, expected)?;
    build(dir, meta, files.config, files.weights, device)
}

/// The net of a checked `meta` and the bytes of its config and weights.
fn build(
    dir: &Path,
    meta: CheckpointMeta,
    config: Vec<u8>,
    weights: Vec<u8>,
    device: &Device,
) -> Result<Checkpoint, CheckpointError> {
    let config_path = dir.join(CONFIG);
    let config_bytes = match meta.config {
        Some(digest) => check_digest(&config_path, config, Some(digest))?,
        None => config,
    };
    let config: TaflNetConfig = parse_json(&config_path, &config_bytes)?;
    let path = dir.join(WEIGHTS);
    let bytes = check_digest(&path, weights, meta.weights)?;
    check_config(&config, bytes.len(), &config_path)?;
    // Burn checks each tensor's shape but takes its dtype from the record, and a float parameter
    // given integer data panics at the first use: cast every tensor to the module's dtype.
    let record =
        ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes)).map_err(weights_error(&path))?.cast_to_module_dtype();
    let model = config.init(device).try_load_record(record).map_err(weights_error(&path))?;
    Ok(Checkpoint { model: model.valid(), config, meta })
}

/// Loads the optimiser state saved in `dir` into `optim` (built from the same
/// [`crate::train::TrainConfig`]); `Ok(None)` when the checkpoint has none.
///
/// The state is keyed by parameter ids, which `weights.bpk` preserves: resume with the model
/// from [`load`] of the same directory.
///
/// # Errors
/// I/O errors, or a truncated, corrupt or undecodable `optimizer.bpk`.
pub fn load_optimizer(
    dir: &Path,
    meta: &CheckpointMeta,
    optim: ModuleOptimizer,
) -> Result<Option<ModuleOptimizer>, CheckpointError> {
    if meta.optimizer.is_none() {
        return Ok(None);
    }
    let path = dir.join(OPTIMIZER);
    let bytes = check_digest(&path, read(&path)?, meta.optimizer)?;
    let record = OptimizerRecord::from_bytes(Bytes::from_bytes_vec(bytes)).map_err(weights_error(&path))?;
    Ok(Some(optim.load_record(record)))
}
