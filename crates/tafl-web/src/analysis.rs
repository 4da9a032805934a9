//! Analysis as server-sent events: the net's policy and value at once, then the search's value
//! and line with more and more time, until the time is spent or the page goes.
//!
//! The search runs in rounds of doubling time on a blocking thread (the `Player` trait answers
//! once per call, and the rounds are the progress the page shows; an MCTS keeps its tree from
//! round to round, alpha-beta its table). Each round holds the stream's [`Stop`]: when the page
//! closes the stream, the stream is dropped, the flag is set and the round ends at once.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::response::sse::{Event, KeepAlive, KeepAliveStream, Sse};
use serde::{Deserialize, Serialize};
use tafl_arena::{PlayerKind, PlayerSpec};
use tafl_players::builtin::BUILTIN;
use tafl_rules::{Game, Side};
use tafl_search::{Evaluator, Limits, Stop, StopOnDrop};
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;

use crate::game::{ChoiceView, GameRequest, build_player, replay};
use crate::{ApiError, AppState};

/// The longest analysis, whatever the page asks.
pub const MAX_ANALYSIS: Duration = Duration::from_secs(120);
/// The first round's time; each round doubles it.
const FIRST_ROUND: Duration = Duration::from_millis(100);
/// How often an idle stream writes a keep-alive comment: a client gone is noticed on the next
/// write at the latest.
const KEEP_ALIVE: Duration = Duration::from_secs(1);

/// A position to analyse, or a game to value.
#[derive(Debug, Clone, Deserialize)]
pub struct AnalyseRequest {
    /// The game.
    #[serde(flatten)]
    pub game: GameRequest,
    /// The name of one of the players the server offers (its default when absent).
    pub player: Option<String>,
    /// Total time in milliseconds (default 10 s, at most two minutes); for `game-values`, per ply.
    pub ms: Option<u64>,
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

/// The checkpoint a spec's player is guided by, if any: `builtin`, `mcts:model=PATH` or a bundle.
fn net_path(spec: &PlayerSpec) -> Option<PathBuf> {
    match spec.kind() {
        PlayerKind::Builtin(_) => Some(PathBuf::from(BUILTIN)),
        PlayerKind::Mcts { model, .. } => model.clone(),
        PlayerKind::Bundle { dir, .. } => Some(dir.clone()),
        _ => None,
    }
}

/// True for players that count visits (MCTS) rather than nodes (alpha-beta).
fn counts_visits(spec: &PlayerSpec) -> bool {
    spec.kind().net_search().is_some()
}

/// The policy of the net behind `spec` for the game's position, if the spec has a net.
fn policy(state: &AppState, game: &Game, spec: &PlayerSpec) -> Result<Option<PolicyView>, ApiError> {
    let Some(path) = net_path(spec) else { return Ok(None) };
    let net = state.factory(game.variant())?.evaluator(&path, 0).map_err(ApiError::BadRequest)?;
    let Some(evaluation) = net.evaluate(&[game]).into_iter().next() else { return Ok(None) };
    let side = game.position().side_to_move();
    let mut moves: Vec<(String, String, f32)> = game
        .legal_moves()
        .iter()
        .zip(&evaluation.policy)
        .map(|(m, p)| (m.from.to_string(), m.to.to_string(), *p))
        .collect();
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

/// An event stream that sets its [`Stop`] when dropped: when the page closes the stream (or the
/// connection goes), the search feeding it ends.
pub struct Watched {
    events: ReceiverStream<Result<Event, Infallible>>,
    _stop: StopOnDrop,
}

impl Stream for Watched {
    type Item = Result<Event, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.events).poll_next(cx)
    }
}

/// Sends `event`; fails once the page has gone.
fn send(tx: &mpsc::Sender<Result<Event, Infallible>>, event: Event) -> Result<(), Gone> {
    tx.blocking_send(Ok(event)).map_err(|_| Gone)
}

/// The page closed the stream.
struct Gone;

/// Runs `work` on a blocking thread with a search slot, feeding the returned stream; `work`
/// gets the sender and the stop flag of the stream.
fn stream_from(
    slot: tokio::sync::OwnedSemaphorePermit,
    work: impl FnOnce(&mpsc::Sender<Result<Event, Infallible>>, &Stop) -> Result<(), ApiError> + Send + 'static,
) -> Sse<KeepAliveStream<Watched>> {
    let (tx, rx) = mpsc::channel(16);
    let stop = Stop::new();
    let worker_stop = stop.clone();
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        if let Err(e) = work(&tx, &worker_stop) {
            let _ = tx.blocking_send(Ok(error_event(&e.to_string())));
        }
        let _ = tx.blocking_send(Ok(Event::default().event("done").data("{}")));
    });
    Sse::new(Watched { events: ReceiverStream::new(rx), _stop: StopOnDrop(stop) })
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}

/// Search limits that let time alone decide (the spec's own depth or visits would stop every
/// round at the same place), with the stream's stop flag.
fn time_only(time: Duration, stop: &Stop) -> Limits {
    Limits { time: Some(time), depth: Some(64), nodes: None, visits: Some(1 << 20), stop: stop.clone(), lines: None }
}

