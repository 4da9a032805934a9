//! `tafl serve`: a one-page browser interface to play, analyse and watch training runs.
//!
//! The page (`assets/`: plain HTML, JavaScript and CSS, no build step, plus the uPlot chart
//! library's minified file) is embedded in the binary. It speaks JSON to this server:
//!
//! | route | what |
//! |---|---|
//! | `GET /api/info` | variants (board, throne, corners), the players offered, the runs served |
//! | `POST /api/game` | a game (`variant`, `start` FEN, `moves`) replayed by the rules: board, legal moves, last move and captures, the king-danger hint, outcome, record |
//! | `POST /api/engine` | the engine's move in a game (`player` by name, `time_ms`), and the game after it |
//! | `POST /api/record` | a game record (archive line, move list, `# start FEN`) or a FEN, as a game |
//! | `POST /api/analyse` | server-sent events: the net's policy and value, then the search's value and line, deeper and deeper |
//! | `POST /api/game-values` | server-sent events: the player's value before every ply of a game |
//! | `GET /api/runs/{n}` | a run's metrics, models with their gate and evaluation results, newest games |
//! | `GET /api/runs/{n}/live` | server-sent events: `changed` whenever the run's files change |
//!
//! **What a request may choose.** The players are the operator's: the specs given on the
//! command line ([`ServeConfig::players`]); a request names one of them (`player` is its name)
//! and may set a time, bounded by [`game::MAX_MOVE_TIME`] and [`analysis::MAX_ANALYSIS`]. No
//! request builds a player from a spec of its own, so none can start a program or name a file.
//!
//! **Who may ask.** Every request must name the server by an IP address, `localhost` or a name
//! the operator allowed (`Host`), which defeats DNS rebinding; an `Origin` must be this server;
//! API requests that a browser marks as coming from another site (`Sec-Fetch-Site`) are refused.
//! Everything that searches is a `POST` of `application/json`, which a foreign page cannot send
//! without a CORS preflight this server never grants.
//!
//! **What is bounded.** Searches at once ([`ServeConfig::max_searches`], then `503`), each
//! search's time and tree memory, connections at once and the time to send a request's headers
//! (an idle connection is closed). A search ends within a fraction of a second once its client
//! has gone: each holds a [`tafl_search::Stop`] that is set when the request is dropped.
//!
//! Game logic comes from `tafl-rules`, players from the player factory of `tafl-players`, runs
//! from the run-directory reader of `tafl-run`. The game lives in the page (start position and moves); the server
//! keeps no sessions, so take-back and new game are the page's business. Every bad input (a FEN,
//! a record, a move, a player name) is answered with `400 {"error": "…"}`.

mod analysis;
mod assets;
mod error;
mod game;
mod origin;
mod runs;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tafl_arena::PlayerSpec;
use tafl_players::ZeroFactory;
use tafl_rules::{PRESETS, Variant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use analysis::MAX_ANALYSIS;
pub use error::ApiError;
pub use game::MAX_MOVE_TIME;
pub use origin::host_is_allowed;
pub use runs::is_run;

/// The largest request body accepted (a record file of many games fits).
pub const MAX_BODY: usize = 1 << 20;

/// The players the page offers when the operator names none: the shipped net at a second a
/// move, alpha-beta at three strengths, random moves. The first is the page's default.
pub const DEFAULT_PLAYERS: [&str; 5] =
    ["alphabeta:time=1s", "builtin:time=1s", "alphabeta:depth=2", "alphabeta:depth=4", "random"];

/// What `tafl serve` serves.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The variants offered: the presets, plus any variant given by file.
    pub variants: Vec<&'static Variant>,
    /// The players the page may use, by name; the first is its default opponent and analyser.
    pub players: Vec<PlayerSpec>,
    /// Run directories to watch.
    pub runs: Vec<PathBuf>,
    /// Host names, besides IP addresses and `localhost`, that requests may name this server by.
    pub allowed_hosts: Vec<String>,
    /// Searches (engine moves, analyses, value graphs) at once; more are answered `503`.
    pub max_searches: usize,
    /// Connections at once; more are closed as they arrive.
    pub max_connections: usize,
    /// The time a client has to send a request's headers, and the longest an idle connection
    /// is kept.
    pub header_timeout: Duration,
}

