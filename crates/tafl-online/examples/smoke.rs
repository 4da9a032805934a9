#![allow(missing_docs, clippy::unwrap_used)]
use std::sync::{Arc, atomic::AtomicBool};
use tafl_online::*;
use tafl_rules::Side;
use tafl_search::{AlphaBeta, Player, RandomPlayer, Limits};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    // addr user player create(a|d|b|-) join(id|-) games time board depth
    let mut o = Options::new(&a[1], &a[2], "pw");
    o.create_account = true;
    o.create = match a[4].as_str() { "a" => vec![Side::Attackers], "d" => vec![Side::Defenders], "b" => vec![Side::Attackers, Side::Defenders], _ => vec![] };
    if a[5] != "-" { o.join = a[5].split(',').map(|x| x.parse().unwrap()).collect(); }
    o.games = Some(a[6].parse().unwrap());
    o.concurrent = 4;
    o.time = TimeControl::parse(&a[7]).unwrap();
    o.size = a[8].parse().unwrap();
    o.records = Some("/tmp/smoke-records".into());
    let depth: u32 = a[9].parse().unwrap();
    if depth > 0 { o.limits = Limits { depth: Some(depth), ..Limits::default() }; }
    let kind = a[3].clone();
    let mk = Box::new(move |size: u8| {
        let v = tafl_online::referee::variant_for(size).unwrap();
        let _ = v;
        Ok(if kind == "ab" { Box::new(AlphaBeta::new(Limits::default())) as Box<dyn Player> } else { Box::new(RandomPlayer::new(7)) as Box<dyn Player> })
    });
    let log = Arc::new(Log::new(Box::new(std::io::stderr())));
    let r = Client::new(o, mk, log, Arc::new(AtomicBool::new(false))).run();
    eprintln!("{r:?}");
}
