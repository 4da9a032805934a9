//! Games as the page sees them: replayed by `tafl-rules` from a start position and a move list,
//! and the engine's move in them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use serde::{Deserialize, Serialize};
use tafl_arena::{PlayerFactory, PlayerSpec};
use tafl_rules::notation::{outcome_result, parse_archive_line, parse_move_list, ply_text, write_archive_line};
use tafl_rules::{Game, Outcome, Piece, Position, Side, Square, Variant, king_danger, parse_move};
use tafl_search::{MoveChoice, Player, Stop, StopOnDrop};

use crate::{ApiError, AppState};

/// The longest game the API replays (far beyond any move limit).
pub const MAX_PLIES: usize = 2000;
/// The longest an engine may think per move, whatever the page asks.
pub const MAX_MOVE_TIME: Duration = Duration::from_secs(60);

/// A game: a variant, a start position and the moves played from it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct GameRequest {
    /// The variant's name (the first variant served when absent).
    pub variant: Option<String>,
    /// The start position as a FEN (the variant's start when absent or empty).
    pub start: Option<String>,
    /// The moves played, `d1-d4` or `d1d4` (a capture suffix `xd5` is accepted and checked).
    #[serde(default)]
    pub moves: Vec<String>,
}

/// One ply of the move list.
#[derive(Debug, Clone, Serialize)]
pub struct PlyView {
    /// The side that moved.
    pub side: Side,
    /// From and to squares (`d1`, `d4`).
    pub from: String,
    /// The square moved to.
    pub to: String,
    /// Soldiers it captured.
    pub captured: Vec<String>,
    /// The ply in the archive notation: `d1-d4`, `d1-d4xd5xe4`.
    pub text: String,
}

/// The end of a game.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeView {
    /// The winner; `null` for a draw.
    pub winner: Option<Side>,
    /// `king-escaped`, `king-captured`, `exit-fort`, `encirclement`, `repetition`, `no-moves`, `move-limit`.
    pub reason: String,
}

/// The danger hint: the king closed in on three sides, his open lines to corners, his forks.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DangerView {
    /// The king's square, if he is on the board.
    pub king: Option<String>,
    /// One attacker move can capture him.
    pub surrounded: bool,
    /// Corners he has an open line to.
    pub sees_corners: Vec<String>,
    /// Squares he can reach from which he would see two corners.
    pub forks: Vec<String>,
}

/// A game after its moves, with everything the page draws.
#[derive(Debug, Clone, Serialize)]
pub struct GameView {
    /// The variant's name.
    pub variant: String,
    /// Squares per side.
    pub size: u8,
    /// The start position (FEN).
    pub start: String,
    /// The start is the variant's own.
    pub standard_start: bool,
    /// The current position (FEN).
    pub fen: String,
    /// The current position as an OpenTafl position record.
    pub opentafl: String,
    /// Who moves now.
    pub side_to_move: Side,
    /// Ranks from the top: `a` attacker, `d` defender, `k` king, `.` empty.
    pub board: Vec<String>,
    /// Throne squares.
    pub thrones: Vec<String>,
    /// Corner squares.
    pub corners: Vec<String>,
    /// The moves played, with their captures.
    pub plies: Vec<PlyView>,
    /// Legal moves of the side to move: from-square → to-squares (empty once the game is over).
    pub legal: BTreeMap<String, Vec<String>>,
    /// The outcome, `null` while the game goes on.
    pub outcome: Option<OutcomeView>,
    /// The danger hint for the current position.
    pub danger: DangerView,
    /// The game in the archive format (`moves,attacker_captures,defender_captures,result`).
    pub record: String,
}

