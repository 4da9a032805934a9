//! `tafl serve` against a hostile web page and a careless client: no request may run a program
//! or a player the operator did not name, requests from elsewhere are refused, and nothing a
//! request asks for holds a search slot, a thread or a connection beyond its bounds.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use proptest::prelude::*;
use serde_json::{Value, json};
use tafl_web::{AppState, ServeConfig, router};
use tower::ServiceExt;

fn config(players: &[&str]) -> ServeConfig {
    ServeConfig::new(players.iter().map(|p| p.parse().expect("a spec")).collect())
}

fn app(config: ServeConfig) -> Router {
    router(Arc::new(AppState::new(config)))
}

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, String) {
    let response = app.clone().oneshot(request).await.expect("the router answers");
    let status = response.status();
    let bytes = response.into_body().collect().await.expect("a body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

fn post(uri: &str) -> axum::http::request::Builder {
    Request::post(uri).header("host", "127.0.0.1:8080").header("content-type", "application/json")
}

/// A file the shell command of a hostile spec would create.
fn marker(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("tafl-web-pwned-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

#[tokio::test]
async fn no_request_runs_a_program() {
    let app = app(config(&["alphabeta:depth=1"]));
    let pwned = marker("spec");
    let spec = format!("htp:cmd=/bin/sh -c touch {}", pwned.display());
    // The request, as a GET with the spec in the query: no such route any more.
    let uri = format!("/api/analyse?player={}", spec.replace(' ', "%20").replace('/', "%2F"));
    let (status, _) =
        send(&app, Request::get(&uri).header("host", "127.0.0.1:8080").body(Body::empty()).expect("a request")).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    // The spec by name, on every route that builds a player.
    for route in ["/api/engine", "/api/analyse", "/api/game-values"] {
        let body = json!({ "player": spec, "time_ms": 100, "ms": 100 });
        let (status, text) = send(&app, post(route).body(Body::from(body.to_string())).expect("a request")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{route}: {text}");
        assert!(text.contains("unknown player") && text.contains("alphabeta:depth=1"), "{route}: {text}");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pwned.exists(), "a request ran a program");
}

#[tokio::test]
async fn requests_from_elsewhere_are_refused() {
    let app = app(config(&["alphabeta:depth=1"]));
    let body = json!({ "moves": [], "time_ms": 50 });
    let refused = [
        ("host", "rebound.attacker.example:8080", "Host"),
        ("origin", "http://attacker.example", "attacker.example"),
        ("sec-fetch-site", "cross-site", "cross-site"),
    ];
    for (header, value, said) in refused {
        let mut request = post("/api/engine").body(Body::from(body.to_string())).expect("a request");
        request.headers_mut().insert(header, value.parse().expect("a header value"));
        let (status, text) = send(&app, request).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{header}: {value}: {text}");
        assert!(text.contains(said), "{text}");
    }
    // A form or a no-cors fetch can only send text/plain (no preflight): not JSON here.
    let request = Request::post("/api/engine")
        .header("host", "127.0.0.1:8080")
        .header("content-type", "text/plain")
        .body(Body::from(body.to_string()))
        .expect("a request");
    let (status, text) = send(&app, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("application/json"), "{text}");
    // The page itself, as a browser sends it.
    let request = post("/api/engine")
        .header("origin", "http://127.0.0.1:8080")
        .header("sec-fetch-site", "same-origin")
        .body(Body::from(body.to_string()))
        .expect("a request");
    let (status, text) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
}

#[tokio::test]
async fn times_asked_for_are_bounded() {
    let app = app(config(&["alphabeta:depth=1"]));
    // A move time of years, an analysis of days: answered within the bounds.
    let body = json!({ "moves": [], "time_ms": u64::MAX });
    let started = Instant::now();
    let (status, text) = send(&app, post("/api/engine").body(Body::from(body.to_string())).expect("a request")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(started.elapsed() < Duration::from_secs(5), "depth 1 answers at once");
    let body = json!({ "moves": [], "ms": u64::MAX, "player": "alphabeta:depth=1" });
    let (status, _) = send(&app, post("/api/game-values").body(Body::from(body.to_string())).expect("a request")).await;
    assert_eq!(status, StatusCode::OK);
}

/// A server on a free port of 127.0.0.1, serving `config` on its own runtime thread.
fn start(config: ServeConfig) -> SocketAddr {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = std_listener.local_addr().expect("an address");
    std_listener.set_nonblocking(true).expect("non-blocking");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(std_listener).expect("a tokio listener");
            let _ = tafl_web::serve(listener, config).await;
        });
    });
    addr
}

/// Sends a whole HTTP/1.1 request on a new connection; returns the connection.
fn open_request(addr: SocketAddr, method: &str, path: &str, body: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("a connection");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes())).expect("sent");
    stream
}

