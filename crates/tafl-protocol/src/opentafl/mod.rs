//! The OpenTafl engine protocol (OTEP), engine side, after `opentafl-engine-protocol.txt` and
//! `opentafl-notation-spec.txt` of the OpenTafl repository.
//!
//! OpenTafl starts the engine from an `.ini` file ([`engine_ini`]) and talks in unacknowledged
//! lines. The engine says `hello` when it starts; OpenTafl sends `rules <OTN rules>`, `side`,
//! `start`, then for each of our turns `opponent-move <moves> <position>` (except at the very
//! start), `play <side>` and `clock …`; we answer `move a4-a1`, and OpenTafl confirms with
//! `move <position>` or refuses with `error <code>` (then repeats `opponent-move` and `play`).
//! In analysis mode it sends `position <record>` and `analyze <n> <seconds>`, answered by
//! `analysis <n> <moves|separated|by|pipes> <evaluation> …`. `finish <code>` ends a game and
//! `goodbye` the engine.
//!
//! * Moves go out in simple notation (`a4-a1`); moves coming in may be simple or full OTN
//!   (`Ke5-e1-`, `e5-e8xe9`): a piece letter, captures and info symbols are ignored.
//! * Evaluations are the player's value from the side to move's view, times 1000, rounded.
//! * Every incoming position record is checked against our board; when they differ (a move we
//!   could not follow, a rule we judge otherwise) we take OpenTafl's board, which loses the
//!   game's history (repetitions) but keeps playing.
//! * A malformed or unknown line is answered `error 0 <why>` (a non-critical error, shown to
//!   the user) and the engine keeps running, and so is a line that is not UTF-8 or longer than
//!   [`MAX_LINE`], and an `opponent-move` on our turn (the game stays as it was); rules we
//!   cannot play are answered `error -1 <why>` (critical: OpenTafl ends the game).
//!
//! [`parse_rules`] turns an OTN rules string into a [`Variant`]; see it for what is supported.

mod rules;

pub use rules::{OtnRules, RulesError, parse_rules, write_rules};

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::time::Duration;

use tafl_rules::{Game, Move, Piece, Position, Side, Variant, parse_square};
use tafl_search::Player;

use crate::engine::{EngineOptions, choose_checked, limits_with_time, send, time_for_move};
use crate::lines::{MAX_LINE, read_line};

/// Parses a move record, simple (`a4-a1`) or full OTN (`Ke5-e1-`, `e5-e8xe9/f8`): an optional
/// piece letter, a square, `-`, a square; captures and info symbols after it are ignored.
pub fn parse_otn_move(text: &str, size: u8) -> Result<Move, String> {
    let mut s = text.trim();
    let mut chars = s.chars();
    if let (Some(a), Some(b)) = (chars.next(), chars.next())
        && a.is_ascii_alphabetic()
        && b.is_ascii_alphabetic()
    {
        s = &s[1..];
    }
    let split = |s: &str| -> Option<(usize, usize)> {
        let letter = s.chars().next().filter(char::is_ascii_alphabetic)?;
        let digits = s[letter.len_utf8()..].chars().take_while(char::is_ascii_digit).count();
        (digits > 0).then_some((0, 1 + digits))
    };
    let bad = || format!("`{text}` is not a move record");
    let (_, end) = split(s).ok_or_else(bad)?;
    let from = parse_square(&s[..end], size).map_err(|e| format!("`{text}`: {e}"))?;
    let rest = &s[end..];
    let rest = match rest.strip_prefix('-') {
        Some(r) => r,
        None if rest.starts_with(['^', '=']) => {
            return Err(format!("`{text}`: berserk moves and jumps are not supported"));
        }
        None => return Err(bad()),
    };
    let (_, end) = split(rest).ok_or_else(bad)?;
    let to = parse_square(&rest[..end], size).map_err(|e| format!("`{text}`: {e}"))?;
    Ok(Move::new(from, to))
}

