//! Perft from a FEN, for measuring the rules code without the CLI (which needs Burn):
//!
//! ```text
//! cargo run --release -p tafl-rules --example perft -- DEPTH [FEN] [--bulk] [--variant NAME]
//! valgrind --tool=callgrind target/release/examples/perft 3 '5a5/11/3a7/11/ddd8/k1d8/d1d8/11/11/3a7/5a5 d'
//! ```
//!
//! Without a FEN it starts from the variant's start position (Copenhagen unless `--variant`).
//! Every move is made unless `--bulk` counts the last ply from the move generator.

use std::process::ExitCode;

use tafl_rules::{Position, Variant};

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("perft: {message}");
            eprintln!("usage: perft DEPTH [FEN] [--bulk] [--variant NAME]");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut bulk = false;
    let mut variant_name = "copenhagen".to_string();
    let mut plain = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bulk" => bulk = true,
            "--variant" => variant_name = args.next().ok_or("--variant needs a name")?,
            _ => plain.push(arg),
        }
    }
    let mut plain = plain.into_iter();
    let depth: u32 = plain.next().ok_or("no depth")?.parse().map_err(|e| format!("depth: {e}"))?;
    let variant = Variant::preset(&variant_name).ok_or_else(|| format!("no preset {variant_name:?}"))?;
    let position = match plain.next() {
        Some(fen) => Position::from_fen(variant, &fen).map_err(|e| format!("FEN: {e}"))?,
        None => Position::start(variant),
    };
    if let Some(extra) = plain.next() {
        return Err(format!("unexpected argument {extra:?}"));
    }
    println!("{}", position.perft(depth, bulk));
    Ok(())
}
