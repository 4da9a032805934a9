#![no_main]
//! `summary.json` as `tafl ratings` reads it: a pool takes or refuses any text without
//! panicking, and whatever it took can be fitted (or refused) without panicking; every rating
//! fitted from counts it accepted is a number or an infinity, never NaN.
use libfuzzer_sys::fuzz_target;
use tafl_arena::Pool;

fuzz_target!(|texts: (&str, &str)| {
    let mut pool = Pool::new();
    let _ = pool.add_summary(texts.0);
    let _ = pool.add_summary(texts.1);
    if let Ok(entries) = pool.ratings(None) {
        assert!(entries.iter().all(|e| !e.elo.is_nan()));
    }
});
