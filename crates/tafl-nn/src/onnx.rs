//! Export of a [`TaflNet`] as an ONNX model, for inference outside this workspace
//! (onnxruntime, tract, a browser).
//!
//! The graph is traced by `burn-onnx` 0.22 (its export is experimental) from the forward pass
//! of the net after [`TaflNet::fold_batch_norms`], so it holds convolutions with biases and no
//! batch norms; weights are embedded. Opset 18, float32 throughout. burn-onnx lowers only some
//! operations: the policy head's reorder is traced as a gather instead of a permute, and the
//! global pooling uses the reductions it knows (see `model.rs`). The tests check the result
//! against [`TaflNet::forward`] in tract.
//!
//! # Input
//! - `planes`: float32 `[batch, input_planes, size, size]`, with a symbolic (dynamic)
//!   `batch` axis. The planes of [`crate::encoding`] (the version that has the net's
//!   `input_planes`, [`crate::encoding::version_of`]), laid out `[plane][rank][file]`,
//!   exactly what [`crate::encode_game`] writes for one position into that many planes.
//!
//! # Outputs
//! - `policy`: float32 `[batch, policy_len]` with `policy_len = size² · 4(size − 1)` (4840
//!   on 11x11): unmasked, unnormalised logits. The logit of a move is at
//!   [`crate::move_index`]; mask the illegal moves and take a softmax to get probabilities.
//! - `value`: float32 `[batch]`: the expected outcome for the side to move, in `[-1, 1]`
//!   (already through tanh; 1 is a win for the side to move).

use std::path::{Path, PathBuf};

use burn::tensor::Tensor;
use burn_onnx::export::{AxisSpec, ExportError, InputSpec, OnnxExporter};
use onnx_ir::{Message, ModelProto};

use crate::backend::device;
use crate::encoding::{ENCODING_VERSION, version_of};
use crate::model::{TaflNet, TaflNetConfig};

/// Name of the graph's input.
pub const INPUT_NAME: &str = "planes";
/// Name of the graph's policy output.
pub const POLICY_NAME: &str = "policy";
/// Name of the graph's value output.
pub const VALUE_NAME: &str = "value";
/// ONNX symbol of the dynamic batch axis.
pub const BATCH_SYMBOL: &str = "batch";

/// Why a net could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    /// burn-onnx could not trace or lower the forward pass.
    #[error("ONNX export of the net failed: {0}")]
    Export(#[from] ExportError),
    /// The exported protobuf did not decode or encode again.
    #[error("invalid ONNX protobuf from the exporter: {0}")]
    Protobuf(String),
    /// The traced graph has not one input and two outputs.
    #[error("the exported graph has {inputs} input(s) and {outputs} output(s), expected 1 and 2")]
    Boundary {
        /// Graph inputs found.
        inputs: usize,
        /// Graph outputs found.
        outputs: usize,
    },
    /// The file could not be written.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// What [`export`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnnxInfo {
    /// The file.
    pub path: PathBuf,
    /// Its length in bytes.
    pub bytes: u64,
    /// ONNX operator set of the graph.
    pub opset: i64,
    /// Shape of one position's `planes`, batch axis first (the file's batch axis is symbolic).
    pub input_shape: [usize; 4],
    /// Length of one row of `policy`.
    pub policy_len: usize,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> OnnxError + '_ {
    move |source| OnnxError::Io { path: path.to_path_buf(), source }
}

/// Exports `net` (of shape `config`) to the ONNX file `path`, replacing it atomically: the
/// model is written to a temporary file beside it and renamed into place.
///
/// # Errors
/// [`OnnxError::Export`] when the forward pass does not trace, [`OnnxError::Io`] when the file
/// cannot be written (a missing directory, for one); then nothing is left at `path`.
pub fn export(net: &TaflNet, config: &TaflNetConfig, path: &Path) -> Result<OnnxInfo, OnnxError> {
    let bytes = to_bytes(net, config)?;
    tafl_files::write_atomic(path, &bytes).map_err(io_error(path))?;
    let size = config.board_size;
    Ok(OnnxInfo {
        path: path.to_path_buf(),
        bytes: bytes.len() as u64,
        opset: OnnxExporter::new().selected_opset().version(),
        input_shape: [1, config.input_planes, size, size],
        policy_len: config.policy_len(),
    })
}

/// The ONNX protobuf of `net`, with the named input and outputs of the module docs.
///
/// # Errors
/// [`OnnxError::Export`], [`OnnxError::Protobuf`] or [`OnnxError::Boundary`].
pub fn to_bytes(net: &TaflNet, config: &TaflNetConfig) -> Result<Vec<u8>, OnnxError> {
    // Folded: the traced graph then has plain convolutions instead of the arithmetic that
    // folds the running statistics on every call. Folding twice is harmless.
    let net = net.clone().fold_batch_norms();
    let size = config.board_size;
    let d = device();
    // Two traces with different batch sizes let burn-onnx tell the batch axis from the
    // constants. Not 1: a batch of one traces one operation fewer than larger batches, and
    // the two traces must match operation for operation.
    let sample = Tensor::<4>::zeros([2, config.input_planes, size, size], &d);
    let validation = Tensor::<4>::zeros([3, config.input_planes, size, size], &d);
    let specs =
        [InputSpec::new([AxisSpec::dynamic(BATCH_SYMBOL), AxisSpec::Static, AxisSpec::Static, AxisSpec::Static])];
    let model = OnnxExporter::new().export_dynamic(&net, sample, validation, &specs, |net: &TaflNet, planes| {
        let out = net.forward_for_export(planes);
        (out.policy_logits, out.value)
    })?;
    name_boundaries(model.as_bytes(), config)
}

/// Renames the traced graph's input and outputs (burn-onnx calls them `tensor_<id>`) to
/// [`INPUT_NAME`], [`POLICY_NAME`] and [`VALUE_NAME`], and says what made the model.
fn name_boundaries(bytes: &[u8], config: &TaflNetConfig) -> Result<Vec<u8>, OnnxError> {
    let mut model = ModelProto::parse_from_bytes(bytes).map_err(|e| OnnxError::Protobuf(e.to_string()))?;
    let graph = model.graph.mut_or_insert_default();
    let (inputs, outputs) = (graph.input.len(), graph.output.len());
    if inputs != 1 || outputs != 2 {
        return Err(OnnxError::Boundary { inputs, outputs });
    }
    let renames = [
        (graph.input[0].name.clone(), INPUT_NAME),
        (graph.output[0].name.clone(), POLICY_NAME),
        (graph.output[1].name.clone(), VALUE_NAME),
    ];
    let rename = |name: &mut String| {
        if let Some((_, new)) = renames.iter().find(|(old, _)| old == name) {
            *name = (*new).to_string();
        }
    };
    graph.input.iter_mut().chain(&mut graph.output).chain(&mut graph.value_info).for_each(|v| rename(&mut v.name));
    for node in &mut graph.node {
        node.input.iter_mut().chain(node.output.iter_mut()).for_each(&rename);
    }
    graph.name = format!("tafl_{}", config.name());
    model.producer_name = "tafl".into();
    model.doc_string = format!(
        "TaflNet {} on {size}x{size}, input encoding version {version}: planes \
         [batch, {planes}, {size}, {size}] -> policy logits [batch, {policy}], value [batch] in [-1, 1] \
         for the side to move",
        config.name(),
        size = config.board_size,
        planes = config.input_planes,
        version = version_of(config.input_planes).unwrap_or(ENCODING_VERSION),
        policy = config.policy_len(),
    );
    model.write_to_bytes().map_err(|e| OnnxError::Protobuf(e.to_string()))
}
