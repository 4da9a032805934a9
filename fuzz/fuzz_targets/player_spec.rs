#![no_main]
//! Player specs (`alphabeta:depth=3,time=1s`, …) from the command line and tournament files:
//! parsing never panics, and neither does building a player that starts no program.
use libfuzzer_sys::fuzz_target;
use tafl_arena::{PlayerSpec, netless_player};

fuzz_target!(|text: &str| {
    if let Ok(spec) = text.parse::<PlayerSpec>() {
        let _ = spec.limits();
        let _ = spec.to_string();
        // `htp` starts the program named in the spec: not from a fuzzer.
        if spec.kind != "htp" {
            let _ = netless_player(&spec, 7);
        }
    }
});
