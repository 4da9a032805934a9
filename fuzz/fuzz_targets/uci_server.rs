#![no_main]
//! UCI-style server: any input never panics it, and every `go` is answered with one
//! `bestmove` line.
use libfuzzer_sys::fuzz_target;
use tafl_protocol::engine::EngineOptions;
use tafl_protocol::uci::UciServer;
use tafl_rules::Variant;
use tafl_search::RandomPlayer;

fuzz_target!(|text: &str| {
    // Keep to a few dozen lines: each `go` starts a search thread.
    let input: String = text.lines().take(32).map(|l| format!("{l}\n")).collect();
    let mut server = UciServer::new(Box::new(RandomPlayer::new(1)), Variant::copenhagen(), EngineOptions::default());
    let mut out: Vec<u8> = Vec::new();
    server.run(&mut input.as_bytes(), &mut out).expect("in-memory io");
});
