//! The server side of HTP: any [`Player`] behind the command set of the reference engine
//! (`hnefatafl-text-protocol` of the `hnefatafl-copenhagen` crate, protocol version `1-beta`),
//! so that it can stand in for it with the hnefatafl.org client, server and tools.
//!
//! # Replies
//! As the reference prints them: `= RESPONSE` on success (`= ` alone when there is nothing to
//! say), `? ERROR` followed by an empty line on failure, nothing for an empty line or a
//! comment (`#` to the end of the line). Error texts are the reference's, word for word,
//! `message: ` prefixes included, so that drivers matching on them keep working. A line the
//! reference could not read at all (not UTF-8, or longer than [`MAX_LINE`]) is answered with
//! a failure of our own, and the session goes on.
//!
//! # Commands
//! `board_size N`, `final_status`, `first_move ROLE`, `generate_move [ROLE]`,
//! `known_command CMD`, `list_commands`, `name`, `play ROLE FROM TO`, `play ROLE resigns`,
//! `play_from`, `play_to ROLE FROM`, `play_undo`, `protocol_version`, `quit`, `show_board`,
//! `show_board_open_tafl`, `time_settings un-timed|fischer MINUTES ADD_SECONDS`, `version`.
//! Like the reference, `generate_move` plays for the side to move (a role argument is
//! ignored) and answers `play ROLE FROM TO, score: S, delay milliseconds: D, loops: N`, where
//! `S` is the player's value in the attackers' view (-1..1) and `N` the nodes it searched.
//!
//! # Rules
//! Our [`Game`] referees. Where the reference's rules differ from ours, the server follows
//! the reference when that is what a driver would notice:
//! * the defenders may not move to a board that has occurred before (unless
//!   [`HtpServerOptions::defender_repeats`], like the reference's `--repeat-moves`); when
//!   the player itself picks such a move as defenders, the server plays instead the allowed
//!   move with the best static evaluation after it (the [`Player`] trait cannot be told to
//!   avoid moves);
//! * `board_size 7` is the hnefatafl.org 7x7 game: the brandubh layout, the defenders move
//!   first, soldiers may not pass the throne, no exit forts;
//! * the reference draws the game when a move is made after 141 plies (its 140-turn limit),
//!   so the game is drawn after ply 142 unless that ply decided it
//!   ([`HtpServerOptions::draw_after_plies`]).

mod reference;

use std::io::{self, BufRead, Write};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tafl_rules::{Game, Move, Outcome, Piece, Position, Reason, Rules, Side, Square, Variant};
use tafl_search::{MoveChoice, Player};

use super::{role_name, square_name};
use crate::engine::{EngineOptions, attackers_view, choose_checked, limits_with_time, time_for_move};
use crate::lines::{MAX_LINE, read_line};
use reference::{board_key, reference_role, reference_square};

/// The protocol version the reference engine reports.
pub const PROTOCOL_VERSION: &str = "1-beta";

/// The reference engine draws a game when a move is played after 141 plies.
pub const REFERENCE_DRAW_PLIES: usize = 142;

/// Every command, in the order `list_commands` prints them.
pub const COMMANDS: [&str; 17] = [
    "board_size",
    "final_status",
    "first_move",
    "generate_move",
    "known_command",
    "list_commands",
    "name",
    "play",
    "play_from",
    "play_to",
    "play_undo",
    "protocol_version",
    "quit",
    "show_board",
    "show_board_open_tafl",
    "time_settings",
    "version",
];

/// How the server behaves where drivers differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtpServerOptions {
    /// Move time when no `time_settings` clock applies.
    pub engine: EngineOptions,
    /// Accept defender moves that repeat an earlier board (the reference refuses them unless
    /// started with `--repeat-moves`).
    pub defender_repeats: bool,
    /// The game is drawn once this many plies have been played (the reference's limit is
    /// [`REFERENCE_DRAW_PLIES`]); `None` for no limit.
    pub draw_after_plies: Option<usize>,
    /// What `name` answers.
    pub name: String,
    /// What `version` answers.
    pub version: String,
}

