//! Perft with the reference engine's rules (`hnefatafl-copenhagen` 6.4.1), for comparison with
//! `tafl perft`: the number of move sequences of each depth from the Copenhagen start, the last
//! ply counted from the move list.
//!
//! The reference forbids a defender move that recreates an earlier board (its repetition
//! rule); tafl's perft ignores repetition. Both counts are printed: `with-history` keeps the
//! reference's rule, `no-history` forgets earlier boards after every move and is the one to
//! compare.

use hnefatafl_copenhagen::game::{Game, PreviousBoards};
use hnefatafl_copenhagen::play::{Plae, Play};
use hnefatafl_copenhagen::status::Status;

fn perft(game: &Game, depth: u32, history: bool) -> u64 {
    if game.status != Status::Ongoing {
        return 0;
    }
    let legal = game.all_legal_moves();
    if depth == 1 {
        return legal.moves.values().map(|tos| tos.len() as u64).sum();
    }
    let mut total = 0;
    for (from, tos) in &legal.moves {
        for to in tos {
            let mut next = game.clone();
            let play = Plae::Play(Play { role: legal.role, from: *from, to: *to });
            next.play(&play).expect("a listed move is legal");
            if !history {
                next.previous_boards = PreviousBoards(Vec::new());
            }
            total += perft(&next, depth - 1, history);
        }
    }
    total
}

fn main() {
    let max: u32 = std::env::args().nth(1).and_then(|d| d.parse().ok()).unwrap_or(4);
    let start = Game::default();
    for depth in 1..=max {
        let t = std::time::Instant::now();
        let plain = perft(&start, depth, false);
        let with_history = perft(&start, depth, true);
        println!("depth {depth}: no-history {plain} with-history {with_history} ({:.1} s)", t.elapsed().as_secs_f64());
    }
}
