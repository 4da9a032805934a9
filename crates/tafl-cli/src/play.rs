//! `tafl play`: a person against any player in the terminal.
//!
//! The board is drawn with ANSI colours on a terminal (plain text when the output is not a
//! terminal, or with `--no-color`), with the last move marked and the dangers tafl sites show:
//! the king highlighted when three sides of him are closed (one attacker move from capture),
//! and a warning when the king has an open line to a corner, or can reach a square that sees
//! two corners (a fork the attackers cannot block twice). Commands: a move (`d1-d4` or `d1d4`),
//! `moves [SQUARE]`, `undo`, `eval`, `board`, `help`, `quit`. The game is saved in the archive
//! format (`tafl replay` reads it) when it ends or on `quit`.

use std::fmt::Write as _;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow};
use clap::Args;
use tafl_rules::notation::{outcome_result, ply_text, write_archive_line};
use tafl_rules::{
    Game, KingDanger, Move, Outcome, Piece, Position, Side, Square, king_danger, parse_move, parse_square,
};
use tafl_search::{Limits, Player};

use crate::engine::{build_player, duration_arg};
use crate::{Failure, bad_input, variant};

const PLAY_HELP: &str = "Commands during the game:
  d1-d4 (or d1d4)   play a move
  moves [SQUARE]    list your legal moves (all, or those of one piece)
  undo              take back your last move (and the engine's reply)
  eval              the engine's evaluation and the line it expects
  board             draw the board again
  quit              stop (the game is saved)

Examples:
  tafl play --player alphabeta:depth=4 --side defenders
  tafl play --player random:seed=1 --no-save
  tafl play --variant brandubh --player alphabeta:time=2s --save game.csv";

/// Arguments of `tafl play`.
#[derive(Args)]
#[command(after_help = PLAY_HELP)]
pub struct PlayArgs {
    /// The player you play against [default: builtin:time=1s, the shipped net at one second a
    /// move; alphabeta:time=1s for variants other than copenhagen].
    #[arg(long)]
    player: Option<String>,
    /// A level from 1 (random moves) to 10 (the shipped net at a second a move) instead of
    /// --player (docs/levels.md lists their players and measured strength).
    #[arg(long, conflicts_with = "player", value_parser = clap::value_parser!(u8).range(1..=10))]
    level: Option<u8>,
    /// The side you play: attackers or defenders.
    #[arg(long, default_value = "attackers")]
    side: String,
    /// A preset or a variant TOML file.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// Start from this position (FEN) instead of the variant's start.
    #[arg(long)]
    fen: Option<String>,
    /// The longest the engine may think per move (`2s`, `500ms`).
    #[arg(long)]
    move_time: Option<String>,
    /// Plain text, even on a terminal.
    #[arg(long)]
    no_color: bool,
    /// Save the game here (archive format); by default `tafl-game-<time>.csv` here.
    #[arg(long)]
    save: Option<PathBuf>,
    /// Do not save the game.
    #[arg(long, conflicts_with = "save")]
    no_save: bool,
}

/// Colours and marks for the board.
struct Style {
    color: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }
}

/// The board for people, with colours when `style.color`.
fn draw(position: &Position, last: Option<Move>, style: &Style, danger: &KingDanger) -> String {
    position.board_text(|sq| {
        let marked = last.is_some_and(|m| m.from == sq || m.to == sq);
        let (text, code) = match position.piece_at(sq) {
            Some(Piece::Attacker) => ("X", "1;31"),
            Some(Piece::Defender) => ("O", "1;37"),
            Some(Piece::King) if danger.surrounded => ("K", "1;33;41"),
            Some(Piece::King) => ("K", "1;33"),
            None if position.variant().is_restricted(sq) => ("+", "2"),
            None if danger.forks.contains(&sq) => ("!", "1;35"),
            None => (".", "2"),
        };
        let cell = if marked && !style.color { text.to_lowercase() } else { text.to_string() };
        if marked { style.paint(&format!("{code};4"), &cell) } else { style.paint(code, &cell) }
    })
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Attackers => "attackers (X)",
        Side::Defenders => "defenders (O, K)",
    }
}

/// A game with the captures of each ply, for the record.
struct Session {
    game: Game,
    captures: Vec<Vec<Square>>,
}