impl Default for HtpServerOptions {
    fn default() -> Self {
        HtpServerOptions {
            engine: EngineOptions::default(),
            defender_repeats: false,
            draw_after_plies: Some(REFERENCE_DRAW_PLIES),
            name: "tafl".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// What one command line asks of the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HtpReply {
    /// Nothing to print (an empty line or a comment).
    Silent,
    /// `= TEXT`.
    Success(String),
    /// `? TEXT` and an empty line.
    Failure(String),
    /// `quit`: stop without a reply.
    Quit,
}

impl HtpReply {
    /// The reply as the reference writes it (with its newlines), or `None` for nothing.
    #[must_use]
    pub fn render(&self) -> Option<String> {
        match self {
            HtpReply::Silent | HtpReply::Quit => None,
            HtpReply::Success(text) => Some(format!("= {text}\n")),
            HtpReply::Failure(text) => Some(format!("? {text}\n\n")),
        }
    }
}

/// A Fischer clock for both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Clock {
    attackers: Duration,
    defenders: Duration,
    increment: Duration,
}

/// An HTP session: the game so far, and the player that generates moves.
pub struct HtpServer {
    player: Box<dyn Player>,
    options: HtpServerOptions,
    /// The variant given on the command line; `board_size` with its size returns to it.
    base: &'static Variant,
    game: Game,
    /// The side that resigned, which ends the game.
    resigned: Option<Side>,
    /// The move limit drew the game.
    drawn: bool,
    /// Pieces-only hashes of every board so far (start included), for the defenders'
    /// no-repetition rule.
    boards: Vec<u64>,
    clock: Option<Clock>,
    /// The reference marks empty restricted squares with `#` on its first board and with `⌘`
    /// after any reset; drivers that compare boards see the difference.
    ascii_board: bool,
}

/// The 7x7 game of hnefatafl.org: the brandubh layout with the defenders to move first,
/// soldiers barred from passing the throne, and no exit forts.
#[must_use]
pub fn hnefatafl_org_7x7() -> &'static Variant {
    static CELL: OnceLock<Variant> = OnceLock::new();
    CELL.get_or_init(|| {
        let brandubh = Variant::preset("brandubh").unwrap_or_else(|| unreachable!("brandubh is a preset"));
        let mut start = brandubh.start_setup().clone();
        start.side_to_move = Side::Defenders;
        let rules = Rules { throne_passable: false, exit_fort: false, ..Rules::COPENHAGEN };
        Variant::from_setup("hnefatafl-7x7", start, rules)
            .unwrap_or_else(|e| unreachable!("the brandubh layout is valid: {e}"))
    })
}

impl HtpServer {
    /// A session on the start of `variant`.
    #[must_use]
    pub fn new(player: Box<dyn Player>, variant: &'static Variant, options: HtpServerOptions) -> HtpServer {
        let mut server = HtpServer {
            player,
            options,
            base: variant,
            game: Game::new(variant),
            resigned: None,
            drawn: false,
            boards: Vec::new(),
            clock: None,
            ascii_board: true,
        };
        server.reset(variant, None);
        server.ascii_board = true;
        server
    }

    /// The game as the server sees it.
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    fn reset(&mut self, variant: &'static Variant, first: Option<Side>) {
        let mut start = variant.start_setup().clone();
        if let Some(side) = first {
            start.side_to_move = side;
        }
        // The variant's own start with another side to move is still a valid setup.
        let position = Position::from_setup(variant, &start).unwrap_or_else(|_| Position::start(variant));
        self.game = Game::from_position(position);
        self.boards = vec![board_key(&start)];
        self.resigned = None;
        self.drawn = false;
        self.ascii_board = false;
        self.player.new_game();
    }

