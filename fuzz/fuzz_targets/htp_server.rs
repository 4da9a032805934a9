#![no_main]
//! HTP server side: any bytes a frontend sends, line by line, never panic the server, and the
//! game it keeps is legal.
use libfuzzer_sys::fuzz_target;
use tafl_protocol::htp::{HtpServer, HtpServerOptions};
use tafl_rules::{Game, Variant};
use tafl_search::RandomPlayer;

fuzz_target!(|text: &str| {
    let mut server = HtpServer::new(Box::new(RandomPlayer::new(1)), Variant::copenhagen(), HtpServerOptions::default());
    for line in text.lines().take(64) {
        let _ = server.handle(line).render();
        // The game the server keeps replays legally from its start to the same position.
        let game = server.game();
        let mut replayed = Game::from_position(*game.start());
        for &m in game.moves() {
            replayed.play(m).expect("every move the server kept is legal");
        }
        assert_eq!(replayed.position(), game.position());
    }
    let mut out = Vec::new();
    let mut server = HtpServer::new(Box::new(RandomPlayer::new(2)), Variant::copenhagen(), HtpServerOptions::default());
    server.run(&mut text.as_bytes(), &mut out).expect("in-memory io");
});