/// The status of a whole request's answer (closing the connection after it).
fn status_of(addr: SocketAddr, method: &str, path: &str, body: &str) -> u16 {
    let mut stream = open_request(addr, method, path, body);
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("a timeout");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("an answer");
    String::from_utf8_lossy(&head[9..12]).parse().expect("a status")
}

/// Waits until a search slot is free again (a quick engine move is answered 200, not 503);
/// returns how long that took.
fn until_a_slot_is_free(addr: SocketAddr) -> Duration {
    let started = Instant::now();
    let quick = json!({ "moves": [], "player": "alphabeta:depth=1" }).to_string();
    while started.elapsed() < Duration::from_secs(20) {
        if status_of(addr, "POST", "/api/engine", &quick) == 200 {
            return started.elapsed();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    started.elapsed()
}

#[test]
fn searches_end_soon_after_their_clients_leave() {
    let mut config = config(&["alphabeta:depth=1", "alphabeta:time=30s", "mcts:model=none,gumbel=false"]);
    config.max_searches = 1;
    let addr = start(config);
    let long_engine = json!({ "moves": [], "player": "alphabeta:time=30s", "time_ms": 60_000 }).to_string();
    let long_analysis = json!({ "moves": [], "player": "mcts:model=none,gumbel=false", "ms": 120_000 }).to_string();
    for (route, body) in [("/api/engine", &long_engine), ("/api/analyse", &long_analysis)] {
        let client = open_request(addr, "POST", route, body);
        std::thread::sleep(Duration::from_millis(500));
        // The one slot is taken: a second search is told so at once.
        assert_eq!(status_of(addr, "POST", "/api/engine", &json!({ "moves": [] }).to_string()), 503, "{route}");
        drop(client);
        let freed = until_a_slot_is_free(addr);
        assert!(freed < Duration::from_millis(1500), "{route}: the search went on for {freed:?} after its client left");
    }
}

#[test]
fn idle_connections_are_closed() {
    let mut config = config(&["alphabeta:depth=1"]);
    config.header_timeout = Duration::from_millis(400);
    let addr = start(config);
    // Wait for the server to listen.
    assert_eq!(status_of(addr, "GET", "/api/info", ""), 200);
    let mut idle = TcpStream::connect(addr).expect("a connection");
    idle.set_read_timeout(Some(Duration::from_secs(10))).expect("a timeout");
    let started = Instant::now();
    let mut buf = [0u8; 64];
    // Closed (0 bytes) or reset, well before the read timeout.
    let _ = idle.read(&mut buf);
    assert!(started.elapsed() < Duration::from_secs(3), "an idle connection stayed open {:?}", started.elapsed());
    // Half a request line, never finished: closed as well.
    let mut slow = TcpStream::connect(addr).expect("a connection");
    slow.write_all(b"POST /api/engine HTTP/1.1\r\nHost: ").expect("sent");
    slow.set_read_timeout(Some(Duration::from_secs(10))).expect("a timeout");
    let started = Instant::now();
    let _ = slow.read(&mut buf);
    assert!(started.elapsed() < Duration::from_secs(3), "a slow header stayed open {:?}", started.elapsed());
    // And the server still answers.
    assert_eq!(status_of(addr, "GET", "/api/info", ""), 200);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    // Whatever player names, specs and limits a client sends, the server answers within the
    // bounds with a JSON error or an answer, and runs only the players it offers.
    #[test]
    fn random_players_and_limits_are_answered_within_bounds(
        player in prop_oneof![
            Just("alphabeta:depth=1".to_string()),
            Just("random".to_string()),
            "(htp|mcts|alphabeta|builtin|random)(:[a-z]{1,6}=[a-z0-9/ ]{0,12}){0,3}",
            "\\PC{0,40}",
        ],
        time_ms in prop_oneof![Just(u64::MAX), 0u64..40],
        route in prop_oneof![Just("/api/engine"), Just("/api/analyse"), Just("/api/game-values")],
        moves in proptest::collection::vec("[a-k][1-9]-[a-k][1-9]", 0..3),
    ) {
        let app = app(config(&["alphabeta:depth=1", "random"]));
        let ms = time_ms.min(40);
        let body = json!({ "player": player, "time_ms": time_ms, "ms": ms, "moves": moves });
        let started = Instant::now();
        let (status, text) = runtime().block_on(send(&app, post(route).body(Body::from(body.to_string())).expect("a request")));
        prop_assert!(started.elapsed() < Duration::from_secs(10), "{route} took {:?}", started.elapsed());
        let offered = player == "alphabeta:depth=1" || player == "random";
        if offered {
            prop_assert!(status == StatusCode::OK || status == StatusCode::BAD_REQUEST, "{status}: {text}");
        } else {
            prop_assert_eq!(status, StatusCode::BAD_REQUEST, "{}", text);
        }
        if status != StatusCode::OK {
            let error: Value = serde_json::from_str(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
            prop_assert!(error["error"].is_string());
        }
    }
}