    fn variant_for_size(&self, size: usize) -> Result<&'static Variant, String> {
        if size == self.base.size() as usize {
            return Ok(self.base);
        }
        let preset = match size {
            7 => return Ok(hnefatafl_org_7x7()),
            11 => Variant::preset("copenhagen"),
            13 => Variant::preset("copenhagen-13"),
            _ => None,
        };
        preset.ok_or_else(|| format!("message: an invalid board size was passed: {size}"))
    }

    fn size(&self) -> u8 {
        self.game.variant().size()
    }

    fn over(&self) -> bool {
        self.resigned.is_some() || self.drawn || self.game.outcome().is_over()
    }

    /// Handles one command line.
    pub fn handle(&mut self, line: &str) -> HtpReply {
        let line = line.split('#').next().unwrap_or_default();
        let args: Vec<&str> = line.split_whitespace().collect();
        let Some(&command) = args.first() else { return HtpReply::Silent };
        let result = match command {
            "board_size" => self.board_size(&args),
            "final_status" => Ok(self.final_status().to_string()),
            "first_move" => self.first_move(&args),
            "generate_move" => self.generate_move().map(|(text, _)| text),
            "known_command" => match args.get(1) {
                Some(c) => Ok(COMMANDS.contains(c).to_string()),
                None => Err("message: expected: known_command COMMAND".to_string()),
            },
            "list_commands" => Ok(format!("\n{}", COMMANDS.join("\n"))),
            "name" => Ok(self.options.name.clone()),
            "play" => self.play(&args),
            "play_from" => Ok(self.play_from()),
            "play_to" => self.play_to(&args),
            "play_undo" => self.play_undo(),
            "protocol_version" => Ok(PROTOCOL_VERSION.to_string()),
            "quit" => return HtpReply::Quit,
            "show_board" => Ok(self.show_board()),
            "show_board_open_tafl" => Ok(self.show_board_open_tafl()),
            "time_settings" => self.time_settings(&args),
            "version" => Ok(self.options.version.clone()),
            other => Err(format!("message: unrecognized command: {other}")),
        };
        match result {
            Ok(text) => HtpReply::Success(text),
            Err(text) => HtpReply::Failure(text),
        }
    }

    /// Serves a session: reads commands until `quit` or the end of the input, and writes the
    /// replies (flushed after each).
    pub fn run(&mut self, input: &mut dyn BufRead, output: &mut dyn Write) -> io::Result<()> {
        while let Some(line) = read_line(input, MAX_LINE)? {
            let reply = match line {
                Ok(line) => self.handle(&line),
                Err(e) => HtpReply::Failure(format!("message: {e}")),
            };
            if reply == HtpReply::Quit {
                return Ok(());
            }
            if let Some(text) = reply.render() {
                output.write_all(text.as_bytes())?;
                output.flush()?;
            }
        }
        Ok(())
    }

    /// Plays on a game server the way the reference engine's `--host` mode does: the server
    /// sends `play ROLE FROM TO` for the opponent's moves and `generate_move` when it is our
    /// turn, which is answered with a bare `play ROLE FROM TO` line. Other commands are
    /// handled and their replies logged to `log`. Returns when the game is over or the
    /// connection closes.
    pub fn run_connected(
        &mut self,
        input: &mut dyn BufRead,
        output: &mut dyn Write,
        log: &mut dyn Write,
    ) -> io::Result<()> {
        while let Some(line) = read_line(input, MAX_LINE)? {
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    writeln!(log, "? message: {e}")?;
                    continue;
                }
            };
            writeln!(log, "<- {}", line.trim_end())?;
            let first = line.split_whitespace().next().unwrap_or_default();
            if first == "generate_move" {
                match self.generate_move() {
                    Ok((_, play)) => {
                        writeln!(log, "-> {play}")?;
                        crate::engine::send(output, &play)?;
                    }
                    Err(e) => writeln!(log, "? {e}")?,
                }
            } else {
                let reply = self.handle(&line);
                if reply == HtpReply::Quit {
                    return Ok(());
                }
                if let Some(text) = reply.render() {
                    log.write_all(text.as_bytes())?;
                }
            }
            if self.over() {
                return Ok(());
            }
        }
        Ok(())
    }

    fn board_size(&mut self, args: &[&str]) -> Result<String, String> {
        let text = args.get(1).ok_or("message: expected: board_size 11 or board_size 13")?;
        let size: usize = text.parse().map_err(|e| format!("message: {e}"))?;
        let variant = self.variant_for_size(size)?;
        self.reset(variant, None);
        Ok(String::new())
    }

    fn first_move(&mut self, args: &[&str]) -> Result<String, String> {
        let text = args.get(1).ok_or("message: expected: first_move ROLE")?;
        let side = reference_role(text).map_err(|e| format!("message: {e}"))?;
        self.reset(self.game.variant(), Some(side));
        Ok(String::new())
    }

    fn final_status(&self) -> &'static str {
        if let Some(side) = self.resigned {
            return status_word(Some(side.opponent()));
        }
        match self.game.outcome() {
            Outcome::Ongoing if self.drawn => "draw",
            Outcome::Ongoing => "ongoing",
            Outcome::Draw { .. } => "draw",
            Outcome::Decided { winner, .. } => status_word(Some(winner)),
        }
    }

    fn time_settings(&mut self, args: &[&str]) -> Result<String, String> {
        const EXPECTED: &str =
            "message: time_settings: expected 'time_settings un-timed' or 'time_settings fischer MINUTES ADD_SECONDS'";
        let clock = if args.get(1) == Some(&"un-timed") {
            None
        } else {
            if args.len() < 4 || args[1] != "fischer" {
                return Err(EXPECTED.to_string());
            }
            let minutes: i64 = args[2].parse().map_err(|_| "message: time_settings: arg 2 is not an integer")?;
            let add: i64 = args[3].parse().map_err(|_| "message: time_settings: arg 3 is not an integer")?;
            let main = Duration::from_secs(minutes.max(0).unsigned_abs() * 60);
            Some(Clock { attackers: main, defenders: main, increment: Duration::from_secs(add.max(0).unsigned_abs()) })
        };
        self.clock = clock;
        self.reset(self.game.variant(), None);
        Ok(String::new())
    }

    /// `play ROLE FROM TO` or `play ROLE resigns`: checks in the reference's order, so that
    /// an illegal move gets the reference's message.
    fn play(&mut self, args: &[&str]) -> Result<String, String> {
        const EXPECTED: &str = "message: to plae: expected: 'play ROLE FROM TO' or 'play ROLE resign'";
        if args.len() < 3 {
            return Err(EXPECTED.to_string());
        }
        let role = reference_role(args[1]).map_err(|e| format!("message: message: {e}"))?;
        if args[2] == "resigns" {
            if self.over() {
                return Err("play: the game is already over".to_string());
            }
            if role != self.game.position().side_to_move() {
                return Err("play: you can't resign for the other player".to_string());
            }
            self.resigned = Some(role);
            return Ok(String::new());
        }
        if args.len() < 4 {
            return Err(EXPECTED.to_string());
        }
        let size = self.size();
        let from = reference_square(args[2], size).map_err(|e| format!("message: message: {e}"))?;
        let to = reference_square(args[3], size).map_err(|e| format!("message: message: {e}"))?;
        if self.over() {
            return Err("play: the game is already over".to_string());
        }
        let m = Move::new(from, to);
        self.check_reference_rules(role, m)?;
        let king = self.game.position().king();
        let played = self.game.play(m).map_err(|e| format!("play: {e}"))?;
        self.after_move();
        let mut captured: Vec<Square> = played.captured.to_vec();
        if played.king_captured {
            captured.extend(king);
        }
        Ok(captured.iter().map(|sq| format!("{} ", square_name(*sq, size))).collect())
    }

    fn after_move(&mut self) {
        self.boards.push(board_key(&self.game.position().to_setup()));
        if self.options.draw_after_plies.is_some_and(|limit| self.game.ply() >= limit) && !self.game.outcome().is_over()
        {
            self.drawn = true;
        }
    }

    /// Chooses and plays a move; returns the reply and the bare `play ROLE FROM TO` line.
    fn generate_move(&mut self) -> Result<(String, String), String> {
        if self.over() {
            return Err("message: play: the game is already over".to_string());
        }
        let side = self.game.position().side_to_move();
        let clock_time = self.clock.map(|c| {
            let left = if side == Side::Attackers { c.attackers } else { c.defenders };
            time_for_move(left, c.increment)
        });
        let limits = limits_with_time(clock_time, &self.options.engine);
        let started = Instant::now();
        let mut choice =
            choose_checked(self.player.as_mut(), &self.game, &limits).map_err(|e| format!("message: {e}"))?;
        if side == Side::Defenders && !self.options.defender_repeats && self.repeats_a_board(choice.mv) {
            match self.best_unrepeated_move() {
                Some(m) => choice = MoveChoice { mv: m, pv: vec![m], ..choice },
                None => {
                    self.resigned = Some(side);
                    let play = format!("play {} resigns _", role_name(side));
                    return Ok((play.clone(), play));
                }
            }
        }
        let elapsed = started.elapsed();
        if let Some(clock) = &mut self.clock {
            let left = if side == Side::Attackers { &mut clock.attackers } else { &mut clock.defenders };
            *left = left.saturating_sub(elapsed) + clock.increment;
        }
        let size = self.size();
        let play = format!(
            "play {} {} {}",
            role_name(side),
            square_name(choice.mv.from, size),
            square_name(choice.mv.to, size)
        );
        self.game.play(choice.mv).map_err(|e| format!("message: {e}"))?;
        self.after_move();
        let score = choice.value.map_or_else(|| "0".to_string(), |v| format!("{:.3}", attackers_view(v, side)));
        let reply =
            format!("{play}, score: {score}, delay milliseconds: {}, loops: {}", elapsed.as_millis(), choice.nodes);
        Ok((reply, play))
    }

    fn play_from(&self) -> String {
        let side = self.reference_turn();
        let size = self.size();
        let mut froms: Vec<Square> = Vec::new();
        if !self.over() {
            for m in self.game.legal_moves().iter() {
                if !froms.contains(&m.from) && self.reference_allows(side, *m) {
                    froms.push(m.from);
                }
            }
        }
        let names: Vec<String> = froms.iter().map(|sq| square_name(*sq, size)).collect();
        format!("{} {}", role_name(side), names.join(" "))
    }

    fn play_to(&self, args: &[&str]) -> Result<String, String> {
        let (Some(role), Some(from)) = (args.get(1), args.get(2)) else {
            return Err("message: play to: expected 'play_to role vertex'".to_string());
        };
        let role = reference_role(role).map_err(|e| format!("message: {e}"))?;
        let from = reference_square(from, self.size()).map_err(|e| format!("message: {e}"))?;
        let side = self.reference_turn();
        if role != side {
            return Err("play: it isn't your turn".to_string());
        }
        let size = self.size();
        let tos: Vec<String> = if self.over() {
            Vec::new()
        } else {
            self.game
                .legal_moves()
                .iter()
                .filter(|m| m.from == from && self.reference_allows(side, **m))
                .map(|m| square_name(m.to, size))
                .collect()
        };
        if tos.is_empty() {
            return Err("play: invalid vertex".to_string());
        }
        Ok(tos.join(" "))
    }

    fn play_undo(&mut self) -> Result<String, String> {
        if self.resigned.take().is_some() {
            return Ok(String::new());
        }
        self.drawn = false;
        if self.game.undo().is_none() {
            return Err("play undo: it is the first move".to_string());
        }
        self.boards.pop();
        Ok(String::new())
    }

    /// The piece on `sq` as the reference shows it: a captured king is taken off the board.
    fn shown_piece(&self, sq: Square) -> Option<Piece> {
        let king_taken = matches!(self.game.outcome(), Outcome::Decided { reason: Reason::KingCaptured, .. });
        self.game.position().piece_at(sq).filter(|p| !(king_taken && *p == Piece::King))
    }

    /// The board as the reference draws it (ASCII pieces, box-drawing frame).
    fn show_board(&self) -> String {
        let position = self.game.position();
        let size = position.size();
        let letters: String = (0..size).map(|f| format!(" {}", (b'A' + f) as char)).collect();
        let bar = "─".repeat(size as usize * 2 + 1);
        let marks_restricted = size == 11 || size == 13;
        let mut out = format!("\n   {letters}\n  ┌{bar}┐\n");
        for rank in (0..size).rev() {
            let label = rank + 1;
            out.push_str(&format!("{label:2}│ "));
            for file in 0..size {
                let sq = Square::new(file, rank);
                let c = match self.shown_piece(sq) {
                    Some(Piece::Attacker) => "A",
                    Some(Piece::Defender) => "D",
                    Some(Piece::King) => "K",
                    None if marks_restricted && is_reference_restricted(sq, size) => {
                        if self.ascii_board {
                            "#"
                        } else {
                            "⌘"
                        }
                    }
                    None => ".",
                };
                out.push_str(c);
                out.push(' ');
            }
            out.push_str(&format!("│{label:2}\n"));
        }
        out.push_str(&format!("  └{bar}┘\n   {letters}"));
        out
    }

    /// The reference's `show_board_open_tafl`: ranks from the top, `A` attackers, `D`
    /// defenders, `K` the king.
    fn show_board_open_tafl(&self) -> String {
        let position = self.game.position();
        let size = position.size();
        let mut out = String::new();
        for rank in (0..size).rev() {
            out.push('/');
            let mut empty = 0;
            for file in 0..size {
                let c = match self.shown_piece(Square::new(file, rank)) {
                    Some(Piece::Attacker) => 'A',
                    Some(Piece::Defender) => 'D',
                    Some(Piece::King) => 'K',
                    None => {
                        empty += 1;
                        continue;
                    }
                };
                if empty > 0 {
                    out.push_str(&empty.to_string());
                    empty = 0;
                }
                out.push(c);
            }
            if empty > 0 {
                out.push_str(&empty.to_string());
            }
        }
        out.push('/');
        out
    }
}

