//! The JSON API of `tafl serve`, in-process (no socket, no browser): what the page relies on,
//! and that bad input gets a clear JSON error rather than a crash.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tafl_web::{AppState, ServeConfig, router};
use tower::ServiceExt;

const START: &str = "3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 a";

/// The players the test server offers; the first is its default.
const PLAYERS: [&str; 4] = ["alphabeta:depth=1", "random:seed=3", "alphabeta:time=5s", "mcts:model=none,visits=32"];

fn config_with(players: &[&str]) -> ServeConfig {
    ServeConfig::new(players.iter().map(|p| p.parse().expect("a spec")).collect())
}

fn app(runs: Vec<PathBuf>) -> Router {
    let mut config = config_with(&PLAYERS);
    config.runs = runs;
    router(Arc::new(AppState::new(config)))
}

/// The Host header of every request: the page's own server.
const HOST: &str = "127.0.0.1:8080";

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, String) {
    let response = app.clone().oneshot(request).await.expect("the router answers");
    let status = response.status();
    let bytes = response.into_body().collect().await.expect("a body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

async fn get(app: &Router, uri: &str) -> (StatusCode, String) {
    send(app, Request::get(uri).header("host", HOST).body(Body::empty()).expect("a request")).await
}

async fn post_text(app: &Router, uri: &str, body: &Value) -> (StatusCode, String) {
    let request = Request::post(uri)
        .header("host", HOST)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a request");
    send(app, request).await
}

async fn post(app: &Router, uri: &str, body: &Value) -> (StatusCode, Value) {
    let (status, text) = post_text(app, uri, body).await;
    (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}")))
}

fn error_of(body: &Value) -> &str {
    body["error"].as_str().unwrap_or_else(|| panic!("no error in {body}"))
}

#[tokio::test]
async fn serves_the_page_and_its_assets() {
    let app = app(Vec::new());
    let (status, page) = get(&app, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("/assets/app.js") && page.contains("id=\"board\""));
    for asset in ["app.js", "style.css", "uPlot.iife.min.js", "uPlot.min.css"] {
        let (status, body) = get(&app, &format!("/assets/{asset}")).await;
        assert_eq!(status, StatusCode::OK, "{asset}");
        assert!(body.len() > 500, "{asset}");
    }
    let (status, body) = get(&app, "/assets/nope.js").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("\"error\""));
    let (status, body) = get(&app, "/api/nothing").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("\"error\""));
}

#[tokio::test]
async fn info_lists_variants_player_and_runs() {
    let (status, body) = get(&app(vec![PathBuf::from("/tmp/some-run")]), "/api/info").await;
    assert_eq!(status, StatusCode::OK);
    let info: Value = serde_json::from_str(&body).expect("JSON");
    let names: Vec<&str> =
        info["variants"].as_array().expect("variants").iter().filter_map(|v| v["name"].as_str()).collect();
    assert!(names.contains(&"copenhagen") && names.contains(&"brandubh") && names.contains(&"tablut"), "{names:?}");
    assert_eq!(info["player"], "alphabeta:depth=1");
    assert_eq!(info["players"], json!(PLAYERS));
    assert_eq!(info["runs"][0]["path"], "/tmp/some-run");
}

#[tokio::test]
async fn a_game_is_replayed_with_everything_to_draw() {
    let app = app(Vec::new());
    let (status, view) = post(&app, "/api/game", &json!({ "variant": "copenhagen", "moves": [] })).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["fen"], START);
    assert_eq!(view["size"], 11);
    assert_eq!(view["board"].as_array().expect("ranks").len(), 11);
    assert_eq!(view["board"][0], "...aaaaa...");
    assert_eq!(view["thrones"], json!(["f6"]));
    assert_eq!(view["corners"].as_array().expect("corners").len(), 4);
    assert_eq!(view["side_to_move"], "attackers");
    assert!(view["legal"]["d1"].as_array().expect("d1 moves").contains(&json!("d3")));
    assert!(view["legal"].get("f6").is_none(), "the king does not move first");
    assert_eq!(view["danger"]["king"], "f6");

    // Brandubh on 7x7, and a capture: the ply text lists it and the record counts it.
    let (status, view) = post(&app, "/api/game", &json!({ "variant": "brandubh", "moves": [] })).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view["size"], 7);
    let (status, view) = post(
        &app,
        "/api/game",
        &json!({ "start": "11/11/11/11/11/4a1d4/11/11/11/11/5k5 a", "moves": ["e6-e4", "g6-g5"] }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["plies"].as_array().expect("plies").len(), 2);
    assert!(view["standard_start"] == false);
}