impl Session {
    fn play(&mut self, m: Move) -> Result<(), String> {
        let played = self.game.play(m).map_err(|e| e.to_string())?;
        // The record lists captured soldiers only, as `tafl replay` checks them.
        let mut caps: Vec<Square> = played.captured.to_vec();
        caps.sort();
        self.captures.push(caps);
        Ok(())
    }

    fn undo(&mut self) -> bool {
        if self.game.undo().is_some() {
            self.captures.pop();
            true
        } else {
            false
        }
    }

    /// The archive line: `moves,attacker_captures,defender_captures,result`.
    fn archive_line(&self) -> String {
        let first = self.game.start().side_to_move();
        let mut by = [0usize; 2];
        let mut moves = Vec::new();
        for (i, (m, caps)) in self.game.moves().iter().zip(&self.captures).enumerate() {
            let mover = if i % 2 == 0 { first } else { first.opponent() };
            by[usize::from(mover == Side::Defenders)] += caps.len();
            moves.push(ply_text(*m, caps));
        }
        write_archive_line(&moves, false, by, outcome_result(self.game.outcome()))
    }
}

/// Runs `tafl play` on stdin/stdout.
pub fn run(args: &PlayArgs) -> Result<u8, Failure> {
    let stdin = io::stdin();
    let color = !args.no_color && io::stdout().is_terminal();
    let mut out = io::stdout();
    play(args, &mut stdin.lock(), &mut out, color)
}

fn play(args: &PlayArgs, input: &mut dyn BufRead, out: &mut dyn Write, color: bool) -> Result<u8, Failure> {
    let human = match args.side.as_str() {
        "attackers" | "attacker" | "a" => Side::Attackers,
        "defenders" | "defender" | "d" => Side::Defenders,
        s => return Err(bad_input(anyhow!("--side {s}: expected attackers or defenders"))),
    };
    let variant = variant::load(&args.variant).map_err(bad_input)?;
    let start = match &args.fen {
        Some(fen) => Position::from_fen(variant, fen).map_err(|e| bad_input(anyhow!("--fen: {e}")))?,
        None => Position::start(variant),
    };
    let level = crate::level_spec(args.level)?;
    let spec = level.as_deref().or(args.player.as_deref());
    let spec = spec.unwrap_or_else(|| tafl_players::builtin::default_player(variant.name()));
    let mut table = Table {
        session: Session { game: Game::from_position(start), captures: Vec::new() },
        engine: build_player(spec, variant)?,
        limits: Limits { time: duration_arg("move-time", args.move_time.as_deref())?, ..Limits::default() },
        human,
        style: Style { color },
    };
    writeln!(out, "You play the {} against {}. Type `help` for commands.", side_name(human), table.engine.name())
        .map_err(io_failed)?;
    table.show(out)?;
    let mut line = String::new();
    while !table.session.game.outcome().is_over() {
        if table.session.game.position().side_to_move() != human {
            if !table.engine_turn(out)? {
                break;
            }
            continue;
        }
        write!(out, "{} > ", side_name(human)).map_err(io_failed)?;
        out.flush().map_err(io_failed)?;
        line.clear();
        if input.read_line(&mut line).map_err(io_failed)? == 0 {
            writeln!(out).map_err(io_failed)?;
            break;
        }
        if !table.command(&line, out)? {
            break;
        }
    }
    table.announce_end(out)?;
    if !args.no_save {
        save_game(args, &table.session, out)?;
    }
    Ok(0)
}

fn io_failed(e: io::Error) -> Failure {
    Failure { code: 1, error: anyhow!(e) }
}

/// A game in progress between the person and the engine.
struct Table {
    session: Session,
    engine: Box<dyn Player>,
    limits: Limits,
    human: Side,
    style: Style,
}

impl Table {
    fn show(&self, out: &mut dyn Write) -> Result<(), Failure> {
        show(out, &self.session, &self.style).map_err(io_failed)
    }

