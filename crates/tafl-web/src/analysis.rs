//! Analysis as server-sent events: the net's policy and value at once, then the search's value
//! and line with more and more time, until the time is spent or the page closes the stream.
//!
//! The `Player` trait has no stop signal, so the search runs in rounds of doubling time on a
//! blocking thread, and the thread checks between rounds whether anyone still listens: a
//! cancelled analysis ends within the round it is in.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use serde::{Deserialize, Serialize};
use tafl_arena::PlayerSpec;
use tafl_rules::{Game, Side};
use tafl_search::{Evaluator, Limits};
use tafl_zero::export::is_bundle;
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;

use crate::game::{ChoiceView, GameRequest, build_player, replay};
use crate::{ApiError, AppState};

/// The longest analysis, whatever the page asks.
pub const MAX_ANALYSIS: Duration = Duration::from_secs(120);
/// The first round's time; each round doubles it.
const FIRST_ROUND: Duration = Duration::from_millis(100);

/// A position to analyse, in the query string (moves space-separated).
#[derive(Debug, Clone, Deserialize)]
pub struct AnalyseQuery {
    /// The variant's name.
    pub variant: Option<String>,
    /// The start FEN.
    pub start: Option<String>,
    /// The moves from the start, separated by spaces.
    #[serde(default)]
    pub moves: String,
    /// The player SPEC (the server's default when absent).
    pub player: Option<String>,
    /// Total time in milliseconds (default 10 s, at most two minutes); for `game-values`, per ply.
    pub ms: Option<u64>,
}

impl AnalyseQuery {
    fn game(&self) -> GameRequest {
        GameRequest { variant: self.variant.clone(), start: self.start.clone(), moves: self.moves.split_whitespace().map(str::to_string).collect() }
    }
}

/// The net's view of a position: where it wants to move, and its value.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyView {
    /// The net's value for the side to move.
    pub value: f32,
    /// The same from the attackers' view.
    pub value_attackers: f32,
    /// Every legal move with its prior, the most likely first.
    pub moves: Vec<(String, String, f32)>,
    /// Prior summed by destination square.
    pub to: BTreeMap<String, f32>,
    /// Prior summed by the piece's square.
    pub from: BTreeMap<String, f32>,
}

/// The checkpoint a spec's player is guided by, if any: `mcts:model=PATH` or a bundle.
fn net_path(spec: &PlayerSpec) -> Option<PathBuf> {
    match spec.kind.as_str() {
        "mcts" => spec.get("model").filter(|m| *m != "none").map(PathBuf::from),
        kind if is_bundle(std::path::Path::new(kind)) => Some(PathBuf::from(kind)),
        _ => None,
    }
}

/// The policy of the net behind `spec` for the game's position, if the spec has a net.
fn policy(state: &AppState, game: &Game, spec: &PlayerSpec) -> Result<Option<PolicyView>, ApiError> {
    let Some(path) = net_path(spec) else { return Ok(None) };
    let net = state.factory(game.variant())?.evaluator(&path, 0).map_err(ApiError::BadRequest)?;
    let Some(evaluation) = net.evaluate(&[game]).into_iter().next() else { return Ok(None) };
    let side = game.position().side_to_move();
    let mut moves: Vec<(String, String, f32)> = game.legal_moves().iter().zip(&evaluation.policy).map(|(m, p)| (m.from.to_string(), m.to.to_string(), *p)).collect();
    moves.sort_by(|a, b| b.2.total_cmp(&a.2));
    let mut to: BTreeMap<String, f32> = BTreeMap::new();
    let mut from: BTreeMap<String, f32> = BTreeMap::new();
    for (f, t, p) in &moves {
        *to.entry(t.clone()).or_default() += p;
        *from.entry(f.clone()).or_default() += p;
    }
    let value_attackers = if side == Side::Attackers { evaluation.value } else { -evaluation.value };
    Ok(Some(PolicyView { value: evaluation.value, value_attackers, moves, to, from }))
}

fn event(name: &str, data: &impl Serialize) -> Event {
    Event::default().event(name).data(serde_json::to_string(data).unwrap_or_else(|_| "null".into()))
}

fn error_event(message: &str) -> Event {
    event("failed", &serde_json::json!({ "error": message }))
}

/// Runs `work` on a blocking thread, feeding the returned stream; `work` gets a sender whose
/// `send` fails once the page has gone.
fn stream_from(work: impl FnOnce(&mpsc::Sender<Result<Event, Infallible>>) -> Result<(), ApiError> + Send + 'static) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (tx, rx) = mpsc::channel(16);
    tokio::task::spawn_blocking(move || {
        if let Err(e) = work(&tx) {
            let _ = tx.blocking_send(Ok(error_event(&e.to_string())));
        }
        let _ = tx.blocking_send(Ok(Event::default().event("done").data("{}")));
    });
    Sse::new(ReceiverStream::new(rx)).keep_alive(KeepAlive::default())
}