/// The game a request describes, every move checked by the rules.
///
/// # Errors
/// An unknown variant, a bad FEN, an unreadable or illegal move (the message names the ply), or
/// a move after the end of the game.
pub fn replay(state: &AppState, request: &GameRequest) -> Result<(Game, Vec<PlyView>), ApiError> {
    let variant = state.variant(request.variant.as_deref())?;
    let start = start_position(variant, request.start.as_deref())?;
    if request.moves.len() > MAX_PLIES {
        return Err(ApiError::BadRequest(format!("{} moves: at most {MAX_PLIES} are accepted", request.moves.len())));
    }
    let mut game = Game::from_position(start);
    let mut plies = Vec::with_capacity(request.moves.len());
    for (i, text) in request.moves.iter().enumerate() {
        let ply =
            play_text(&mut game, text).map_err(|e| ApiError::BadRequest(format!("move {} `{text}`: {e}", i + 1)))?;
        plies.push(ply);
    }
    Ok((game, plies))
}

/// The position a `start` FEN names, or the variant's start.
fn start_position(variant: &'static Variant, fen: Option<&str>) -> Result<Position, ApiError> {
    match fen.map(str::trim).filter(|f| !f.is_empty()) {
        None => Ok(Position::start(variant)),
        Some(fen) => {
            Position::from_fen(variant, fen).map_err(|e| ApiError::BadRequest(format!("bad FEN `{fen}`: {e}")))
        }
    }
}

/// Plays one move written as text, checking a written capture list against the rules.
fn play_text(game: &mut Game, text: &str) -> Result<PlyView, String> {
    let written = parse_move(text.trim(), game.variant().size()).map_err(|e| e.to_string())?;
    let side = game.position().side_to_move();
    let played = game.play(written.mv).map_err(|e| e.to_string())?;
    let captured: Vec<Square> = played.captured.iter().copied().collect();
    if let Some(listed) = &written.captures {
        let mut listed = listed.clone();
        listed.sort_by_key(|s| (s.rank(), s.file()));
        let mut actual = captured.clone();
        actual.sort_by_key(|s| (s.rank(), s.file()));
        if listed != actual {
            game.undo();
            return Err(format!("the record lists captures {listed:?}, the rules capture {actual:?}"));
        }
    }
    let text = ply_text(written.mv, &captured);
    Ok(PlyView {
        side,
        from: written.mv.from.to_string(),
        to: written.mv.to.to_string(),
        captured: captured.iter().map(ToString::to_string).collect(),
        text,
    })
}

/// Everything the page draws of `game`.
#[must_use]
pub fn view(game: &Game, plies: Vec<PlyView>) -> GameView {
    let position = game.position();
    let variant = game.variant();
    let size = position.size();
    let squares = || (0..size).flat_map(move |rank| (0..size).map(move |file| Square::new(file, rank)));
    let board = (0..size)
        .rev()
        .map(|rank| {
            (0..size)
                .map(|file| match position.piece_at(Square::new(file, rank)) {
                    Some(Piece::Attacker) => 'a',
                    Some(Piece::Defender) => 'd',
                    Some(Piece::King) => 'k',
                    None => '.',
                })
                .collect()
        })
        .collect();
    let outcome = game.outcome();
    let mut legal: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if !outcome.is_over() {
        for m in game.legal_moves().iter() {
            legal.entry(m.from.to_string()).or_default().push(m.to.to_string());
        }
    }
    let danger = king_danger(position);
    let start = game.start();
    let record = archive_record(&plies, outcome);
    GameView {
        variant: variant.name().to_string(),
        size,
        start: start.to_fen(),
        standard_start: start.to_fen() == Position::start(variant).to_fen(),
        fen: position.to_fen(),
        opentafl: position.to_opentafl(),
        side_to_move: position.side_to_move(),
        board,
        thrones: squares().filter(|s| variant.is_throne(*s)).map(|s| s.to_string()).collect(),
        corners: squares().filter(|s| variant.is_corner(*s)).map(|s| s.to_string()).collect(),
        plies,
        legal,
        outcome: outcome.reason().map(|reason| OutcomeView { winner: outcome.winner(), reason: reason.to_string() }),
        danger: DangerView {
            king: position.king().map(|k| k.to_string()),
            surrounded: danger.surrounded,
            sees_corners: danger.sees_corners.iter().map(ToString::to_string).collect(),
            forks: danger.forks.iter().map(ToString::to_string).collect(),
        },
        record,
    }
}

