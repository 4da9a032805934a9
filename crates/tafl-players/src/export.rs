//! `tafl export`: a player bundle ([`crate::bundle`]) of a run's model.
//!
//! [`export`] writes a bundle from a run directory, into a temporary directory beside the
//! target that is renamed into place.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tafl_files::temp_sibling;
use tafl_nn::checkpoint::{self, CheckpointMeta, Expected};
use tafl_run::rundir::{ModelInfo, RunDir};
use tafl_run::storage::Location;

use crate::PlayersError;
use crate::bundle::{
    BUNDLE_FORMAT, BundleManifest, BundleNet, BundleSearch, BundleSource, MANIFEST, ONNX, WEIGHTS, format_duration,
};

/// The checkpoint files a bundle copies (the optimiser state is left out).
const CHECKPOINT_FILES: [&str; 2] = ["weights.bpk", "config.json"];

/// What [`export`] writes besides the weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportOptions {
    /// `best` (or `None`) for the run's best model, else a model id (`m000012`).
    pub model: Option<String>,
    /// Visits per move.
    pub visits: u32,
    /// Longest time per move; `None`: visits only.
    pub time_per_move: Option<Duration>,
    /// Gumbel root search.
    pub gumbel: bool,
    /// Leaves per network call.
    pub batch: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        // PUCT, one leaf per net call: the stronger player at 200 visits (see docs/training.md).
        ExportOptions { model: None, visits: 200, time_per_move: Some(Duration::from_secs(1)), gumbel: false, batch: 1 }
    }
}

/// What [`export`] wrote.
#[derive(Clone, Debug)]
pub struct ExportReport {
    /// The bundle directory.
    pub out: PathBuf,
    /// The model exported.
    pub model: String,
    /// Its `player.toml`.
    pub manifest: BundleManifest,
}

/// Writes a player bundle of a model of the run at `run_dir` (a directory, `file://` or
/// `s3://` URL, as [`RunDir::open`] reads it) into the new directory `out`.
///
/// # Errors
/// `out` exists; `run_dir` is not a run or has no such model; the checkpoint does not read or
/// load; the run's storage fails; I/O errors. On error nothing is left at `out`.
pub fn export(run_dir: &Path, out: &Path, options: &ExportOptions) -> Result<ExportReport, PlayersError> {
    if out.exists() || out.symlink_metadata().is_ok() {
        return Err(PlayersError::Exists { path: out.to_path_buf() });
    }
    // Opening a local run makes its folders: a directory that holds none is not made one.
    if let Ok(Location::Local(path)) = Location::parse(&run_dir.to_string_lossy())
        && !RunDir::holds_models(&path)
    {
        return Err(PlayersError::NotARun { path: run_dir.to_path_buf() });
    }
    let run = RunDir::open(run_dir)?;
    let models = run.models();
    let no_model = |model: Option<&str>| PlayersError::NoModel {
        run: run.location(),
        model: model.map(str::to_string),
        models: models.clone(),
    };
    let id = match options.model.as_deref() {
        None | Some("best") => run.best_model().ok_or_else(|| no_model(None))?,
        Some(id) if models.iter().any(|m| m == id) => id.to_string(),
        Some(id) => return Err(no_model(Some(id))),
    };
    // A run in object storage: the model into the local cache first.
    if !run.fetch_model(&id)? {
        return Err(PlayersError::Incomplete { run: run.location(), model: id });
    }
    let model_dir = run.model_dir(&id);
    let meta_path = model_dir.join("meta.json");
    let text = fs::read_to_string(&meta_path).map_err(|e| PlayersError::io(&meta_path, e))?;
    let meta: CheckpointMeta = serde_json::from_str(&text).map_err(|e| PlayersError::bad_file(&meta_path, e))?;
    if tafl_nn::encoding::planes_of(meta.encoding_version).is_none() {
        return Err(PlayersError::bad_file(
            &meta_path,
            format!(
                "encoding_version {} but this build plays encodings 1 to {}; the bundle would not load",
                meta.encoding_version,
                tafl_nn::ENCODING_VERSION
            ),
        ));
    }
    let expected = Expected { variant: meta.variant.clone(), encoding_version: meta.encoding_version };
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| PlayersError::io(parent, e))?;
    }
    let temp = temp_sibling(out, "bundle");
    fs::create_dir_all(temp.join(WEIGHTS)).map_err(|e| PlayersError::io(&temp, e))?;
    let result = write_bundle(&temp, &run, &id, &meta, &expected, options).and_then(|manifest| {
        if out.exists() {
            return Err(PlayersError::Exists { path: out.to_path_buf() });
        }
        fs::rename(&temp, out).map_err(|e| PlayersError::io(out, e))?;
        Ok(manifest)
    });
    match result {
        Ok(manifest) => Ok(ExportReport { out: out.to_path_buf(), model: id, manifest }),
        Err(e) => {
            let _ = fs::remove_dir_all(&temp);
            Err(e)
        }
    }
}

