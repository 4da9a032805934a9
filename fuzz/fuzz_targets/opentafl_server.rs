#![no_main]
//! OpenTafl engine protocol, server side: any lines (rules strings, positions, moves, clocks)
//! never panic the server; also the OTN rules and move parsers alone.
use libfuzzer_sys::fuzz_target;
use tafl_protocol::engine::EngineOptions;
use tafl_protocol::opentafl::{OpenTaflServer, parse_otn_move, parse_rules};
use tafl_rules::Variant;
use tafl_search::RandomPlayer;

fuzz_target!(|text: &str| {
    if let Ok(rules) = parse_rules(text) {
        let _ = rules.variant();
    }
    for size in [7, 11, 13] {
        let _ = parse_otn_move(text, size);
    }
    let mut server =
        OpenTaflServer::new(Box::new(RandomPlayer::new(1)), Variant::copenhagen(), EngineOptions::default());
    let mut out = Vec::new();
    for line in text.lines().take(64) {
        if !server.handle(line, &mut out).expect("in-memory io") {
            break;
        }
    }
});