/// The archive line of a game: plies, captures by each side, result.
fn archive_record(plies: &[PlyView], outcome: Outcome) -> String {
    let moves: Vec<&str> = plies.iter().map(|p| p.text.as_str()).collect();
    let by = |side: Side| plies.iter().filter(|p| p.side == side).map(|p| p.captured.len()).sum::<usize>();
    write_archive_line(&moves, false, [by(Side::Attackers), by(Side::Defenders)], outcome_result(outcome))
}

/// `GET /api/info`.
pub async fn info(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    let variants: Vec<serde_json::Value> = state
        .config
        .variants
        .iter()
        .map(|v| serde_json::json!({ "name": v.name(), "size": v.size(), "start": Position::start(v).to_fen() }))
        .collect();
    let runs: Vec<serde_json::Value> = state
        .config
        .runs
        .iter()
        .enumerate()
        .map(|(i, p)| serde_json::json!({ "id": i, "path": p.display().to_string() }))
        .collect();
    let players: Vec<&str> = state.config.players.iter().map(|p| p.name()).collect();
    Json(serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "variants": variants,
        "player": players.first(),
        "players": players,
        "max_move_ms": MAX_MOVE_TIME.as_millis() as u64,
        "max_analysis_ms": crate::MAX_ANALYSIS.as_millis() as u64,
        "runs": runs,
    }))
}

/// `POST /api/game`: the game after its moves.
///
/// # Errors
/// See [`replay`].
pub async fn game(
    State(state): State<Arc<AppState>>,
    body: Result<Json<GameRequest>, JsonRejection>,
) -> Result<Json<GameView>, ApiError> {
    let Json(request) = body?;
    let (game, plies) = replay(&state, &request)?;
    Ok(Json(view(&game, plies)))
}

/// A request for the engine's move.
#[derive(Debug, Clone, Deserialize)]
pub struct EngineRequest {
    /// The game so far.
    #[serde(flatten)]
    pub game: GameRequest,
    /// The name of one of the players the server offers (its default when absent).
    pub player: Option<String>,
    /// Time for the move in milliseconds (at most a minute); the player's own limits otherwise.
    pub time_ms: Option<u64>,
}

/// What a search found.
#[derive(Debug, Clone, Serialize)]
pub struct ChoiceView {
    /// The move chosen.
    #[serde(rename = "move")]
    pub mv: String,
    /// The player's value for the side to move, in [-1, 1], if it has one.
    pub value: Option<f32>,
    /// The same value from the attackers' view.
    pub value_attackers: Option<f32>,
    /// The principal variation.
    pub pv: Vec<String>,
    /// Depth (alpha-beta) or the principal variation's length (MCTS).
    pub depth: u32,
    /// Nodes or visits.
    pub nodes: u64,
    /// Milliseconds spent.
    pub ms: u64,
}

impl ChoiceView {
    /// The view of `choice` made for `side`.
    #[must_use]
    pub fn new(choice: &MoveChoice, side: Side, ms: u64) -> ChoiceView {
        ChoiceView {
            mv: choice.mv.to_string(),
            value: choice.value,
            value_attackers: choice.value.map(|v| if side == Side::Attackers { v } else { -v }),
            pv: choice.pv.iter().map(ToString::to_string).collect(),
            depth: choice.depth,
            nodes: choice.nodes,
            ms,
        }
    }
}

/// The answer to an engine request.
#[derive(Debug, Clone, Serialize)]
pub struct EngineView {
    /// The player that moved.
    pub player: String,
    /// Its choice.
    pub choice: ChoiceView,
    /// The game after the move.
    pub game: GameView,
}

/// Builds `spec` (one of the players the operator offers) for `variant`.
///
/// # Errors
/// The player cannot be built for this variant (a bundle for another variant, an engine that
/// did not start).
pub fn build_player(
    state: &AppState,
    variant: &'static Variant,
    spec: &PlayerSpec,
) -> Result<Box<dyn Player>, ApiError> {
    state.factory(variant)?.build(spec, 0).map_err(|e| ApiError::BadRequest(format!("player `{}`: {e}", spec.name())))
}