/// The corners and the centre, which the reference draws specially when empty.
fn is_reference_restricted(sq: Square, size: u8) -> bool {
    let last = size - 1;
    let centre = size / 2;
    ((sq.file() == 0 || sq.file() == last) && (sq.rank() == 0 || sq.rank() == last))
        || (sq.file() == centre && sq.rank() == centre)
}

fn status_word(winner: Option<Side>) -> &'static str {
    match winner {
        Some(Side::Attackers) => "attacker_wins",
        Some(Side::Defenders) => "defender_wins",
        None => "draw",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tafl_search::RandomPlayer;

    fn server() -> HtpServer {
        HtpServer::new(Box::new(RandomPlayer::new(1)), Variant::copenhagen(), HtpServerOptions::default())
    }

    fn session(script: &str) -> String {
        let mut out = Vec::new();
        server().run(&mut script.as_bytes(), &mut out).expect("in-memory io");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn a_line_that_is_not_utf8_or_too_long_is_refused_and_the_session_goes_on() {
        let mut script = b"name\n\xff\nname\n".to_vec();
        script.extend(std::iter::repeat_n(b'x', 10 << 20));
        script.extend_from_slice(b"\nname\n");
        let mut out = Vec::new();
        server().run(&mut script.as_slice(), &mut out).expect("in-memory io");
        let out = String::from_utf8(out).expect("utf-8");
        let long = format!("? message: the line is {} bytes long, more than {MAX_LINE}\n\n", 10 << 20);
        assert_eq!(out, format!("= tafl\n? message: the line is not valid UTF-8\n\n= tafl\n{long}= tafl\n"));
        // Connected to a server, such lines are logged and the game goes on.
        let (mut sent, mut log) = (Vec::new(), Vec::new());
        server().run_connected(&mut &b"\xff\nplay attacker d1 d4\n"[..], &mut sent, &mut log).expect("in-memory io");
        let log = String::from_utf8(log).expect("utf-8");
        assert!(log.starts_with("? message: the line is not valid UTF-8\n<- play attacker d1 d4\n= \n"), "{log}");
    }

    #[test]
    fn answers_the_informational_commands() {
        let out =
            session("protocol_version\nknown_command play\nknown_command fly\n\n# a comment\nfoo bar\nquit\nname\n");
        assert_eq!(out, "= 1-beta\n= true\n= false\n? message: unrecognized command: foo\n\n");
        assert!(session("list_commands\n").starts_with("= \nboard_size\nfinal_status\n"));
    }

    #[test]
    fn plays_moves_with_the_reference_errors() {
        let out = session(
            "play attacker d1 d4\nplay a d4 d5\nplay defender f4 d4\nplay defender e4 e5\nplay defender f4 g5\nplay defender f4 f4\n\
             play defender f4 e4\nplay defender k4 j4\nplay x a1 a2\nplay attacker\nplay attacker z1 a1\nplay attacker a99 a1\nplay attacker a a1\n",
        );
        let expected = "= \n\
            ? play: it isn't your turn\n\n\
            ? play: you have to play through empty locations\n\n\
            ? play: it isn't your turn\n\n\
            ? play: you can only play in a straight line\n\n\
            ? play: you have to change location\n\n\
            = \n\
            ? play: it isn't your turn\n\n\
            ? message: message: Error trying to convert 'x' to a Role!\n\n\
            ? message: to plae: expected: 'play ROLE FROM TO' or 'play ROLE resign'\n\n\
            ? message: message: play: the first letter is not a legal char\n\n\
            ? message: message: play: invalid coordinate\n\n\
            ? message: message: cannot parse integer from empty string\n\n";
        assert_eq!(out, expected);
    }

    #[test]
    fn captures_are_listed_and_undo_restores() {
        let mut s = server();
        for (cmd, reply) in
            [("play attacker a4 e4", "= \n"), ("play defender h6 h9", "= \n"), ("play attacker k4 g4", "= f4 \n")]
        {
            assert_eq!(s.handle(cmd).render().as_deref(), Some(reply), "{cmd}");
        }
        assert_eq!(s.handle("play_undo"), HtpReply::Success(String::new()));
        assert_eq!(s.game().ply(), 2);
        assert_eq!(s.handle("final_status"), HtpReply::Success("ongoing".into()));
        assert_eq!(
            s.handle("play defender resigns"),
            HtpReply::Failure("play: you can't resign for the other player".into())
        );
        assert_eq!(s.handle("play attacker resigns"), HtpReply::Success(String::new()));
        assert_eq!(s.handle("final_status"), HtpReply::Success("defender_wins".into()));
        assert_eq!(s.handle("generate_move"), HtpReply::Failure("message: play: the game is already over".into()));
    }

    #[test]
    fn generates_moves_for_the_side_to_move() {
        let mut s = server();
        let HtpReply::Success(text) = s.handle("generate_move attacker") else { panic!("no move") };
        assert!(text.starts_with("play attacker "), "{text}");
        assert!(text.contains(", score: "), "{text}");
        assert_eq!(s.game().ply(), 1);
        let HtpReply::Success(text) = s.handle("generate_move") else { panic!("no move") };
        assert!(text.starts_with("play defender "), "{text}");
    }

    #[test]
    fn the_defenders_may_not_repeat_a_board() {
        let mut s = server();
        for cmd in ["play attacker a4 a3", "play defender f4 f3", "play attacker a3 a4"] {
            assert_eq!(s.handle(cmd), HtpReply::Success(String::new()), "{cmd}");
        }
        assert_eq!(
            s.handle("play defender f3 f4"),
            HtpReply::Failure("play: you already reached that position".into())
        );
        let mut lenient = HtpServer::new(
            Box::new(RandomPlayer::new(1)),
            Variant::copenhagen(),
            HtpServerOptions { defender_repeats: true, ..HtpServerOptions::default() },
        );
        for cmd in ["play attacker a4 a3", "play defender f4 f3", "play attacker a3 a4", "play defender f3 f4"] {
            assert_eq!(lenient.handle(cmd), HtpReply::Success(String::new()), "{cmd}");
        }
    }

    #[test]
    fn board_sizes_switch_variants() {
        let mut s = server();
        assert_eq!(s.handle("board_size 13"), HtpReply::Success(String::new()));
        assert_eq!(s.game().variant().size(), 13);
        assert_eq!(s.handle("board_size 9"), HtpReply::Failure("message: an invalid board size was passed: 9".into()));
        assert_eq!(s.handle("board_size x"), HtpReply::Failure("message: invalid digit found in string".into()));
        assert_eq!(s.handle("board_size 7"), HtpReply::Success(String::new()));
        assert_eq!(s.game().position().side_to_move(), Side::Defenders);
        assert_eq!(s.handle("first_move attacker"), HtpReply::Success(String::new()));
        assert_eq!(s.game().position().side_to_move(), Side::Attackers);
        let HtpReply::Success(board) = s.handle("show_board_open_tafl") else { panic!() };
        assert_eq!(board, "/3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3/");
    }

    #[test]
    fn shows_the_board_like_the_reference() {
        let HtpReply::Success(board) = server().handle("show_board") else { panic!() };
        let lines: Vec<&str> = board.lines().collect();
        assert_eq!(lines[0], "");
        assert_eq!(lines[1], "    A B C D E F G H I J K");
        assert_eq!(lines[3], "11│ # . . A A A A A . . # │11");
        assert_eq!(lines[8], " 6│ A A . D D K D D . A A │ 6");
        assert_eq!(lines[14], "  └───────────────────────┘");
        assert_eq!(lines[15], "    A B C D E F G H I J K");
    }

    #[test]
    fn time_settings_are_checked() {
        let mut s = server();
        assert_eq!(s.handle("time_settings fischer 10 5"), HtpReply::Success(String::new()));
        assert_eq!(
            s.handle("time_settings fischer x 5"),
            HtpReply::Failure("message: time_settings: arg 2 is not an integer".into())
        );
        assert!(
            matches!(s.handle("time_settings"), HtpReply::Failure(t) if t.starts_with("message: time_settings: expected"))
        );
        assert_eq!(s.handle("time_settings un-timed"), HtpReply::Success(String::new()));
    }

    #[test]
    fn play_from_and_play_to_list_moves() {
        let mut s = server();
        let HtpReply::Success(from) = s.handle("play_from") else { panic!() };
        assert!(from.starts_with("attacker "), "{from}");
        let HtpReply::Success(to) = s.handle("play_to attacker a4") else { panic!() };
        let mut to: Vec<&str> = to.split_whitespace().collect();
        to.sort_unstable();
        assert_eq!(to, ["a2", "a3", "b4", "c4", "d4", "e4"]);
        assert_eq!(s.handle("play_to defender f4"), HtpReply::Failure("play: it isn't your turn".into()));
        assert_eq!(s.handle("play_to attacker a1"), HtpReply::Failure("play: invalid vertex".into()));
    }
}