fn write_bundle(
    temp: &Path,
    run: &RunDir,
    id: &str,
    meta: &CheckpointMeta,
    expected: &Expected,
    options: &ExportOptions,
) -> Result<BundleManifest, PlayersError> {
    let model_dir = run.model_dir(id);
    let weights = temp.join(WEIGHTS);
    for name in CHECKPOINT_FILES {
        let from = model_dir.join(name);
        fs::copy(&from, weights.join(name)).map_err(|e| PlayersError::io(&from, e))?;
    }
    let mut meta = meta.clone();
    meta.optimizer = None;
    let meta_path = weights.join("meta.json");
    let text = serde_json::to_string_pretty(&meta).map_err(|e| PlayersError::bad_file(&meta_path, e))?;
    fs::write(&meta_path, text).map_err(|e| PlayersError::io(&meta_path, e))?;
    // Load the copy: the weights match their digest and their config.
    let loaded = checkpoint::load(&weights, expected, &tafl_nn::device())
        .map_err(|source| PlayersError::Checkpoint { id: id.to_string(), source })?;
    let config = loaded.config;
    tafl_nn::onnx::export(&loaded.model, &config, &temp.join(ONNX))
        .map_err(|source| PlayersError::Onnx { id: id.to_string(), source })?;
    let info = ModelInfo::from_meta(&meta);
    let manifest = BundleManifest {
        format_version: BUNDLE_FORMAT,
        variant: meta.variant.clone(),
        encoding_version: meta.encoding_version,
        net: BundleNet {
            name: config.name(),
            board_size: config.board_size,
            input_planes: config.input_planes,
            blocks: config.blocks,
            channels: config.channels,
        },
        search: BundleSearch {
            visits: options.visits,
            time_per_move: options.time_per_move.map(format_duration),
            gumbel: options.gumbel,
            batch: options.batch.max(1),
            guard: 0,
        },
        source: Some(BundleSource {
            run: run.name().to_string(),
            model: id.to_string(),
            iteration: info.iteration,
            steps_total: info.steps_total,
            exported: tafl_run::writer::now(),
        }),
    };
    let body = toml::to_string_pretty(&manifest).map_err(|e| PlayersError::bad_file(&temp.join(MANIFEST), e))?;
    let text = format!(
        "# A tafl player bundle, written by `tafl export`. Run it with `tafl engine --player <this directory>`.\n\n{body}"
    );
    let path = temp.join(MANIFEST);
    fs::write(&path, text).map_err(|e| PlayersError::io(&path, e))?;
    let path = temp.join("README.md");
    fs::write(&path, readme(&manifest, id, config.policy_len())).map_err(|e| PlayersError::io(&path, e))?;
    Ok(manifest)
}

fn readme(m: &BundleManifest, id: &str, policy_len: usize) -> String {
    format!("{}\n{}", readme_tafl(m, id), readme_onnx(m, policy_len))
}