/// `POST /api/engine`: the engine's move, searched on a blocking thread that stops when the
/// request is answered, times out or is abandoned.
///
/// # Errors
/// A bad game or player name, a game already over, every search slot taken, an engine failure.
pub async fn engine(
    State(state): State<Arc<AppState>>,
    body: Result<Json<EngineRequest>, JsonRejection>,
) -> Result<Json<EngineView>, ApiError> {
    let Json(request) = body?;
    let (game, plies) = replay(&state, &request.game)?;
    if game.outcome().is_over() {
        return Err(ApiError::BadRequest("the game is over: no move to search".into()));
    }
    let spec = state.player(request.player.as_deref())?.clone();
    let name = spec.name().to_string();
    let time = request.time_ms.map(|ms| Duration::from_millis(ms.max(1)).min(MAX_MOVE_TIME));
    let slot = state.search_slot()?;
    let stop = Stop::new();
    // Dropped when this handler ends for any reason, the client's going included.
    let _stop_on_drop = StopOnDrop(stop.clone());
    let worker_state = Arc::clone(&state);
    let worker_game = game.clone();
    let search = tokio::task::spawn_blocking(move || -> Result<(MoveChoice, u64), ApiError> {
        let _slot = slot;
        let mut player = build_player(&worker_state, worker_game.variant(), &spec)?;
        let mut limits = spec.limits();
        limits.stop = stop;
        if time.is_some() {
            limits.time = time;
        }
        // Without any limit a player uses its own default; cap the time all the same.
        if limits.time.is_none() || limits.time > Some(MAX_MOVE_TIME) {
            limits.time = Some(MAX_MOVE_TIME);
        }
        let started = std::time::Instant::now();
        let choice =
            player.choose(&worker_game, &limits).map_err(|e| ApiError::Engine(format!("{}: {e}", spec.name())))?;
        Ok((choice, started.elapsed().as_millis() as u64))
    });
    // A search that overruns its time by far (a hung external engine) is abandoned.
    let limit = time.unwrap_or(MAX_MOVE_TIME) + Duration::from_secs(30);
    let joined = tokio::time::timeout(limit, search)
        .await
        .map_err(|_| ApiError::Engine("the engine did not answer in time".into()))?;
    let (choice, ms) = joined.map_err(|e| ApiError::Engine(format!("the search failed: {e}")))??;
    let side = game.position().side_to_move();
    let mut game = game;
    let mut plies = plies;
    let ply = play_text(&mut game, &choice.mv.to_string())
        .map_err(|e| ApiError::Engine(format!("{name} chose an illegal move {}: {e}", choice.mv)))?;
    plies.push(ply);
    Ok(Json(EngineView { player: name, choice: ChoiceView::new(&choice, side, ms), game: view(&game, plies) }))
}

/// A record (or FEN) to import.
#[derive(Debug, Clone, Deserialize)]
pub struct RecordRequest {
    /// The variant's name.
    pub variant: Option<String>,
    /// Archive lines, a move list, `# start FEN` comments, or a FEN alone.
    pub text: String,
    /// Which game of several (1 = the first, the default).
    pub game: Option<usize>,
}

/// An imported game.
#[derive(Debug, Clone, Serialize)]
pub struct RecordView {
    /// Games in the text.
    pub games: usize,
    /// The game shown (1-based).
    pub number: usize,
    /// The result column as written, if any.
    pub result: Option<String>,
    /// The game after all its moves.
    pub game: GameView,
}

/// `POST /api/record`: a record file or a FEN as a game.
///
/// # Errors
/// Text that is neither a FEN nor a record, an illegal move (named by line and ply), a game
/// number beyond the file.
pub async fn record(
    State(state): State<Arc<AppState>>,
    body: Result<Json<RecordRequest>, JsonRejection>,
) -> Result<Json<RecordView>, ApiError> {
    let Json(request) = body?;
    let variant = state.variant(request.variant.as_deref())?;
    let parsed = parse_record(variant, &request.text, request.game.unwrap_or(1))?;
    let (game, plies) = replay(
        &state,
        &GameRequest { variant: Some(variant.name().to_string()), start: Some(parsed.start), moves: parsed.moves },
    )
    .map_err(|e| ApiError::BadRequest(format!("game {} (line {}): {e}", parsed.number, parsed.line)))?;
    Ok(Json(RecordView { games: parsed.games, number: parsed.number, result: parsed.result, game: view(&game, plies) }))
}