    /// The engine moves; false when it failed (the game stops there).
    fn engine_turn(&mut self, out: &mut dyn Write) -> Result<bool, Failure> {
        let choice = match self.engine.choose(&self.session.game, &self.limits) {
            Ok(choice) => choice,
            Err(e) => {
                writeln!(out, "the engine failed: {e}").map_err(io_failed)?;
                return Ok(false);
            }
        };
        let value = choice.value.map(|v| format!(" (it thinks {v:+.2} for itself)")).unwrap_or_default();
        self.session
            .play(choice.mv)
            .map_err(|e| Failure { code: 1, error: anyhow!("the engine played {}: {e}", choice.mv) })?;
        writeln!(out, "{} plays {}{value}", self.engine.name(), choice.mv).map_err(io_failed)?;
        self.show(out)?;
        Ok(true)
    }

    /// Carries out one line the person typed; false when they quit.
    fn command(&mut self, line: &str, out: &mut dyn Write) -> Result<bool, Failure> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["quit" | "exit" | "q"] => return Ok(false),
            ["help" | "?"] => writeln!(out, "{PLAY_HELP}").map_err(io_failed)?,
            ["board"] => self.show(out)?,
            ["moves"] => self.list_moves(None, out)?,
            ["moves", square] => self.list_moves(Some(square), out)?,
            ["undo"] => self.undo(out)?,
            ["eval"] => self.eval(out)?,
            [text] => self.human_move(text, out)?,
            _ => writeln!(out, "unknown command; type `help`").map_err(io_failed)?,
        }
        Ok(true)
    }

    /// The person's legal moves, all or those of the piece on `from`.
    fn list_moves(&self, from: Option<&str>, out: &mut dyn Write) -> Result<(), Failure> {
        let from = match from.map(|sq| (sq, parse_square(sq, self.session.game.variant().size()))) {
            Some((_, Ok(sq))) => Some(sq),
            Some((sq, Err(e))) => return writeln!(out, "`{sq}`: {e}").map_err(io_failed),
            None => None,
        };
        let moves: Vec<String> = self
            .session
            .game
            .legal_moves()
            .iter()
            .filter(|m| from.is_none_or(|f| m.from == f))
            .map(ToString::to_string)
            .collect();
        writeln!(out, "{} legal moves: {}", moves.len(), moves.join(" ")).map_err(io_failed)
    }

    /// Back to the person's previous turn: the engine's reply, then the person's move (after
    /// undoing a ply, the side to move is the one that made it).
    fn undo(&mut self, out: &mut dyn Write) -> Result<(), Failure> {
        let mut undone = 0;
        while self.session.undo() {
            undone += 1;
            if self.session.game.position().side_to_move() == self.human {
                break;
            }
        }
        if undone == 0 {
            return writeln!(out, "nothing to undo").map_err(io_failed);
        }
        writeln!(out, "took back {undone} {}", if undone == 1 { "ply" } else { "plies" }).map_err(io_failed)?;
        self.show(out)
    }

    /// The engine's evaluation of the person's position and the line it expects.
    fn eval(&mut self, out: &mut dyn Write) -> Result<(), Failure> {
        let choice = match self.engine.choose(&self.session.game, &self.limits) {
            Ok(choice) => choice,
            Err(e) => return writeln!(out, "no evaluation: {e}").map_err(io_failed),
        };
        let value = choice.value.map_or_else(|| "no evaluation".to_string(), |v| format!("{v:+.2} for you"));
        let pv: Vec<String> = choice.pv.iter().map(ToString::to_string).collect();
        writeln!(
            out,
            "eval: {value}; best {}; line {} (depth {}, {} nodes)",
            choice.mv,
            pv.join(" "),
            choice.depth,
            choice.nodes
        )
        .map_err(io_failed)
    }

    /// A word that is not a command: a move, played when it is legal.
    fn human_move(&mut self, text: &str, out: &mut dyn Write) -> Result<(), Failure> {
        match parse_move(text, self.session.game.variant().size()) {
            Ok(m) => match self.session.play(m.mv) {
                Ok(()) => self.show(out),
                Err(e) => writeln!(out, "illegal: {e} (type `moves` for the legal ones)").map_err(io_failed),
            },
            Err(e) => writeln!(out, "`{text}` is neither a move nor a command ({e}); type `help`").map_err(io_failed),
        }
    }

    fn announce_end(&self, out: &mut dyn Write) -> Result<(), Failure> {
        match self.session.game.outcome() {
            Outcome::Decided { winner, reason } => {
                let who = if winner == self.human { "You win" } else { "You lose" };
                writeln!(out, "{who}: the {} won ({reason}).", winner.name())
            }
            Outcome::Draw { reason } => writeln!(out, "Draw ({reason})."),
            Outcome::Ongoing => writeln!(out, "Game stopped after {} plies.", self.session.game.ply()),
        }
        .map_err(io_failed)
    }
}

