#![no_main]
//! OpenTafl record parsing never panics and round-trips.
use libfuzzer_sys::fuzz_target;
use tafl_rules::{Position, Side, Variant};

fuzz_target!(|text: &str| {
    let v = Variant::copenhagen();
    if let Ok(p) = Position::from_opentafl(v, text, Side::Defenders) {
        assert_eq!(Position::from_opentafl(v, &p.to_opentafl(), Side::Defenders).unwrap(), p);
    }
});