fn readme_tafl(m: &BundleManifest, id: &str) -> String {
    let time = m
        .search
        .time_per_move
        .as_deref()
        .map_or_else(String::new, |t| format!(", at most {t} per move unless the caller sets a clock"));
    format!(
        "# tafl player bundle: {variant}, {net}\n\n\
         Model `{id}` ({net}, encoding version {enc}), searching {visits} visits per move{time} \
         ({search} search). Settings are in `player.toml`; the checkpoint is in `weights/`.\n\n\
         Run it with the `tafl` command, passing this directory as the player:\n\n\
         ```sh\n\
         tafl engine --player DIR --protocol htp{v}    # serve it over HTP (hnefatafl.org, GUIs)\n\
         tafl play --player DIR{v}                     # play against it in the terminal\n\
         tafl analyse --player DIR{v} 'FEN'            # evaluate a position\n\
         tafl arena --a DIR --b alphabeta:depth=4{v}   # measure it\n\
         ```\n\n\
         where `DIR` is the path of this directory. Settings can be overridden like the keys of an\n\
         `mcts` spec: `--player DIR:visits=800,time=2s`.\n",
        variant = m.variant,
        net = m.net.name,
        enc = m.encoding_version,
        visits = m.search.visits,
        search = if m.search.gumbel { "Gumbel" } else { "PUCT" },
        v = if m.variant == "copenhagen" { String::new() } else { format!(" --variant {}", m.variant) },
    )
}