impl ServeConfig {
    /// Every preset, `players` offered (the first the default), no runs, the default bounds.
    #[must_use]
    pub fn new(players: Vec<PlayerSpec>) -> ServeConfig {
        let variants = PRESETS.iter().filter_map(|name| Variant::preset(name)).collect();
        ServeConfig {
            variants,
            players,
            runs: Vec::new(),
            allowed_hosts: Vec::new(),
            max_searches: 4,
            max_connections: 128,
            header_timeout: Duration::from_secs(10),
        }
    }
}

/// The server's shared state: the config, one player factory per variant (each caches the
/// nets it loads, so a model is read from disk once) and the search slots.
#[derive(Debug)]
pub struct AppState {
    config: ServeConfig,
    factories: HashMap<String, Arc<ZeroFactory>>,
    searches: Arc<Semaphore>,
}

impl AppState {
    /// State for `config`.
    #[must_use]
    pub fn new(config: ServeConfig) -> AppState {
        let factories = config.variants.iter().map(|v| (v.name().to_string(), Arc::new(ZeroFactory::new(v)))).collect();
        let searches = Arc::new(Semaphore::new(config.max_searches));
        AppState { config, factories, searches }
    }

    /// The variant called `name` (the first one when `None`).
    fn variant(&self, name: Option<&str>) -> Result<&'static Variant, ApiError> {
        let Some(name) = name else {
            return self
                .config
                .variants
                .first()
                .copied()
                .ok_or_else(|| ApiError::BadRequest("no variant is served".into()));
        };
        self.config.variants.iter().copied().find(|v| v.name() == name).ok_or_else(|| {
            let known: Vec<&str> = self.config.variants.iter().map(|v| v.name()).collect();
            ApiError::BadRequest(format!("unknown variant `{name}` (known: {})", known.join(", ")))
        })
    }

    /// The offered player called `name` (the default when `None`). Only these are ever built.
    fn player(&self, name: Option<&str>) -> Result<&PlayerSpec, ApiError> {
        let default =
            || self.config.players.first().ok_or_else(|| ApiError::BadRequest("this server offers no players".into()));
        let Some(name) = name else { return default() };
        self.config.players.iter().find(|p| p.name() == name).ok_or_else(|| {
            let offered: Vec<&str> = self.config.players.iter().map(|p| p.name()).collect();
            ApiError::BadRequest(format!("unknown player `{name}`: this server offers {}", offered.join(", ")))
        })
    }

    fn factory(&self, variant: &Variant) -> Result<Arc<ZeroFactory>, ApiError> {
        self.factories
            .get(variant.name())
            .cloned()
            .ok_or_else(|| ApiError::BadRequest(format!("no players for variant `{}`", variant.name())))
    }

    /// A slot for one search, held until it ends; none free is `503`.
    fn search_slot(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        Arc::clone(&self.searches).try_acquire_owned().map_err(|_| {
            ApiError::Busy(format!(
                "{} searches are running, the most this server runs at once: try again when one has ended",
                self.config.max_searches
            ))
        })
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
        .route("/api/analyse", post(analysis::analyse))
        .route("/api/game-values", post(analysis::game_values))
        .route("/api/runs/{n}", get(runs::run))
        .route("/api/runs/{n}/live", get(runs::live))
        .fallback(error::not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), origin::same_origin_only))
        .with_state(state)
}

/// Serves `config` on `listener` until the process ends: one task per connection, at most
/// [`ServeConfig::max_connections`] of them, each closed when its client takes longer than
/// [`ServeConfig::header_timeout`] to send a request's headers or stays idle that long.
///
/// # Errors
/// None yet: a failed accept (out of file descriptors) is waited out, a failed connection only
/// ends that connection.
pub async fn serve(listener: tokio::net::TcpListener, config: ServeConfig) -> std::io::Result<()> {
    let connections = Arc::new(Semaphore::new(config.max_connections));
    let header_timeout = config.header_timeout;
    let app = router(Arc::new(AppState::new(config)));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of file descriptors or a connection reset before it was accepted: wait
                // for connections to close rather than spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(header_timeout);
            // A failed connection (a client gone, a bad request line) concerns that client only.
            let _ = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service).await;
        });
    }
}

/// True for addresses only this machine can reach.
#[must_use]
pub fn is_local(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}