#[tokio::test]
async fn captures_are_shown_and_recorded() {
    let app = app(Vec::new());
    // The attacker from j5 to f5 takes the defender on e5 against the attacker on d5.
    let start = "11/11/11/11/11/11/3ad4a1/11/11/11/5k5 a";
    let (status, view) = post(&app, "/api/game", &json!({ "start": start, "moves": ["j5-f5"] })).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let ply = &view["plies"][0];
    assert_eq!(ply["captured"], json!(["e5"]), "{view}");
    assert_eq!(ply["text"], "j5-f5xe5");
    assert!(view["record"].as_str().expect("record").starts_with("j5-f5xe5,1,0,"), "{view}");
    // A record whose capture list disagrees with the rules is refused.
    let (status, body) = post(&app, "/api/game", &json!({ "start": start, "moves": ["j5-f5xd5"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("captures"), "{body}");
}

#[tokio::test]
async fn bad_moves_positions_and_bodies_get_clear_errors() {
    let app = app(Vec::new());
    let (status, body) = post(&app, "/api/game", &json!({ "moves": ["d1-d9"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).starts_with("move 1 `d1-d9`"), "{body}");
    let (status, body) = post(&app, "/api/game", &json!({ "moves": ["f6-f7"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the king is not the attackers' piece");
    assert!(error_of(&body).contains("f6-f7"), "{body}");
    let (status, body) = post(&app, "/api/game", &json!({ "moves": ["zz"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("move 1"), "{body}");
    let (status, body) = post(&app, "/api/game", &json!({ "start": "not a fen" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("bad FEN"), "{body}");
    let (status, body) = post(&app, "/api/game", &json!({ "start": "11/11/11/11/11/5kk4/11/11/11/11/11 a" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("bad FEN"), "{body}");
    let (status, body) = post(&app, "/api/game", &json!({ "variant": "chess" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("unknown variant `chess`"), "{body}");
    let (status, body) = post(&app, "/api/game", &json!({ "moves": "d1-d3" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let request = Request::post("/api/game")
        .header("host", HOST)
        .header("content-type", "application/json")
        .body(Body::from("{\"moves\": ["))
        .expect("a request");
    let (status, text) = send(&app, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("\"error\""), "{text}");
    let huge = json!({ "moves": vec!["d1-d3"; 200_000] });
    let (status, body) = post(&app, "/api/game", &huge).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let (status, body) = post(&app, "/api/game", &json!({ "moves": vec!["d1-d3"; 2001] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("at most"), "{body}");
}

#[tokio::test]
async fn the_danger_hint_marks_a_king_closed_on_three_sides() {
    let app = app(Vec::new());
    let (status, view) = post(&app, "/api/game", &json!({ "start": "11/11/11/11/3a7/2aka6/11/11/11/11/11 d" })).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["danger"]["surrounded"], true);
    assert_eq!(view["danger"]["king"], "d6");
    let (_, view) = post(&app, "/api/game", &json!({ "start": "11/11/11/11/11/11/11/11/11/11/2k8 a" })).await;
    assert_eq!(view["danger"]["sees_corners"], json!(["a1", "k1"]));
}

#[tokio::test]
async fn the_engine_answers_with_a_legal_move() {
    let app = app(Vec::new());
    let (status, body) = post(&app, "/api/engine", &json!({ "moves": ["d1-d3"], "player": "random:seed=3" })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["game"]["plies"].as_array().expect("plies").len(), 2);
    assert_eq!(body["game"]["plies"][1]["side"], "defenders");
    assert_eq!(body["game"]["side_to_move"], "attackers");
    let (status, body) = post(&app, "/api/engine", &json!({ "moves": [], "time_ms": 300 })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["player"], "alphabeta:depth=1");
    assert!(body["choice"]["value"].is_number(), "{body}");
    assert_eq!(body["choice"]["pv"][0], body["choice"]["move"]);
    // Only the players offered: anything else is an unknown name, never built.
    for name in ["nonsense:x=1", "alphabeta:depth=2", "random"] {
        let (status, body) = post(&app, "/api/engine", &json!({ "player": name })).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            error_of(&body).contains(&format!("unknown player `{name}`")) && error_of(&body).contains("random:seed=3"),
            "{body}"
        );
    }
    // The king on a corner: the game is over.
    let (status, body) =
        post(&app, "/api/engine", &json!({ "start": "11/11/11/11/11/11/11/11/11/11/1k9 d", "moves": ["b1-a1"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(error_of(&body).contains("over"), "{body}");
}

#[tokio::test]
async fn records_and_fens_are_imported() {
    let app = app(Vec::new());
    let (status, body) = post(&app, "/api/record", &json!({ "text": START })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["game"]["fen"], START);
    let text = "# a comment\nd1-d3 e5-e2,0,0,Ongoing\n# start 11/11/11/11/11/11/11/11/11/11/2k8 d\nc1-a1,0,0,White\n";
    let (status, body) = post(&app, "/api/record", &json!({ "text": text, "game": 2 })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["games"], 2);
    assert_eq!(body["result"], "White");
    assert_eq!(body["game"]["outcome"]["winner"], "defenders");
    assert_eq!(body["game"]["outcome"]["reason"], "king-escaped");
    let (status, body) = post(&app, "/api/record", &json!({ "text": "d1-d3 e5-e2" })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["game"]["plies"].as_array().expect("plies").len(), 2);
    let (status, body) = post(&app, "/api/record", &json!({ "text": "d1-d3 d3-d1 q9-q9,0,0,Ongoing" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("line 1"), "{body}");
    let (status, body) = post(&app, "/api/record", &json!({ "text": "d1-d3 d1-d2" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("move 2"), "{body}");
    let (status, body) = post(&app, "/api/record", &json!({ "text": "3aaaaa3/5a5/11 a" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("bad FEN"), "{body}");
    let (status, body) = post(&app, "/api/record", &json!({ "text": "d1-d3", "game": 4 })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("1 games, not 4"), "{body}");
    let (status, body) = post(&app, "/api/record", &json!({ "text": "  " })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&body).contains("empty"), "{body}");
}

/// The events of a server-sent event stream: (name, data).
fn events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let name = block.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = block.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or("null");
            Some((name.to_string(), serde_json::from_str(data).unwrap_or(Value::Null)))
        })
        .collect()
}

#[tokio::test]
async fn analysis_streams_deeper_searches_until_its_time_is_spent() {
    let app = app(Vec::new());
    let request = json!({ "variant": "copenhagen", "moves": ["d1-d3"], "player": "alphabeta:time=5s", "ms": 1500 });
    let (status, text) = post_text(&app, "/api/analyse", &request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = events(&text);
    let searches: Vec<&Value> = events.iter().filter(|(n, _)| n == "search").map(|(_, d)| d).collect();
    assert!(searches.len() >= 2, "{text}");
    assert!(
        searches.iter().all(|s| s["pv"].as_array().is_some_and(|pv| !pv.is_empty()) && s["value"].is_number()),
        "{text}"
    );
    assert!(searches.windows(2).all(|w| w[0]["elapsed_ms"].as_u64() <= w[1]["elapsed_ms"].as_u64()), "{text}");
    // Each answer goes at least as deep as the one before: the last is the deepest.
    assert!(searches.windows(2).all(|w| w[0]["depth"].as_u64() <= w[1]["depth"].as_u64()), "{text}");
    assert!(searches.iter().all(|s| s["unit"] == "nodes"), "{text}");
    assert!(searches.windows(2).all(|w| w[0]["nodes_total"].as_u64() < w[1]["nodes_total"].as_u64()), "{text}");
    assert_eq!(events.last().map(|e| e.0.as_str()), Some("done"));
    assert!(!events.iter().any(|(n, _)| n == "policy"), "alpha-beta has no net");

    let (status, text) = post_text(&app, "/api/analyse", &json!({ "moves": ["d1-d9"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("d1-d9"), "{text}");
    let (status, text) = post_text(&app, "/api/analyse", &json!({ "player": "mcts:model=/nonexistent/model" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("unknown player") && !text.contains("No such file"), "{text}");
    let (status, text) = post_text(&app, "/api/analyse", &json!({ "ms": "lots" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("\"error\""), "{text}");
}

#[tokio::test]
async fn an_mcts_analysis_counts_visits_that_only_grow() {
    let app = app(Vec::new());
    let request = json!({ "variant": "brandubh", "player": "mcts:model=none,visits=32", "ms": 1200 });
    let (status, text) = post_text(&app, "/api/analyse", &request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let searches: Vec<Value> = events(&text).into_iter().filter(|(n, _)| n == "search").map(|(_, d)| d).collect();
    assert!(searches.len() >= 2, "{text}");
    assert!(searches.iter().all(|s| s["unit"] == "visits"), "{text}");
    // The depth is the line's length, not a count of visits.
    assert!(searches.iter().all(|s| s["depth"].as_u64() == s["pv"].as_array().map(|pv| pv.len() as u64)), "{text}");
    assert!(searches.windows(2).all(|w| w[0]["nodes_total"].as_u64() < w[1]["nodes_total"].as_u64()), "{text}");
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-web-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir
}

/// A checkpoint of a tiny untrained net for `variant`.
fn tiny_net(dir: &Path, variant: &'static tafl_rules::Variant) {
    let config = tafl_nn::TaflNetConfig::new(usize::from(variant.size()), tafl_nn::INPUT_PLANES, 1, 8);
    let net = config.init(&tafl_nn::device());
    let meta = tafl_nn::checkpoint::CheckpointMeta::new(variant.name(), 1);
    tafl_nn::checkpoint::save(dir, &net, &config, &meta, None).expect("saving a checkpoint");
}

#[tokio::test]
async fn a_net_player_shows_its_policy_over_the_board() {
    let base = temp_dir("net");
    let model = base.join("model");
    tiny_net(&model, tafl_rules::Variant::preset("brandubh").expect("brandubh"));
    let spec = format!("mcts:model={},visits=16", model.display());
    let app = router(Arc::new(AppState::new(config_with(&[&spec]))));
    let (status, text) =
        post_text(&app, "/api/analyse", &json!({ "variant": "brandubh", "player": spec, "ms": 300 })).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = events(&text);
    assert_eq!(events[0].0, "policy", "{text}");
    let policy = &events[0].1;
    let total: f64 = policy["to"].as_object().expect("heat by square").values().filter_map(Value::as_f64).sum();
    assert!((total - 1.0).abs() < 1e-3, "{policy}");
    assert!(policy["value"].as_f64().is_some_and(|v| (-1.0..=1.0).contains(&v)), "{policy}");
    assert!(events.iter().any(|(n, _)| n == "search"), "{text}");
    let _ = std::fs::remove_dir_all(&base);
}

#[tokio::test]
async fn game_values_come_for_every_ply() {
    let app = app(Vec::new());
    let (status, text) = post_text(
        &app,
        "/api/game-values",
        &json!({ "moves": ["d1-d3", "e5-e2"], "player": "alphabeta:depth=1", "ms": 50 }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let values: Vec<Value> = events(&text).into_iter().filter(|(n, _)| n == "value").map(|(_, d)| d).collect();
    assert_eq!(values.len(), 3, "{text}");
    assert_eq!(values[0]["played"], "d1-d3");
    assert!(values[2]["played"].is_null());
    assert!(values.iter().all(|v| v["value_attackers"].is_number()), "{text}");
}

#[tokio::test]
async fn a_run_shows_metrics_models_and_games() {
    let run = temp_dir("run");
    std::fs::create_dir_all(run.join("logs")).expect("logs");
    std::fs::create_dir_all(run.join("arena")).expect("arena");
    std::fs::create_dir_all(run.join("models")).expect("models");
    let metrics = [
        json!({"event": "selfplay", "time": 1000.0, "games": 64, "evals_per_s": 900.0, "moves_per_s": 80.0, "games_per_s": 0.5, "attacker_wins": 40, "defender_wins": 20, "draws": 4}),
        json!({"event": "optimize", "time": 1500.0, "iteration": 1, "loss": 3.2, "policy_loss": 2.5, "value_loss": 0.7}),
        json!({"event": "eval", "time": 2000.0, "model": "m000001", "opponent": "alphabeta:depth=1", "elo": -120.0, "score": 0.33}),
    ];
    let mut text: String = metrics.iter().map(|m| format!("{m}\n")).collect();
    text.push_str("{\"cut by a kill\n");
    std::fs::write(run.join("logs/metrics.jsonl"), text).expect("metrics");
    std::fs::write(run.join("config.toml"), "[run]\nvariant = \"brandubh\"\n").expect("config");
    let meta = tafl_run::rundir::ModelInfo { iteration: 1, net: "b1c8".into(), ..Default::default() };
    let config = tafl_nn::TaflNetConfig::new(7, tafl_nn::INPUT_PLANES, 1, 8);
    let net = config.init(&tafl_nn::device());
    tafl_nn::checkpoint::save(&run.join("models/m000001"), &net, &config, &meta.into_meta("brandubh", 10), None)
        .expect("a model");
    std::fs::write(run.join("arena/gate-m000001.csv"), "# gate: m000001 vs m000000\nd1-d3 e5-e2,0,0,Ongoing\n")
        .expect("games");
    let app = app(vec![run.clone()]);
    let (status, body) = get(&app, "/api/runs/0").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let view: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(view["metrics"].as_array().expect("metrics").len(), 3);
    assert_eq!(view["variant"], "brandubh");
    assert_eq!(view["models"][0]["id"], "m000001");
    assert_eq!(view["models"][0]["meta"]["iteration"], 1);
    assert_eq!(view["models"][0]["meta"]["net"], "b1c8");
    assert_eq!(view["games"][0]["source"], "arena/gate-m000001.csv");
    assert_eq!(view["games"][0]["title"], "gate: m000001 vs m000000");
    let (status, body) = get(&app, "/api/runs/1").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("no run 1"), "{body}");
    let missing = app_with_missing_run();
    let (status, body) = get(&missing, "/api/runs/0").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("not a run directory"), "{body}");
    let _ = std::fs::remove_dir_all(&run);
}

fn app_with_missing_run() -> Router {
    app(vec![PathBuf::from("/nonexistent/tafl-run")])
}