/// Search limits that let time alone decide (the spec's own depth or visits would stop every
/// round at the same place).
fn time_only(time: Duration) -> Limits {
    Limits { time: Some(time), depth: Some(64), nodes: None, visits: Some(1 << 20) }
}

/// `GET /api/analyse`: events `policy` (when the player has a net), `search` (after each round),
/// `failed` (with the error), `done`.
///
/// # Errors
/// A bad position or spec, or a game that is over (before any event is sent).
pub async fn analyse(State(state): State<Arc<AppState>>, query: Result<Query<AnalyseQuery>, QueryRejection>) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let Query(query) = query?;
    let (game, _) = replay(&state, &query.game())?;
    if game.outcome().is_over() {
        return Err(ApiError::BadRequest("the game is over: nothing to analyse".into()));
    }
    let spec_text = query.player.clone().unwrap_or_else(|| state.config.player.clone());
    // Build the player here, so that a bad spec is a plain error rather than an event.
    let (_, _) = build_player(&state, game.variant(), &spec_text)?;
    let total = query.ms.map_or(Duration::from_secs(10), Duration::from_millis).min(MAX_ANALYSIS);
    Ok(stream_from(move |tx| {
        let (mut player, spec) = build_player(&state, game.variant(), &spec_text)?;
        if let Some(p) = policy(&state, &game, &spec)? {
            tx.blocking_send(Ok(event("policy", &p))).map_err(|_| ApiError::BadRequest("closed".into()))?;
        }
        let side = game.position().side_to_move();
        let started = Instant::now();
        let mut round = FIRST_ROUND;
        loop {
            let left = total.saturating_sub(started.elapsed());
            if left.is_zero() || tx.is_closed() {
                return Ok(());
            }
            let t = Instant::now();
            let choice = player.choose(&game, &time_only(round.min(left))).map_err(|e| ApiError::Engine(format!("{}: {e}", spec.name)))?;
            let mut view = serde_json::to_value(ChoiceView::new(&choice, side, t.elapsed().as_millis() as u64)).unwrap_or_default();
            view["elapsed_ms"] = (started.elapsed().as_millis() as u64).into();
            view["player"] = spec.name.clone().into();
            if tx.blocking_send(Ok(event("search", &view))).is_err() {
                return Ok(());
            }
            round *= 2;
        }
    }))
}

/// `GET /api/game-values`: the player's value (attackers' view) and choice before every ply of
/// a game and after its last, as events `value` `{ply, value_attackers, best, played}`, then `done`.
///
/// # Errors
/// A bad game or spec.
pub async fn game_values(State(state): State<Arc<AppState>>, query: Result<Query<AnalyseQuery>, QueryRejection>) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let Query(query) = query?;
    let request = query.game();
    let (end, _) = replay(&state, &request)?;
    let spec_text = query.player.clone().unwrap_or_else(|| state.config.player.clone());
    let (_, _) = build_player(&state, end.variant(), &spec_text)?;
    let per_ply = query.ms.map_or(Duration::from_millis(200), Duration::from_millis).clamp(Duration::from_millis(10), Duration::from_secs(10));
    Ok(stream_from(move |tx| {
        let (mut player, spec) = build_player(&state, end.variant(), &spec_text)?;
        let (mut game, _) = replay(&state, &GameRequest { moves: Vec::new(), ..request.clone() })?;
        let moves: Vec<tafl_rules::Move> = end.moves().to_vec();
        for ply in 0..=moves.len() {
            if tx.is_closed() {
                return Ok(());
            }
            let side = game.position().side_to_move();
            let (value, best) = match game.outcome() {
                tafl_rules::Outcome::Ongoing => {
                    let choice = player.choose(&game, &time_only(per_ply)).map_err(|e| ApiError::Engine(format!("{}: {e}", spec.name)))?;
                    (choice.value.map(|v| if side == Side::Attackers { v } else { -v }), Some(choice.mv.to_string()))
                }
                outcome => (Some(match outcome.winner() {
                    Some(Side::Attackers) => 1.0,
                    Some(Side::Defenders) => -1.0,
                    None => 0.0,
                }), None),
            };
            let played = moves.get(ply).map(ToString::to_string);
            let data = serde_json::json!({ "ply": ply, "value_attackers": value, "best": best, "played": played });
            if tx.blocking_send(Ok(event("value", &data))).is_err() {
                return Ok(());
            }
            if let Some(m) = moves.get(ply) {
                game.play(*m).map_err(|e| ApiError::BadRequest(format!("move {}: {e}", ply + 1)))?;
            }
        }
        Ok(())
    }))
}