/// Saves the game in the archive format, where `--save` says or in a new file here.
fn save_game(args: &PlayArgs, session: &Session, out: &mut dyn Write) -> Result<(), Failure> {
    let mut text = String::new();
    if args.fen.is_some() {
        let _ = writeln!(text, "# start {}", session.game.start().to_fen());
    }
    let _ = writeln!(text, "{}", session.archive_line());
    let saved = match &args.save {
        Some(path) => std::fs::write(path, &text)
            .map(|()| path.clone())
            .with_context(|| format!("saving the game to {}", path.display())),
        None => save_new(Path::new(""), unix_seconds(), &text).context("saving the game to tafl-game-<time>.csv here"),
    };
    let path = saved.map_err(|e| Failure { code: 1, error: e })?;
    writeln!(out, "Game saved to {} (archive format; `tafl replay {}` checks it).", path.display(), path.display())
        .map_err(io_failed)
}

fn unix_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Writes `text` to a new file in `dir`: `tafl-game-<secs>.csv`, or, when a game of the same
/// second is saved there already, `tafl-game-<secs>-2.csv`, `-3`, …: never over another game.
/// Returns the file's path.
fn save_new(dir: &Path, secs: u64, text: &str) -> io::Result<PathBuf> {
    for n in 1..=1000u32 {
        let name = if n == 1 { format!("tafl-game-{secs}.csv") } else { format!("tafl-game-{secs}-{n}.csv") };
        let path = dir.join(name);
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => return file.write_all(text.as_bytes()).map(|()| path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("tafl-game-{secs}-1000.csv and every name before it exist"),
    ))
}

fn show(out: &mut dyn Write, session: &Session, style: &Style) -> io::Result<()> {
    let position = session.game.position();
    let danger = king_danger(position);
    write!(out, "{}", draw(position, session.game.moves().last().copied(), style, &danger))?;
    let mut notes = Vec::new();
    if danger.surrounded {
        notes.push(style.paint("1;31", "the king is closed in on three sides: one attacker move can capture him"));
    }
    for c in &danger.sees_corners {
        notes.push(style.paint("1;35", &format!("the king has an open line to the corner {c}")));
    }
    for sq in &danger.forks {
        notes.push(style.paint("1;35", &format!("the king can reach {sq}, which sees two corners")));
    }
    for n in notes {
        writeln!(out, "  ! {n}")?;
    }
    if !session.game.outcome().is_over() {
        writeln!(out, "{} to move (ply {})", side_name(position.side_to_move()), session.game.ply() + 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tafl_rules::Variant;

    #[test]
    fn games_of_the_same_second_get_names_of_their_own() {
        let dir = std::env::temp_dir().join(format!("tafl-play-save-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let first = save_new(&dir, 1700000000, "first\n").unwrap();
        let second = save_new(&dir, 1700000000, "second\n").unwrap();
        let third = save_new(&dir, 1700000000, "third\n").unwrap();
        assert_eq!(first, dir.join("tafl-game-1700000000.csv"));
        assert_eq!(second, dir.join("tafl-game-1700000000-2.csv"));
        assert_eq!(third, dir.join("tafl-game-1700000000-3.csv"));
        for (path, text) in [(&first, "first\n"), (&second, "second\n"), (&third, "third\n")] {
            assert_eq!(std::fs::read_to_string(path).unwrap(), text);
        }
        assert_eq!(save_new(&dir, 1700000001, "next\n").unwrap(), dir.join("tafl-game-1700000001.csv"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn colours_only_when_asked() {
        let p = Position::start(Variant::copenhagen());
        let m = Some(Move::new(Square::new(3, 0), Square::new(3, 3)));
        let danger = king_danger(&p);
        assert!(draw(&p, m, &Style { color: true }, &danger).contains("\x1b[1;31m"));
        let plain = draw(&p, m, &Style { color: false }, &danger);
        assert!(!plain.contains('\x1b'));
        assert!(plain.contains(" 1  + . . x X X X X . . +  1"), "{plain}");
    }
}