/// `POST /api/analyse`: events `policy` (when the player has a net), `search` (after each round
/// that went at least as deep as the one before), `failed` (with the error), `done`.
///
/// # Errors
/// A bad position or player name, a game that is over, every search slot taken (before any
/// event is sent).
pub async fn analyse(
    State(state): State<Arc<AppState>>,
    body: Result<Json<AnalyseRequest>, JsonRejection>,
) -> Result<Sse<KeepAliveStream<Watched>>, ApiError> {
    let Json(request) = body?;
    let (game, _) = replay(&state, &request.game)?;
    if game.outcome().is_over() {
        return Err(ApiError::BadRequest("the game is over: nothing to analyse".into()));
    }
    let spec = state.player(request.player.as_deref())?.clone();
    let total = request.ms.map_or(Duration::from_secs(10), Duration::from_millis).min(MAX_ANALYSIS);
    let slot = state.search_slot()?;
    Ok(stream_from(slot, move |tx, stop| {
        let mut player = build_player(&state, game.variant(), &spec)?;
        if let Some(p) = policy(&state, &game, &spec)?
            && send(tx, event("policy", &p)).is_err()
        {
            return Ok(());
        }
        let side = game.position().side_to_move();
        let unit = if counts_visits(&spec) { "visits" } else { "nodes" };
        let started = Instant::now();
        let mut round = FIRST_ROUND;
        let mut deepest = 0;
        let mut total_nodes = 0;
        loop {
            let left = total.saturating_sub(started.elapsed());
            // A round shorter than the last would only answer less deeply than it did.
            if left < round / 2 || stop.is_set() {
                return Ok(());
            }
            let t = Instant::now();
            let choice = player
                .choose(&game, &time_only(round.min(left), stop))
                .map_err(|e| ApiError::Engine(format!("{}: {e}", spec.name())))?;
            if stop.is_set() {
                return Ok(());
            }
            round *= 2;
            total_nodes += choice.nodes;
            // Alpha-beta's rounds start afresh; an MCTS's tree only grows from round to round.
            if unit == "nodes" && choice.depth < deepest {
                continue;
            }
            deepest = choice.depth;
            let mut view = serde_json::to_value(ChoiceView::new(&choice, side, t.elapsed().as_millis() as u64))
                .unwrap_or_default();
            view["elapsed_ms"] = (started.elapsed().as_millis() as u64).into();
            view["player"] = spec.name().to_string().into();
            view["unit"] = unit.into();
            view["nodes_total"] = total_nodes.into();
            if send(tx, event("search", &view)).is_err() {
                return Ok(());
            }
        }
    }))
}

/// `POST /api/game-values`: the player's value (attackers' view) and choice before every ply
/// of a game and after its last, as events `value` `{ply, value_attackers, best, played}`, then
/// `done`.
///
/// # Errors
/// A bad game or player name, every search slot taken.
pub async fn game_values(
    State(state): State<Arc<AppState>>,
    body: Result<Json<AnalyseRequest>, JsonRejection>,
) -> Result<Sse<KeepAliveStream<Watched>>, ApiError> {
    let Json(request) = body?;
    let (end, _) = replay(&state, &request.game)?;
    let spec = state.player(request.player.as_deref())?.clone();
    let per_ply = request
        .ms
        .map_or(Duration::from_millis(200), Duration::from_millis)
        .clamp(Duration::from_millis(10), Duration::from_secs(10));
    let slot = state.search_slot()?;
    let start = GameRequest { moves: Vec::new(), ..request.game };
    Ok(stream_from(slot, move |tx, stop| {
        let mut player = build_player(&state, end.variant(), &spec)?;
        let (mut game, _) = replay(&state, &start)?;
        let moves: Vec<tafl_rules::Move> = end.moves().to_vec();
        for ply in 0..=moves.len() {
            if stop.is_set() {
                return Ok(());
            }
            let side = game.position().side_to_move();
            let (value, best) = match game.outcome() {
                tafl_rules::Outcome::Ongoing => {
                    let choice = player
                        .choose(&game, &time_only(per_ply, stop))
                        .map_err(|e| ApiError::Engine(format!("{}: {e}", spec.name())))?;
                    (choice.value.map(|v| if side == Side::Attackers { v } else { -v }), Some(choice.mv.to_string()))
                }
                outcome => (
                    Some(match outcome.winner() {
                        Some(Side::Attackers) => 1.0,
                        Some(Side::Defenders) => -1.0,
                        None => 0.0,
                    }),
                    None,
                ),
            };
            let played = moves.get(ply).map(ToString::to_string);
            let data = serde_json::json!({ "ply": ply, "value_attackers": value, "best": best, "played": played });
            if send(tx, event("value", &data)).is_err() {
                return Ok(());
            }
            if let Some(m) = moves.get(ply) {
                game.play(*m).map_err(|e| ApiError::BadRequest(format!("move {}: {e}", ply + 1)))?;
            }
        }
        Ok(())
    }))
}