/// One game found in a record text.
struct ParsedRecord {
    start: String,
    moves: Vec<String>,
    result: Option<String>,
    games: usize,
    number: usize,
    line: usize,
}

/// Finds game `number` in `text`: archive lines or move lists, one game per line, `#` comments
/// (`# start FEN` sets the next game's start); a text that is one FEN is a game without moves.
fn parse_record(variant: &'static Variant, text: &str, number: usize) -> Result<ParsedRecord, ApiError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ApiError::BadRequest("the record is empty".into()));
    }
    if !trimmed.contains('\n') && !trimmed.contains(',') && trimmed.contains('/') {
        let position = Position::from_fen(variant, trimmed)
            .map_err(|e| ApiError::BadRequest(format!("bad FEN `{trimmed}`: {e}")))?;
        return Ok(ParsedRecord {
            start: position.to_fen(),
            moves: Vec::new(),
            result: None,
            games: 1,
            number: 1,
            line: 1,
        });
    }
    let size = variant.size();
    let mut start = Position::start(variant).to_fen();
    let mut found = None;
    let mut games = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(fen) = comment.trim().strip_prefix("start ") {
                start = Position::from_fen(variant, fen.trim())
                    .map_err(|e| ApiError::BadRequest(format!("line {}: `# start {fen}`: {e}", i + 1)))?
                    .to_fen();
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        games += 1;
        if games == number {
            let bad = |e: tafl_rules::ParseError| ApiError::BadRequest(format!("line {}: {e}", i + 1));
            let (plies, result) = if line.contains(',') {
                let g = parse_archive_line(line, size).map_err(bad)?;
                (g.plies, g.result)
            } else {
                (parse_move_list(line, size).map_err(bad)?.0, None)
            };
            let moves = plies.into_iter().map(|p| p.text).collect();
            found = Some(ParsedRecord { start: start.clone(), moves, result, games: 0, number, line: i + 1 });
        }
        start = Position::start(variant).to_fen();
    }
    match found {
        Some(record) => Ok(ParsedRecord { games, ..record }),
        None => Err(ApiError::BadRequest(format!("the record holds {games} games, not {number}"))),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::ServeConfig;

    fn state() -> AppState {
        AppState::new(ServeConfig::new(vec!["random".parse().expect("a spec")]))
    }

    proptest! {
        // Whatever the page sends, the answer is a game or an error, never a panic.
        #[test]
        fn any_record_text_parses_or_fails_cleanly(text in "(#? ?[a-m]{0,2}[0-9]{0,2}[-x/ ,]?[adk0-9]{0,3}\n?){0,12}") {
            let _ = parse_record(Variant::copenhagen(), &text, 1);
        }

        #[test]
        fn any_move_list_replays_or_fails_cleanly(moves in proptest::collection::vec("[a-l][0-9]{1,2}-?[a-l][0-9]{1,2}(x[a-l][0-9])?", 0..12), variant in 0usize..4) {
            let state = state();
            let name = state.config.variants[variant % state.config.variants.len()].name().to_string();
            if let Ok((game, plies)) = replay(&state, &GameRequest { variant: Some(name), start: None, moves }) {
                let view = view(&game, plies);
                prop_assert_eq!(view.board.len(), usize::from(view.size));
            }
        }
    }

    #[test]
    fn record_numbers_and_starts() {
        let text = "# start 11/11/11/11/11/11/11/11/11/11/2k8 d\nc1-a1,0,0,White\n\nd1-d3\n";
        let first = parse_record(Variant::copenhagen(), text, 1).unwrap();
        assert_eq!(first.start, "11/11/11/11/11/11/11/11/11/11/2k8 d");
        assert_eq!(first.games, 2);
        let second = parse_record(Variant::copenhagen(), text, 2).unwrap();
        assert_eq!(second.start, Position::start(Variant::copenhagen()).to_fen(), "a start is for the next game only");
        assert_eq!(second.line, 4);
    }
}
