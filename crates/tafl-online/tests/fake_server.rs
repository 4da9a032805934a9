//! The client against a small fake server in this process: a game offered, accepted, played,
//! interrupted by a dropped connection and resumed, garbage lines survived, a refused move
//! resigned, the record written and replayed. Runs with no outside program.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tafl_online::{Client, Log, OnStop, Options, TimeControl};
use tafl_rules::notation::parse_archive_line;
use tafl_rules::{Game, Move, Position, Side, Variant};
use tafl_search::{Player, RandomPlayer};

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// One client connection as the fake server sees it.
struct Peer {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Peer {
    fn accept(listener: &TcpListener) -> Peer {
        let (stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        Peer { reader: BufReader::new(stream.try_clone().unwrap()), writer: stream }
    }

    /// The next line that starts with `prefix`, skipping pings and the software id.
    fn expect(&mut self, prefix: &str) -> String {
        loop {
            let mut line = String::new();
            assert!(self.reader.read_line(&mut line).unwrap() > 0, "closed while waiting for `{prefix}`");
            let line = line.trim_end().to_string();
            if line.starts_with(prefix) {
                return line;
            }
            assert!(line == "ping" || line.starts_with("software_id"), "expected `{prefix}`, got `{line}`");
            if line == "ping" {
                self.send("= ping");
            }
        }
    }

    fn send(&mut self, line: &str) {
        self.writer.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
}

/// The fake server's view of the game.
struct Board {
    game: Game,
    moves: Vec<String>,
    opponent: RandomPlayer,
}

impl Board {
    fn play(&mut self, mv: Move) {
        let played = self.game.play(mv).unwrap();
        let mut text = mv.to_string();
        for sq in &played.captured {
            text.push_str(&format!("x{sq}"));
        }
        self.moves.push(text);
    }

    fn resume(&self, id: u32) -> String {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let (h, m, s) = (now / 3600 % 24, now / 60 % 60, now % 60);
        let days = now / 86_400;
        // The date does not matter to the client beyond being near now: use the real one.
        let (y, mo, d) = civil(days as i64);
        format!(
            r#"= resume_game_json {{"id":{id},"attackers":"ai-test","defenders":"human","dim":11,"start":"/3AAAAA3/","time_control":{{"main_time_seconds":30,"increment_length":1}},"time_remaining_ms":{{"attackers":29000,"defenders":30000,"last_move":"{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.5Z"}},"moves":"{}","rated":true,"messages":[]}}"#,
            self.moves.join(" ")
        )
    }
}

fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn parse_our_move(line: &str) -> Move {
    let words: Vec<&str> = line.split_whitespace().collect();
    let size = 11;
    Move::new(tafl_rules::parse_square(words[4], size).unwrap(), tafl_rules::parse_square(words[5], size).unwrap())
}

/// Plays the server's side of one attacker move: the clocks, the acknowledgement, a defender
/// reply and the next turn.
fn answer_move(peer: &mut Peer, board: &mut Board) {
    let line = peer.expect("game 5 play attacker ");
    board.play(parse_our_move(&line));
    peer.send(r#"= game_time {"id":5,"attacker_ms_left":29500,"defender_ms_left":30000}"#);
    peer.send("= game");
    let reply = board.opponent.choose(&board.game, &tafl_search::Limits::default()).unwrap().mv;
    board.play(reply);
    peer.send(&format!("game 5 play defender {} {}", reply.from, reply.to));
    peer.send("game 5 generate_move attacker");
    peer.send(r#"= game_time {"id":5,"attacker_ms_left":29500,"defender_ms_left":30500}"#);
}

#[test]
fn plays_survives_garbage_and_a_dropped_connection_and_resigns_a_refused_move() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let records = std::env::temp_dir().join(format!("tafl-online-fake-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&records);

    let server = thread::spawn(move || {
        let variant = Variant::preset("copenhagen").unwrap();
        let mut board = Board { game: Game::new(variant), moves: Vec::new(), opponent: RandomPlayer::new(3) };
        let mut peer = Peer::accept(&listener);
        assert_eq!(peer.expect("32d9a140"), "32d9a140 login ai-test pw");
        peer.send("= login");
        let offer = peer.expect("new_game ");
        assert!(offer.contains(r#""role":"Attacker""#) && offer.contains(r#""milliseconds_left":30000"#), "{offer}");
        peer.send("= new_game 5");
        // Garbage the client must survive: unknown lists, a malformed line, a line over the
        // cap, a binary block.
        peer.send("= users_updated (updated:{},removed:[])");
        peer.send("game 5 play");
        peer.send("= game_over five attacker_wins");
        peer.send(&"y".repeat(1_200_000));
        peer.writer.write_all(b"= archived_games 4\n\x00\x01\n\x03").unwrap();
        peer.send("= challenge_requested 5");
        peer.expect("join_game 5");
        peer.expect("resume_game_json 5");
        peer.send(&board.resume(5));
        for _ in 0..3 {
            answer_move(&mut peer, &mut board);
        }
        // Drop the connection; the client comes back and resumes the game.
        peer.writer.shutdown(std::net::Shutdown::Both).unwrap();
        drop(peer);
        let mut peer = Peer::accept(&listener);
        peer.expect("32d9a140 login");
        peer.send("= login");
        peer.send("game 5 generate_move attacker");
        peer.expect("resume_game_json 5");
        peer.send(&board.resume(5));
        answer_move(&mut peer, &mut board);
        // Refuse the next move: the client must resign.
        peer.expect("game 5 play attacker ");
        peer.send("? game play: you already reached that position");
        assert_eq!(peer.expect("game 5 play attacker resigns"), "game 5 play attacker resigns _");
        peer.send("= game_over 5 defender_wins");
        peer.expect("logout");
        board.moves.len()
    });

    let log = Shared::default();
    let mut options = Options::new(&address, "ai-test", "pw");
    options.create = vec![Side::Attackers];
    options.time = TimeControl::Fischer { main_ms: 30_000, increment_ms: 1_000 };
    options.games = Some(1);
    options.on_stop = OnStop::Finish;
    options.records = Some(records.clone());
    options.max_retries = Some(5);
    let make_player = Box::new(|_size: u8| Ok(Box::new(RandomPlayer::new(1)) as Box<dyn Player>));
    let client =
        Client::new(options, make_player, Arc::new(Log::new(Box::new(log.clone()))), Arc::new(AtomicBool::new(false)));
    let games = client.run().unwrap();
    let plies = server.join().unwrap();
    let log = log.text();

    assert_eq!(games.len(), 1, "{log}");
    let game = &games[0];
    assert_eq!((game.id, game.side, game.winner), (5, Side::Attackers, Some(Side::Defenders)), "{log}");
    assert_eq!(game.plies, plies, "{log}");
    for needed in
        ["budget", "ignored a line of", "malformed", "connection lost", "resumed", "refused our move", "resigning"]
    {
        assert!(log.contains(needed), "no `{needed}` in the log:\n{log}");
    }
    // The record replays cleanly with our rules.
    let text = std::fs::read_to_string(game.record.as_ref().unwrap()).unwrap();
    let line = text.lines().find(|l| !l.starts_with('#')).unwrap();
    let archive = parse_archive_line(line, 11).unwrap();
    assert_eq!(archive.plies.len(), plies);
    assert_eq!(archive.result.as_deref(), Some("White"));
    let report =
        tafl_rules::replay::replay(1, Position::start(Variant::preset("copenhagen").unwrap()), &archive.plies, true);
    assert!(report.ok(), "{report:?}");
    let _ = std::fs::remove_dir_all(&records);
}

#[test]
fn a_stop_resigns_games_in_progress_when_asked() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let stop_server = Arc::clone(&stop);
    let server = thread::spawn(move || {
        let mut peer = Peer::accept(&listener);
        peer.expect("32d9a140 create_account ai-stop");
        peer.send("? create_account already_exists unknown error");
        peer.expect("32d9a140 login ai-stop");
        peer.send("= login");
        peer.expect("join_game_pending 9");
        peer.send("= join_game_pending 9");
        peer.send("= join_game human ai-stop rated fischer 900000 10 11");
        peer.expect("resume_game_json 9");
        peer.send(
            r#"= resume_game_json {"id":9,"attackers":"human","defenders":"ai-stop","dim":11,"moves":"","rated":true}"#,
        );
        // A draw offer is not answered (6.4.1 deletes the game on any answer).
        peer.send("request_draw 9 attacker");
        stop_server.store(true, Ordering::Relaxed);
        assert_eq!(peer.expect("game 9 play"), "game 9 play defender resigns _");
        peer.send("= game_over 9 attacker_wins");
        peer.expect("logout");
    });
    let mut options = Options::new(&address, "ai-stop", "pw");
    options.create_account = true;
    options.join = vec![9];
    options.on_stop = OnStop::Resign;
    options.max_retries = Some(2);
    let make_player = Box::new(|_size: u8| Ok(Box::new(RandomPlayer::new(1)) as Box<dyn Player>));
    let log = Shared::default();
    let games = Client::new(options, make_player, Arc::new(Log::new(Box::new(log.clone()))), stop).run().unwrap();
    server.join().unwrap();
    assert_eq!(games.len(), 1, "{}", log.text());
    assert_eq!(games[0].winner, Some(Side::Attackers));
    assert!(log.text().contains("offer a draw"), "{}", log.text());
}
