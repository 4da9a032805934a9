#![no_main]
//! Variant files: parsing never panics; a variant that loads has a playable start.
use libfuzzer_sys::fuzz_target;
use tafl_rules::{Game, Variant};

fuzz_target!(|text: &str| {
    if let Ok(v) = Variant::from_toml(text) {
        let game = Game::new(v.leak());
        let _ = game.legal_moves();
    }
});
