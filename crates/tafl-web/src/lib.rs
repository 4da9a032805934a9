//! `tafl serve`: a one-page browser interface to play, analyse and watch training runs.
//!
//! The page (`assets/`: plain HTML, JavaScript and CSS, no build step, plus the uPlot chart
//! library's minified file) is embedded in the binary. It speaks JSON to this server:
//!
//! | route | what |
//! |---|---|
//! | `GET /api/info` | variants (board, throne, corners), the default player, the runs served |
//! | `POST /api/game` | a game (`variant`, `start` FEN, `moves`) replayed by the rules: board, legal moves, last move and captures, the king-danger hint, outcome, record |
//! | `POST /api/engine` | the engine's move in a game (`player` SPEC, `time_ms`), and the game after it |
//! | `POST /api/record` | a game record (archive line, move list, `# start FEN`) or a FEN, as a game |
//! | `GET /api/analyse` | server-sent events: the net's policy and value, then the search's value and line, deeper and deeper |
//! | `GET /api/game-values` | server-sent events: the player's value before every ply of a game |
//! | `GET /api/runs/{n}` | a run's metrics, models with their gate and evaluation results, newest games |
//! | `GET /api/runs/{n}/live` | server-sent events: `changed` whenever the run's files change |
//!
//! Game logic comes from `tafl-rules`, players from the player factory of `tafl-zero`, runs from
//! its run-directory reader. The game lives in the page (start position and moves); the server
//! keeps no sessions, so take-back and new game are the page's business. Searches run on
//! blocking threads; an analysis stops when the page closes its event stream. Every bad input
//! (a FEN, a record, a move, a spec) is answered with `400 {"error": "…"}`.

mod analysis;
mod assets;
mod error;
mod game;
mod runs;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tafl_rules::{PRESETS, Variant};
use tafl_zero::ZeroFactory;

pub use error::ApiError;
pub use runs::is_run;

/// The largest request body accepted (a record file of many games fits).
pub const MAX_BODY: usize = 1 << 20;

/// What `tafl serve` serves.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The variants offered: the presets, plus any variant given by file.
    pub variants: Vec<&'static Variant>,
    /// The opponent and analyser the page starts with (a player SPEC).
    pub player: String,
    /// Run directories to watch.
    pub runs: Vec<PathBuf>,
}

impl ServeConfig {
    /// Every preset, `player` as the default, no runs.
    #[must_use]
    pub fn new(player: &str) -> ServeConfig {
        let variants = PRESETS.iter().filter_map(|name| Variant::preset(name)).collect();
        ServeConfig { variants, player: player.to_string(), runs: Vec::new() }
    }
}

/// The server's shared state: the config and one player factory per variant (each caches the
/// nets it loads, so a model is read from disk once).
#[derive(Debug)]
pub struct AppState {
    config: ServeConfig,
    factories: HashMap<String, Arc<ZeroFactory>>,
}

impl AppState {
    /// State for `config`.
    #[must_use]
    pub fn new(config: ServeConfig) -> AppState {
        let factories = config.variants.iter().map(|v| (v.name().to_string(), Arc::new(ZeroFactory::new(v)))).collect();
        AppState { config, factories }
    }

    /// The variant called `name` (the first one when `None`).
    fn variant(&self, name: Option<&str>) -> Result<&'static Variant, ApiError> {
        let Some(name) = name else {
            return self.config.variants.first().copied().ok_or_else(|| ApiError::BadRequest("no variant is served".into()));
        };
        self.config.variants.iter().copied().find(|v| v.name() == name).ok_or_else(|| {
            let known: Vec<&str> = self.config.variants.iter().map(|v| v.name()).collect();
            ApiError::BadRequest(format!("unknown variant `{name}` (known: {})", known.join(", ")))
        })
    }

    fn factory(&self, variant: &Variant) -> Result<Arc<ZeroFactory>, ApiError> {
        self.factories.get(variant.name()).cloned().ok_or_else(|| ApiError::BadRequest(format!("no players for variant `{}`", variant.name())))
    }
}

/// The router of the page and its API.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{file}", get(assets::file))
        .route("/api/info", get(game::info))
        .route("/api/game", post(game::game))
        .route("/api/engine", post(game::engine))
        .route("/api/record", post(game::record))
        .route("/api/analyse", get(analysis::analyse))
        .route("/api/game-values", get(analysis::game_values))
        .route("/api/runs/{n}", get(runs::run))
        .route("/api/runs/{n}/live", get(runs::live))
        .fallback(error::not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(state)
}

/// Serves `config` on `listener` until the process ends.
///
/// # Errors
/// The listener fails.
pub async fn serve(listener: tokio::net::TcpListener, config: ServeConfig) -> std::io::Result<()> {
    let app = router(Arc::new(AppState::new(config)));
    axum::serve(listener, app).await
}

/// True for addresses only this machine can reach.
#[must_use]
pub fn is_local(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}
