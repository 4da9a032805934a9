//! A training run for the dashboard: its metrics, models with their results, newest games, and
//! a stream that says when any of them changed.

use std::convert::Infallible;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use serde::Serialize;
use tafl_run::RunDir;
use tafl_run::metrics::{EvalResult, GateResult, Metric};
use tafl_run::rundir::ModelInfo;
use tafl_zero::config::RunConfig;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;

use crate::{ApiError, AppState};

/// Games shown per run (the newest).
pub const NEWEST_GAMES: usize = 24;
/// How often the live stream looks at the run's files.
const POLL: Duration = Duration::from_secs(2);

/// A model of the run.
#[derive(Debug, Clone, Serialize)]
pub struct ModelView {
    /// Its id (`m000003`).
    pub id: String,
    /// What its `meta.json` says of it (iteration, samples, net, time), if readable.
    pub meta: Option<ModelInfo>,
    /// Its gate result, if it was gated.
    pub gate: Option<GateResult>,
    /// Its evaluation against the ladder, if evaluated.
    pub eval: Option<EvalResult>,
}

/// A recorded game of the run.
#[derive(Debug, Clone, Serialize)]
pub struct GameRecord {
    /// The file, relative to the run (`selfplay/m000003/….csv`, `arena/gate-m000004.csv`).
    pub source: String,
    /// The comment line before it, if any.
    pub title: String,
    /// The archive line.
    pub record: String,
    /// Seconds since the Unix epoch when its file was written.
    pub written: f64,
}

/// Everything the dashboard shows of a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    /// The run directory.
    pub path: String,
    /// The variant in its `config.toml` (`copenhagen` when not said).
    pub variant: String,
    /// The best model.
    pub best: Option<String>,
    /// The models, oldest first.
    pub models: Vec<ModelView>,
    /// Every event of the run's metrics.
    pub metrics: Vec<Metric>,
    /// The newest games, newest first.
    pub games: Vec<GameRecord>,
}

fn run_dir(state: &AppState, n: usize) -> Result<(PathBuf, RunDir), ApiError> {
    let path = state
        .config
        .runs
        .get(n)
        .ok_or_else(|| ApiError::NotFound(format!("no run {n}: {} runs are served", state.config.runs.len())))?;
    // Opening a run creates its folders: look before, so a typo is not made into a run.
    if !is_run(path) {
        return Err(ApiError::NotFound(format!("{} is not a run directory (no models/ nor logs/)", path.display())));
    }
    let run = RunDir::open(path).map_err(|e| ApiError::NotFound(format!("run {}: {e}", path.display())))?;
    Ok((path.clone(), run))
}

/// True when `path` looks like a run directory.
#[must_use]
pub fn is_run(path: &Path) -> bool {
    RunDir::holds_models(path) || RunDir::holds_logs(path)
}

/// The variant a run's config names (the default config's when it has none or it does not
/// read).
fn run_variant(run: &RunDir) -> String {
    let config = run.read_config().ok().flatten().and_then(|text| RunConfig::from_toml(&text).ok());
    config.unwrap_or_else(RunConfig::default_config).run.variant
}

fn modified(path: &Path) -> f64 {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The run's game files (`.csv` under `arena/` and `selfplay/<model>/`), newest first.
fn game_files(run: &RunDir) -> Vec<(PathBuf, f64)> {
    let mut files: Vec<(PathBuf, f64)> = run
        .game_files()
        .into_iter()
        .map(|p| {
            let t = modified(&p);
            (p, t)
        })
        .collect();
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    files
}

/// The newest games of the run, newest first.
fn newest_games(run: &RunDir) -> Vec<GameRecord> {
    let mut games = Vec::new();
    for (path, written) in game_files(run) {
        let Ok(text) = fs::read_to_string(&path) else { continue };
        let source = run.relative_name(&path);
        let mut title = String::new();
        let mut in_file = Vec::new();
        for line in text.lines().map(str::trim) {
            if let Some(comment) = line.strip_prefix('#') {
                title = comment.trim().to_string();
            } else if !line.is_empty() {
                in_file.push(GameRecord {
                    source: source.clone(),
                    title: std::mem::take(&mut title),
                    record: line.to_string(),
                    written,
                });
            }
        }
        games.extend(in_file.into_iter().rev());
        if games.len() >= NEWEST_GAMES {
            break;
        }
    }
    games.truncate(NEWEST_GAMES);
    games
}

fn view(path: &Path, run: &RunDir) -> RunView {
    let models = run
        .models()
        .into_iter()
        .map(|id| ModelView {
            meta: run.model_summary(&id),
            gate: run.gate_result(&id),
            eval: run.eval_result(&id),
            id,
        })
        .collect();
    RunView {
        path: path.display().to_string(),
        variant: run_variant(run),
        best: run.best_model(),
        models,
        metrics: run.metrics(),
        games: newest_games(run),
    }
}

/// `GET /api/runs/{n}`.
///
/// # Errors
/// No run `n`, or its directory cannot be opened.
pub async fn run(State(state): State<Arc<AppState>>, UrlPath(n): UrlPath<usize>) -> Result<Json<RunView>, ApiError> {
    let (path, dir) = run_dir(&state, n)?;
    let view =
        tokio::task::spawn_blocking(move || view(&path, &dir)).await.map_err(|e| ApiError::Engine(e.to_string()))?;
    Ok(Json(view))
}

/// What changes when a run moves on: the metrics file's length, the models, the best, the
/// newest game file.
fn signature(run: &RunDir) -> (u64, usize, Option<String>, f64) {
    let metrics = fs::metadata(run.metrics_path()).map_or(0, |m| m.len());
    let newest = game_files(run).first().map_or(0.0, |f| f.1);
    (metrics, run.models().len(), run.best_model(), newest)
}

/// `GET /api/runs/{n}/live`: an event `changed` whenever the run's files change (checked every
/// two seconds), until the page goes.
///
/// # Errors
/// No run `n`.
pub async fn live(
    State(state): State<Arc<AppState>>,
    UrlPath(n): UrlPath<usize>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let (_, dir) = run_dir(&state, n)?;
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        let dir = Arc::new(dir);
        let mut last = None;
        loop {
            let d = Arc::clone(&dir);
            let Ok(now) = tokio::task::spawn_blocking(move || signature(&d)).await else { return };
            if last.as_ref() != Some(&now) {
                if last.is_some() && tx.send(Ok(Event::default().event("changed").data("{}"))).await.is_err() {
                    return;
                }
                last = Some(now);
            }
            if tx.is_closed() {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
    });
    Ok(Sse::new(ReceiverStream::new(rx)).keep_alive(KeepAlive::default()))
}
