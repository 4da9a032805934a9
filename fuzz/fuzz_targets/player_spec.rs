#![no_main]
//! Player specs (`alphabeta:depth=3,time=1s`, …) from the command line, configs and tournament
//! files: parsing never panics, a spec's text reads back to the same spec, and building a
//! player that starts no program never panics either.
use libfuzzer_sys::fuzz_target;
use tafl_arena::{PlayerKind, PlayerSpec, netless_player};

fuzz_target!(|text: &str| {
    if let Ok(spec) = text.parse::<PlayerSpec>() {
        let _ = spec.limits();
        assert_eq!(spec.to_string().parse::<PlayerSpec>().as_ref(), Ok(&spec));
        // `htp` and `uci` start the program named in the spec: not from a fuzzer.
        if !matches!(spec.kind(), PlayerKind::Htp(_) | PlayerKind::Uci(_)) {
            let _ = netless_player(&spec, 7);
        }
    }
});