/// The README section on `net.onnx`: what goes in and out, and how to run it without tafl.
fn readme_onnx(m: &BundleManifest, policy_len: usize) -> String {
    let (size, planes) = (m.net.board_size, m.net.input_planes);
    format!(
        "## net.onnx\n\n\
         The net alone, as an ONNX model (opset 18, float32, batch norms folded), for use without\n\
         `tafl`. It does not search: it scores positions.\n\n\
         - input `planes`: `[batch, {planes}, {size}, {size}]`, the input planes of tafl's encoding\n  \
           version {enc}, laid out `[plane][rank][file]` (documented in tafl-nn's `encoding.rs`:\n  \
           pieces, side to move, throne, corners, repetitions, plies since the last capture, ones).\n  \
           `batch` is dynamic.\n\
         - output `policy`: `[batch, {policy_len}]` move logits, unmasked. The move from square\n  \
           `rank * {size} + file`, in direction `dir` (0 north, 1 east, 2 south, 3 west), `dist`\n  \
           squares far is at `square * {per_square} + dir * {dist_max} + dist - 1`. Mask the illegal\n  \
           moves, then take a softmax.\n\
         - output `value`: `[batch]`, the expected result for the side to move, in [-1, 1].\n\n\
         With onnxruntime (`pip install onnxruntime numpy`):\n\n\
         ```python\n\
         import numpy as np, onnxruntime as ort\n\
         net = ort.InferenceSession(\"net.onnx\")\n\
         planes = np.zeros((1, {planes}, {size}, {size}), dtype=np.float32)  # fill with encoded positions\n\
         policy, value = net.run([\"policy\", \"value\"], {{\"planes\": planes}})\n\
         print(policy.shape, value)\n\
         ```\n",
        enc = m.encoding_version,
        per_square = 4 * size.saturating_sub(1),
        dist_max = size.saturating_sub(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ZeroFactory;
    use crate::bundle::{is_bundle, read_manifest};
    use tafl_arena::{PlayerFactory, PlayerSpec};
    use tafl_nn::TaflNetConfig;
    use tafl_rules::{Game, Variant};
    use tafl_search::Limits;

    fn run_with_one_model(root: &Path) -> &'static Variant {
        let _ = fs::remove_dir_all(root);
        let variant = Variant::preset("copenhagen").unwrap();
        let run = RunDir::open(root).unwrap();
        let config = TaflNetConfig::new(usize::from(variant.size()), tafl_nn::INPUT_PLANES, 1, 16);
        let net = config.init(&tafl_nn::device());
        let info = ModelInfo { id: "m000000".into(), net: config.name(), ..ModelInfo::default() };
        checkpoint::save(
            &run.model_dir("m000000"),
            &net,
            &config,
            &info.into_meta(variant.name(), config.input_planes),
            None,
        )
        .unwrap();
        run.set_best("m000000").unwrap();
        variant
    }

    #[test]
    fn export_writes_a_bundle_that_plays() {
        let base = std::env::temp_dir().join(format!("tafl-zero-export-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let variant = run_with_one_model(&base.join("run"));
        let out = base.join("bundles").join("p1");
        let options =
            ExportOptions { visits: 8, time_per_move: Some(Duration::from_millis(1500)), ..ExportOptions::default() };
        let report = export(&base.join("run"), &out, &options).unwrap();
        assert_eq!(report.model, "m000000");
        for f in
            ["player.toml", "README.md", "net.onnx", "weights/weights.bpk", "weights/config.json", "weights/meta.json"]
        {
            assert!(out.join(f).is_file(), "{f}");
        }
        assert!(fs::metadata(out.join(ONNX)).unwrap().len() > 0);
        let readme = fs::read_to_string(out.join("README.md")).unwrap();
        assert!(readme.contains("net.onnx") && readme.contains("[batch, 4840]"), "{readme}");
        assert!(!out.join("weights/optimizer.bpk").exists());
        let manifest = read_manifest(&out).unwrap();
        assert_eq!(manifest, report.manifest);
        assert_eq!(manifest.variant, "copenhagen");
        assert_eq!(manifest.net.name, "b1c16");
        assert_eq!(manifest.search.time_per_move.as_deref(), Some("1500ms"));
        assert_eq!(manifest.search.time().unwrap(), Some(Duration::from_millis(1500)));
        // The run by its name and the model by its id: not where the run lay.
        let source = manifest.source.as_ref().unwrap();
        assert_eq!((source.run.as_str(), source.model.as_str()), ("run", "m000000"));
        let text = fs::read_to_string(out.join(MANIFEST)).unwrap();
        assert!(
            !text.contains(&*base.to_string_lossy()) && !text.contains(&*std::env::temp_dir().to_string_lossy()),
            "{text}"
        );
        assert!(is_bundle(&out));
        // No temporary directory is left beside the bundle.
        assert_eq!(fs::read_dir(base.join("bundles")).unwrap().count(), 1);

        let factory = ZeroFactory::new(variant);
        let game = Game::new(variant);
        let spec: PlayerSpec = out.display().to_string().parse().unwrap();
        let mut player = factory.build(&spec, 0).unwrap();
        let choice = player.choose(&game, &Limits::default()).unwrap();
        assert!(game.legal_moves().contains(&choice.mv));
        // Overrides, and `mcts:model=BUNDLE`.
        let spec: PlayerSpec = format!("{}:visits=4,gumbel=false", out.display()).parse().unwrap();
        let mut player = factory.build(&spec, 0).unwrap();
        assert!(game.legal_moves().contains(&player.choose(&game, &Limits::default()).unwrap().mv));
        let e = format!("{}:vists=4", out.display()).parse::<PlayerSpec>().unwrap_err();
        assert!(e.to_string().contains("vists"), "{e}");
        let spec: PlayerSpec = format!("mcts:model={},visits=4", out.display()).parse().unwrap();
        assert!(factory.build(&spec, 0).is_ok());

        // An existing --out is refused and left alone.
        let e = export(&base.join("run"), &out, &options).unwrap_err().to_string();
        assert!(e.contains("already exists") && e.contains("p1"), "{e}");
        assert!(out.join("player.toml").is_file());
        // An unknown model and a directory that is no run are named.
        let e = export(
            &base.join("run"),
            &base.join("p2"),
            &ExportOptions { model: Some("m000009".into()), ..options.clone() },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("m000009") && e.contains("m000000"), "{e}");
        let e = export(&base.join("nowhere"), &base.join("p3"), &options).unwrap_err().to_string();
        assert!(e.contains("not a run directory"), "{e}");
        assert!(!base.join("p2").exists() && !base.join("p3").exists());
        assert!(!base.join("nowhere").exists(), "no run is made where there was none");
        let _ = fs::remove_dir_all(&base);
    }
}