/// The `.ini` file OpenTafl reads to start an external engine. OpenTafl resolves `directory`
/// against its own `engines/` folder and runs `command arguments` in it, so the file assumes
/// the `tafl` binary sits (or is linked) at `<opentafl>/engines/tafl/tafl`.
#[must_use]
pub fn engine_ini(player_spec: &str, variant: &str) -> String {
    format!(
        "[engine]\ndirectory=tafl\nfilename=tafl\ncommand=./tafl\narguments=engine --protocol opentafl --variant {variant} --player {player_spec}\n"
    )
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Clock {
    attackers: Option<Duration>,
    defenders: Option<Duration>,
}

/// An OpenTafl engine session.
pub struct OpenTaflServer {
    player: Box<dyn Player>,
    options: EngineOptions,
    game: Game,
    /// The side OpenTafl says we play.
    side: Option<Side>,
    clock: Clock,
    /// Our last move, until OpenTafl confirms or refuses it.
    pending: Option<Move>,
    /// Variants built from rules strings, so that repeated `rules` do not leak new ones.
    variants: HashMap<String, &'static Variant>,
}

impl OpenTaflServer {
    /// A session that starts with `variant` until OpenTafl sends its rules.
    #[must_use]
    pub fn new(player: Box<dyn Player>, variant: &'static Variant, options: EngineOptions) -> OpenTaflServer {
        OpenTaflServer {
            player,
            options,
            game: Game::new(variant),
            side: None,
            clock: Clock::default(),
            pending: None,
            variants: HashMap::new(),
        }
    }

    /// The game as the engine sees it.
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Says `hello`, then serves until `goodbye` or the end of the input.
    pub fn run(&mut self, input: &mut dyn BufRead, output: &mut dyn Write) -> io::Result<()> {
        send(output, "hello")?;
        while let Some(line) = read_line(input, MAX_LINE)? {
            match line {
                Ok(line) => {
                    if !self.handle(line.trim(), output)? {
                        return Ok(());
                    }
                }
                Err(e) => send(output, &format!("error 0 {e}"))?,
            }
        }
        Ok(())
    }

    /// Handles one message; returns false on `goodbye`.
    pub fn handle(&mut self, line: &str, out: &mut dyn Write) -> io::Result<bool> {
        let (command, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match command {
            "" | "hello" | "start" | "simple-moves" | "status" => {}
            "goodbye" => return Ok(false),
            "rules" => self.rules(rest, out)?,
            "side" => match side_word(rest) {
                Some(side) => self.side = Some(side),
                None => send(out, &format!("error 0 side: expected attackers or defenders, found `{rest}`"))?,
            },
            "position" => self.position(rest, out)?,
            "clock" => self.clock(rest, out)?,
            "play" => self.play(rest, out)?,
            "move" => self.confirmed(rest),
            "error" => {
                // OpenTafl refused our move: take it back; it resends the position and `play`.
                if let Some(m) = self.pending.take()
                    && self.game.moves().last() == Some(&m)
                {
                    self.game.undo();
                }
            }
            "opponent-move" => self.opponent_move(rest, out)?,
            "analyze" => self.analyze(rest, out)?,
            "finish" => {
                self.pending = None;
                self.player.new_game();
            }
            other => send(out, &format!("error 0 unknown command `{other}`"))?,
        }
        Ok(true)
    }

    fn rules(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let variant = match self.variants.get(text) {
            Some(v) => Ok(*v),
            None => parse_rules(text).and_then(|r| r.variant()),
        };
        match variant {
            Ok(v) => {
                self.variants.insert(text.to_string(), v);
                self.game = Game::new(v);
                self.pending = None;
                self.player.new_game();
                Ok(())
            }
            Err(e) => send(out, &format!("error -1 rules not supported: {e}")),
        }
    }

    /// Replaces our board by a position record, keeping the side to move.
    fn set_board(&mut self, record: &str, side_to_move: Side) -> Result<(), String> {
        let variant = self.game.variant();
        let position =
            Position::from_opentafl(variant, record, side_to_move).map_err(|e| format!("position `{record}`: {e}"))?;
        self.game = Game::from_position(position);
        Ok(())
    }

    fn position(&mut self, record: &str, out: &mut dyn Write) -> io::Result<()> {
        let side = self.game.position().side_to_move();
        match self.set_board(record, side) {
            Ok(()) => Ok(()),
            Err(e) => send(out, &format!("error 0 {e}")),
        }
    }

    fn clock(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let millis = |w: Option<&&str>| -> Option<Option<Duration>> {
            let w = w?.trim_end_matches('*');
            let ms: i64 = w.parse().ok()?;
            Some((ms >= 0).then(|| Duration::from_millis(ms.unsigned_abs())))
        };
        match (millis(words.first()), millis(words.get(1))) {
            (Some(attackers), Some(defenders)) => {
                // In overtime the clock shows the period left; the main-time rule fits it too.
                self.clock = Clock { attackers, defenders };
                Ok(())
            }
            _ => send(out, &format!("error 0 clock: expected two times in milliseconds, found `{text}`")),
        }
    }

    fn time_for(&self, side: Side) -> Option<Duration> {
        let left = if side == Side::Attackers { self.clock.attackers } else { self.clock.defenders };
        left.map(|l| time_for_move(l, Duration::ZERO))
    }

    fn play(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let Some(side) = side_word(text) else {
            return send(out, &format!("error 0 play: expected attackers or defenders, found `{text}`"));
        };
        self.side = Some(side);
        if self.game.position().side_to_move() != side {
            // After `position`, the record does not say who moves: `play` does.
            let mut setup = self.game.position().to_setup();
            setup.side_to_move = side;
            match Position::from_setup(self.game.variant(), &setup) {
                Ok(p) => self.game = Game::from_position(p),
                Err(e) => return send(out, &format!("error 0 play: {e}")),
            }
        }
        // OpenTafl sends this turn's `clock` right after `play`: we go by the last one, less
        // the time we have used since (our clock only runs on our turns).
        let limits = limits_with_time(self.time_for(side), &self.options);
        let started = std::time::Instant::now();
        let choice = choose_checked(self.player.as_mut(), &self.game, &limits);
        let used = started.elapsed();
        let left = if side == Side::Attackers { &mut self.clock.attackers } else { &mut self.clock.defenders };
        if let Some(left) = left {
            *left = left.saturating_sub(used);
        }
        match choice {
            Ok(choice) => {
                self.game.play_unchecked(choice.mv);
                self.pending = Some(choice.mv);
                send(out, &format!("move {}", choice.mv))?;
                let value =
                    choice.value.map_or_else(|| "?".to_string(), |v| format!("{}", (v * 1000.0).round() as i32));
                send(out, &format!("status depth {} nodes {} eval {value}", choice.depth, choice.nodes))
            }
            Err(e) => send(out, &format!("error 0 no move: {e}")),
        }
    }

    /// OpenTafl confirms our move with the board after it.
    fn confirmed(&mut self, record: &str) {
        self.pending = None;
        if !record.is_empty() && self.game.position().to_opentafl() != record {
            let side = self.game.position().side_to_move();
            let _ = self.set_board(record, side);
        }
    }

    fn opponent_move(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let (moves, record) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let record = record.trim();
        let to_move = self.game.position().side_to_move();
        if self.side == Some(to_move) {
            // Our turn: OpenTafl repeats the opponent's move after refusing ours (we took ours
            // back, so the board is the one it sends); anything else is not a move it can mean.
            if record.is_empty() || record != self.game.position().to_opentafl() {
                send(
                    out,
                    &format!(
                        "error 0 opponent-move: it is our turn (we play the {}); the move is not played",
                        to_move.name()
                    ),
                )?;
            }
            return Ok(());
        }
        self.pending = None;
        let size = self.game.variant().size();
        let mut mover = self.game.position().side_to_move();
        let mut followed = true;
        for token in moves.split('|').filter(|t| !t.is_empty()) {
            match parse_otn_move(token, size) {
                Ok(m) => {
                    mover = self.game.position().piece_at(m.from).map_or(mover, Piece::side);
                    if self.game.play(m).is_err() {
                        followed = false;
                        break;
                    }
                }
                Err(e) => {
                    send(out, &format!("error 0 opponent-move: {e}"))?;
                    followed = false;
                    break;
                }
            }
        }
        if record.is_empty() {
            return Ok(());
        }
        if (!followed || self.game.position().to_opentafl() != record)
            && let Err(e) = self.set_board(record, mover.opponent())
        {
            send(out, &format!("error 0 opponent-move: {e}"))?;
        }
        Ok(())
    }

    fn analyze(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let words: Vec<&str> = text.split_whitespace().collect();
        // `try_`: a finite but huge number of seconds does not fit a Duration.
        let time = words
            .get(1)
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok());
        let (Some(_count), Some(time)) = (words.first().and_then(|n| n.parse::<u32>().ok()), time) else {
            return send(out, &format!("error 0 analyze: expected a count and seconds, found `{text}`"));
        };
        let limits = limits_with_time(Some(time), &self.options);
        match choose_checked(self.player.as_mut(), &self.game, &limits) {
            Ok(choice) => {
                let pv: Vec<String> = choice.pv.iter().map(ToString::to_string).collect();
                let pv = if pv.is_empty() { choice.mv.to_string() } else { pv.join("|") };
                let eval = choice.value.map_or(0, |v| (v * 1000.0).round() as i32);
                send(out, &format!("analysis 1 {pv} {eval}"))
            }
            Err(e) => send(out, &format!("error 0 analyze: {e}")),
        }
    }

    /// The side OpenTafl last said we play.
    #[must_use]
    pub fn side(&self) -> Option<Side> {
        self.side
    }
}

fn side_word(text: &str) -> Option<Side> {
    match text.trim() {
        "attackers" => Some(Side::Attackers),
        "defenders" => Some(Side::Defenders),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::LimitsRecorder;
    use tafl_search::{AlphaBeta, Limits, RandomPlayer};

    /// The Copenhagen rules string as OpenTafl sends it (the rules tests read it too).
    pub(super) const COPENHAGEN: &str = "dim:11 name:Copenhagen atkf:y tfr:w sw:s efe:y start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";

    #[test]
    fn parses_move_records() {
        assert_eq!(parse_otn_move("a4-a1", 11).unwrap().to_string(), "a4-a1");
        assert_eq!(parse_otn_move("Ke5-e1-", 11).unwrap().to_string(), "e5-e1");
        assert_eq!(parse_otn_move("e5-e8xe9/f8", 11).unwrap().to_string(), "e5-e8");
        assert_eq!(parse_otn_move("k10-k11++", 11).unwrap().to_string(), "k10-k11");
        assert!(parse_otn_move("Ne6^=e8", 11).is_err());
        assert!(parse_otn_move("hello", 11).is_err());
        assert!(parse_otn_move("z1-a1", 11).is_err());
    }

    fn run(server: &mut OpenTaflServer, script: &str) -> Vec<String> {
        let mut out = Vec::new();
        server.run(&mut script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().map(str::to_string).collect()
    }

    #[test]
    fn plays_a_game_as_opentafl_drives_it() {
        let mut s =
            OpenTaflServer::new(Box::new(AlphaBeta::with_depth(1)), Variant::copenhagen(), EngineOptions::default());
        // We play the defenders: OpenTafl sends the attackers' first move, then `play`.
        let after_d1_d4 = "/4tttt3/5t5/11/t2t1T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
        let script = format!(
            "hello\nrules {COPENHAGEN}\nside defenders\nstart\nopponent-move d1-d4 {after_d1_d4}\nplay defenders\nclock 300000 300000 0 0 0\nfrobnicate\ngoodbye\nplay attackers\n"
        );
        let out = run(&mut s, &script);
        assert_eq!(out[0], "hello");
        assert!(out[1].starts_with("move "), "{out:?}");
        assert!(out[2].starts_with("status "), "{out:?}");
        assert_eq!(out[3], "error 0 unknown command `frobnicate`");
        assert_eq!(out.len(), 4, "stops at goodbye: {out:?}");
        assert_eq!(s.game().ply(), 2);
        assert_eq!(s.game().position().side_to_move(), Side::Attackers);
    }

    #[test]
    fn a_line_that_is_not_utf8_or_too_long_is_refused_and_the_engine_goes_on() {
        let mut script = b"hello\n\xff\n".to_vec();
        script.extend(std::iter::repeat_n(b's', 10 << 20));
        script.extend_from_slice(b"\nfrobnicate\n");
        let mut s =
            OpenTaflServer::new(Box::new(RandomPlayer::new(1)), Variant::copenhagen(), EngineOptions::default());
        let mut out = Vec::new();
        s.run(&mut script.as_slice(), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let long = format!("error 0 the line is {} bytes long, more than {MAX_LINE}", 10 << 20);
        assert_eq!(
            out,
            format!("hello\nerror 0 the line is not valid UTF-8\n{long}\nerror 0 unknown command `frobnicate`\n")
        );
    }

    #[test]
    fn an_opponent_move_on_our_turn_is_refused_and_changes_nothing() {
        let after_d1_d4 = "/4tttt3/5t5/11/t2t1T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
        let mut s =
            OpenTaflServer::new(Box::new(RandomPlayer::new(3)), Variant::copenhagen(), EngineOptions::default());
        let mut out = Vec::new();
        s.handle(&format!("rules {COPENHAGEN}"), &mut out).unwrap();
        s.handle("side attackers", &mut out).unwrap();
        let start = s.game().position().to_opentafl();
        // Our own piece, a defender's, with and without the board after it.
        for line in
            [format!("opponent-move d1-d4 {after_d1_d4}"), "opponent-move d1-d4".into(), "opponent-move f4-f3".into()]
        {
            s.handle(&line, &mut out).unwrap();
            assert_eq!((s.game().ply(), s.game().position().to_opentafl()), (0, start.clone()), "{line}");
        }
        let text = String::from_utf8(std::mem::take(&mut out)).unwrap();
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("error 0 opponent-move: it is our turn (we play the attackers)"))
                .count(),
            3,
            "{text}"
        );
        // As defenders: OpenTafl refuses our move and says the opponent's again, with the board
        // we are back at: nothing to answer.
        let mut s =
            OpenTaflServer::new(Box::new(RandomPlayer::new(3)), Variant::copenhagen(), EngineOptions::default());
        for line in [
            "side defenders".to_string(),
            format!("opponent-move d1-d4 {after_d1_d4}"),
            "play defenders".into(),
            "error 3".into(),
        ] {
            s.handle(&line, &mut out).unwrap();
        }
        assert_eq!(s.game().ply(), 1);
        out.clear();
        s.handle(&format!("opponent-move d1-d4 {after_d1_d4}"), &mut out).unwrap();
        assert_eq!((s.game().ply(), s.game().position().to_opentafl()), (1, after_d1_d4.to_string()));
        assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    }

    #[test]
    fn a_refused_move_is_taken_back_and_a_wrong_board_resynced() {
        let mut s =
            OpenTaflServer::new(Box::new(RandomPlayer::new(3)), Variant::copenhagen(), EngineOptions::default());
        let mut out = Vec::new();
        s.handle("play attackers", &mut out).unwrap();
        assert_eq!(s.game().ply(), 1);
        s.handle("error 2", &mut out).unwrap();
        assert_eq!(s.game().ply(), 0);
        // A move we cannot follow, on the opponent's turn: OpenTafl's board wins.
        s.handle("side defenders", &mut out).unwrap();
        let board = "/4tttt3/5t5/11/t2t1T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
        s.handle(&format!("opponent-move a1-a2 {board}"), &mut out).unwrap();
        assert_eq!(s.game().position().to_opentafl(), board);
        assert_eq!(s.game().position().side_to_move(), Side::Defenders);
        s.handle("rules dim:11 ber:c start:/11/11/11/11/11/5K5/11/11/11/11/11/", &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("error -1 rules not supported: berserk"), "{text}");
    }

    #[test]
    fn the_clock_limits_the_move_time() {
        let (player, asked) = LimitsRecorder::new();
        let mut s = OpenTaflServer::new(Box::new(player), Variant::copenhagen(), EngineOptions::default());
        let out = run(&mut s, &format!("rules {COPENHAGEN}\nclock 3000 90000 0 0 0\nplay attackers\n"));
        assert!(out[1].starts_with("move "), "{out:?}");
        let asked = asked.lock().unwrap().clone();
        let expected = time_for_move(Duration::from_millis(3000), Duration::ZERO);
        assert_eq!(asked, [Limits { time: Some(expected), ..Limits::default() }]);
        assert!(expected < Duration::from_millis(300));
    }

    #[test]
    fn analyzes_with_a_time_limit() {
        let mut s =
            OpenTaflServer::new(Box::new(AlphaBeta::with_depth(2)), Variant::copenhagen(), EngineOptions::default());
        let out = run(
            &mut s,
            &format!(
                "rules {COPENHAGEN}\nposition /3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/\nanalyze 1 0.5\nanalyze x\n"
            ),
        );
        assert!(out[1].starts_with("analysis 1 "), "{out:?}");
        let words: Vec<&str> = out[1].split_whitespace().collect();
        assert_eq!(words.len(), 4, "{out:?}");
        assert!(parse_otn_move(words[2].split('|').next().unwrap(), 11).is_ok());
        assert!(out[2].starts_with("error 0 analyze"), "{out:?}");
        // The time asked is the time the player gets.
        let (player, asked) = LimitsRecorder::new();
        let mut s = OpenTaflServer::new(Box::new(player), Variant::copenhagen(), EngineOptions::default());
        let out = run(&mut s, &format!("rules {COPENHAGEN}\nanalyze 1 0.5\nanalyze 1 1e300\nanalyze 1 inf\n"));
        assert_eq!(*asked.lock().unwrap(), [Limits { time: Some(Duration::from_millis(500)), ..Limits::default() }]);
        // Seconds that no Duration holds are refused, not a panic.
        assert!(
            out[1].starts_with("analysis 1 ")
                && out[2].starts_with("error 0 analyze")
                && out[3].starts_with("error 0 analyze"),
            "{out:?}"
        );
    }

    #[test]
    fn the_example_ini_is_what_the_engine_prints() {
        let file = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/opentafl/tafl.ini"));
        assert_eq!(file, engine_ini("alphabeta:time=1s", "copenhagen"));
    }

    #[test]
    fn the_ini_names_the_engine_command() {
        let ini = engine_ini("alphabeta:depth=4", "copenhagen");
        assert!(ini.starts_with("[engine]\n"));
        assert!(ini.contains("arguments=engine --protocol opentafl --variant copenhagen --player alphabeta:depth=4\n"));
    }
}
