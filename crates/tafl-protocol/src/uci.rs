//! A UCI-style protocol, as the TaflZero engine speaks it (and playtafl.org drives it): chess
//! UCI with tafl positions and moves.
//!
//! | GUI → engine | engine → GUI |
//! |---|---|
//! | `uci` | `id name …`, `id author …`, `option …`, `uciok` |
//! | `isready` | `readyok` (at once, even while searching) |
//! | `setoption name Variant value copenhagen` / `name MoveTime value MS` / `name MultiPV value N` | |
//! | `ucinewgame` | |
//! | `position startpos [moves d1d4 …]` | |
//! | `position fen 3aaaaa3/…/3aaaaa3 a [moves …]` | |
//! | `go [nodes N] [depth D] [movetime MS] [wtime MS btime MS winc MS binc MS] [infinite]` | `info depth … nodes … time … score cp … pv …`, then `bestmove d1d4` |
//! | `stop` | ends `go infinite` (or waits for the running search), `bestmove …` |
//! | `d` | the board, for people |
//! | `quit` | |
//!
//! * Positions are the FEN of [`tafl_rules::Position::to_fen`] (TaflZero's: ranks from the
//!   top, `a` attacker, `d` defender, `k` king, then `a` or `d` to move). A FEN of another
//!   board size switches to the preset of that size.
//! * Moves are written `d1d4`, as TaflZero writes them; `d1-d4` is accepted too.
//! * `score cp` is the player's value from the side to move's view times 1000.
//! * `go nodes N` limits search nodes and MCTS visits alike.
//! * With `MultiPV` N > 1 (at most [`MAX_LINES`]), each `info` is N lines, `info multipv K
//!   depth … nodes … time … score cp … pv …` for the K-th best move, the move to be played
//!   first. An MCTS reads them off its tree; alpha-beta searches each, so it sees less deep.
//!   Players with no lines of their own (random, an external engine) answer one line.
//! * Errors (a bad FEN, an illegal move, an unknown command, a line that is not UTF-8 or is
//!   longer than [`MAX_LINE`]) are answered `info string error: …`, and the engine keeps going;
//!   after a bad `position` the previous position stays.
//! * `stop` (or any command that needs the engine: `position`, `go`, `ucinewgame`, `quit`)
//!   ends the running search at once: its [`tafl_search::Stop`] flag is set and it answers with
//!   its best move so far. `go infinite` searches in slices of growing length (up to a second),
//!   so that an `info` line comes after each, until `stop`.

use std::io::{self, BufRead, Write};
use std::sync::Mutex;
use std::thread::{self, ScopedJoinHandle};
use std::time::{Duration, Instant};

use tafl_rules::{Game, PRESETS, Position, Side, Variant, parse_move};
use tafl_search::{Limits, Line, MAX_LINES, MAX_SEARCH_COUNT, MoveChoice, Player, Stop};

use crate::engine::{EngineOptions, choose_checked, compact_move, time_for_move};
use crate::lines::{MAX_LINE, read_line};

/// How long the first slice of `go infinite` lasts; each next one is twice as long.
const FIRST_SLICE: Duration = Duration::from_millis(100);
/// The longest slice: `stop` waits at most this long.
const LONGEST_SLICE: Duration = Duration::from_secs(1);
/// The deepest `go depth`: deeper asks are searched this deep (alpha-beta stops at 32 anyway).
const MAX_GO_DEPTH: u32 = 64;

type Output<'a> = Mutex<&'a mut (dyn Write + Send)>;

fn say(out: &Output<'_>, line: &str) {
    // A GUI that closed its end is not worth a panic; the input will end too.
    if let Ok(mut w) = out.lock() {
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    }
}

/// How a `go` searches.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Go {
    /// Once, with these limits.
    Limited(Limits),
    /// In slices until `stop`, with these limits (time is set per slice).
    Infinite(Limits),
}

impl Go {
    fn limits_mut(&mut self) -> &mut Limits {
        match self {
            Go::Limited(limits) | Go::Infinite(limits) => limits,
        }
    }
}

/// A UCI-style engine session.
pub struct UciServer {
    player: Option<Box<dyn Player>>,
    options: EngineOptions,
    variant: &'static Variant,
    game: Game,
    name: String,
    /// `MultiPV`: how many lines each `info` reports.
    lines: usize,
}

impl UciServer {
    /// A session on the start of `variant`.
    #[must_use]
    pub fn new(player: Box<dyn Player>, variant: &'static Variant, options: EngineOptions) -> UciServer {
        UciServer {
            player: Some(player),
            options,
            variant,
            game: Game::new(variant),
            name: format!("tafl {}", env!("CARGO_PKG_VERSION")),
            lines: 1,
        }
    }

    /// The game the next `go` searches.
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Serves until `quit` or the end of the input (after which a running search is stopped
    /// and its `bestmove` still written).
    pub fn run(&mut self, input: &mut dyn BufRead, output: &mut (dyn Write + Send)) -> io::Result<()> {
        let out: Output<'_> = Mutex::new(output);
        // The running search's flag; each `go` gets a fresh one.
        let mut stop = Stop::new();
        thread::scope(|scope| -> io::Result<()> {
            let mut running: Option<ScopedJoinHandle<'_, Box<dyn Player>>> = None;
            let mut infinite = false;
            loop {
                let line = match read_line(input, MAX_LINE)? {
                    Some(Ok(line)) => Some(line),
                    Some(Err(e)) => {
                        // Answered at once, like `isready`: a running search goes on.
                        say(&out, &format!("info string error: {e}"));
                        continue;
                    }
                    None => None,
                };
                let words: Vec<&str> = line.as_deref().unwrap_or_default().split_whitespace().collect();
                let ended = line.is_none();
                let command = if ended { "quit" } else { words.first().copied().unwrap_or_default() };
                if command == "isready" {
                    say(&out, "readyok");
                    continue;
                }
                if command.is_empty() {
                    continue;
                }
                // Anything else waits for the running search, which these commands end at once.
                // The end of the input is no hurry: a script's last `go` runs to its limits
                // (an infinite one ends).
                if let Some(handle) = running.take() {
                    if (!ended && matches!(command, "stop" | "quit" | "ucinewgame" | "position" | "go"))
                        || (ended && infinite)
                    {
                        stop.stop();
                    }
                    self.player = Some(handle.join().map_err(|_| io::Error::other("the search thread panicked"))?);
                }
                match command {
                    "quit" => return Ok(()),
                    "stop" => {}
                    "go" => match self.parse_go(&words[1..]) {
                        Ok(mut go) => {
                            let Some(player) = self.player.take() else { continue };
                            let game = self.game.clone();
                            stop = Stop::new();
                            go.limits_mut().stop = stop.clone();
                            infinite = matches!(go, Go::Infinite(_));
                            let (out, stop) = (&out, stop.clone());
                            running = Some(scope.spawn(move || search(player, &game, go, &stop, out)));
                        }
                        Err(e) => say(&out, &format!("info string error: {e}")),
                    },
                    _ => {
                        if let Err(e) = self.command(command, &words[1..], &out) {
                            say(&out, &format!("info string error: {e}"));
                        }
                    }
                }
            }
        })
    }

    fn command(&mut self, command: &str, args: &[&str], out: &Output<'_>) -> Result<(), String> {
        match command {
            "uci" => {
                say(out, &format!("id name {}", self.name));
                say(out, "id author the tafl authors");
                let mut vars: Vec<&str> = PRESETS.to_vec();
                if !vars.contains(&self.variant.name()) {
                    vars.push(self.variant.name());
                }
                let vars: String = vars.iter().map(|v| format!(" var {v}")).collect();
                say(out, &format!("option name Variant type combo default {}{vars}", self.variant.name()));
                let ms = self.options.move_time.map_or(0, |t| t.as_millis());
                say(out, &format!("option name MoveTime type spin default {ms} min 0 max 86400000"));
                say(out, &format!("option name MultiPV type spin default 1 min 1 max {MAX_LINES}"));
                say(out, "uciok");
            }
            "ucinewgame" => {
                self.game = Game::new(self.variant);
                if let Some(p) = &mut self.player {
                    p.new_game();
                }
            }
            "setoption" => self.set_option(args)?,
            "position" => self.position(args)?,
            "d" | "board" => {
                for line in self.game.position().pretty().lines() {
                    say(out, line);
                }
                say(out, &format!("fen {}", self.game.position().to_fen()));
            }
            other => return Err(format!("unknown command `{other}`")),
        }
        Ok(())
    }

    fn set_option(&mut self, args: &[&str]) -> Result<(), String> {
        let text = args.join(" ");
        let rest = text.strip_prefix("name ").ok_or("expected `setoption name NAME value VALUE`")?;
        let (name, value) = rest.split_once(" value ").unwrap_or((rest, ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "variant" => {
                let v = Variant::preset(value.trim())
                    .or_else(|| (value.trim() == self.variant.name()).then_some(self.variant))
                    .ok_or_else(|| format!("unknown variant `{}` (presets: {})", value.trim(), PRESETS.join(", ")))?;
                self.variant = v;
                self.game = Game::new(v);
            }
            "movetime" => {
                let ms: u64 =
                    value.trim().parse().map_err(|_| format!("MoveTime must be milliseconds, found `{value}`"))?;
                self.options.move_time = (ms > 0).then(|| Duration::from_millis(ms));
            }
            "multipv" => {
                self.lines = value
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_LINES).contains(n))
                    .ok_or_else(|| format!("MultiPV must be 1 to {MAX_LINES}, found `{}`", value.trim()))?;
            }
            other => return Err(format!("unknown option `{other}`")),
        }
        Ok(())
    }

    /// `position startpos|fen FEN… [moves …]`; the position is unchanged on any error.
    fn position(&mut self, args: &[&str]) -> Result<(), String> {
        let moves_at = args.iter().position(|w| *w == "moves").unwrap_or(args.len());
        let (setup, moves) = (&args[..moves_at], args.get(moves_at + 1..).unwrap_or_default());
        let mut game = match setup {
            ["startpos"] => Game::new(self.variant),
            ["fen", fen @ ..] if !fen.is_empty() => {
                let text = fen.join(" ");
                let ranks = text.split_whitespace().next().unwrap_or_default().split('/').count();
                let variant = if ranks == self.variant.size() as usize {
                    self.variant
                } else {
                    preset_of_size(ranks).ok_or_else(|| format!("no variant with a {ranks}x{ranks} board"))?
                };
                Game::from_position(Position::from_fen(variant, &text).map_err(|e| format!("bad fen `{text}`: {e}"))?)
            }
            _ => return Err("expected `position startpos|fen FEN [moves …]`".to_string()),
        };
        let size = game.variant().size();
        for text in moves {
            let m = parse_move(text, size).map_err(|e| format!("bad move `{text}`: {e}"))?.mv;
            game.play(m).map_err(|e| format!("illegal move `{text}`: {e}"))?;
        }
        self.game = game;
        Ok(())
    }

    fn parse_go(&self, args: &[&str]) -> Result<Go, String> {
        let mut limits = Limits { lines: (self.lines > 1).then_some(self.lines), ..Limits::default() };
        let mut infinite = false;
        let (mut wtime, mut btime, mut winc, mut binc) = (None, None, Duration::ZERO, Duration::ZERO);
        let mut i = 0;
        while i < args.len() {
            let key = args[i];
            let number = || -> Result<u64, String> {
                let v = args.get(i + 1).ok_or_else(|| format!("`{key}` needs a number"))?;
                // Clocks can run below zero in some GUIs: treat that as no time left.
                v.parse::<i64>().map(|n| n.max(0).unsigned_abs()).map_err(|_| format!("`{key} {v}`: not a number"))
            };
            let ms = |n: u64| Duration::from_millis(n);
            match key {
                "infinite" => {
                    infinite = true;
                    i += 1;
                    continue;
                }
                "ponder" => {
                    i += 1;
                    continue;
                }
                "nodes" => {
                    let n = number()?;
                    if n > MAX_SEARCH_COUNT {
                        return Err(format!("`nodes {n}`: at most {MAX_SEARCH_COUNT}"));
                    }
                    limits.nodes = Some(n);
                    limits.visits = Some(n);
                }
                "depth" => {
                    limits.depth = Some(u32::try_from(number()?.min(u64::from(MAX_GO_DEPTH))).unwrap_or(MAX_GO_DEPTH))
                }
                "movetime" => limits.time = Some(ms(number()?)),
                "wtime" => wtime = Some(ms(number()?)),
                "btime" => btime = Some(ms(number()?)),
                "winc" => winc = ms(number()?),
                "binc" => binc = ms(number()?),
                "movestogo" | "mate" => {
                    number()?;
                }
                other => return Err(format!("unknown go parameter `{other}`")),
            }
            i += 2;
        }
        if self.game.outcome().is_over() {
            return Ok(Go::Limited(limits));
        }
        // Chess GUIs call the side that moves first "white": here the attackers.
        let (clock, inc) =
            if self.game.position().side_to_move() == Side::Attackers { (wtime, winc) } else { (btime, binc) };
        if limits.time.is_none()
            && let Some(left) = clock
        {
            limits.time = Some(time_for_move(left, inc));
        }
        if infinite {
            return Ok(Go::Infinite(Limits { time: None, ..limits }));
        }
        if limits.time.is_none() && limits.nodes.is_none() && limits.depth.is_none() {
            limits.time = self.options.move_time;
        }
        Ok(Go::Limited(limits))
    }
}

fn preset_of_size(size: usize) -> Option<&'static Variant> {
    PRESETS.iter().filter_map(|p| Variant::preset(p)).find(|v| v.size() as usize == size)
}

/// The `info` of a search: one line, or with several lines found, `info multipv K …` for each.
fn say_info(out: &Output<'_>, choice: &MoveChoice, elapsed: Duration) {
    if choice.lines.len() > 1 {
        for (k, line) in choice.lines.iter().enumerate() {
            say(out, &info_text(&format!("multipv {} ", k + 1), line, choice.depth, elapsed));
        }
    } else {
        let pv = if choice.pv.is_empty() { vec![choice.mv] } else { choice.pv.clone() };
        let main = Line { pv, value: choice.value, nodes: choice.nodes };
        say(out, &info_text("", &main, choice.depth, elapsed));
    }
}

fn info_text(multipv: &str, line: &Line, depth: u32, elapsed: Duration) -> String {
    let mut text = format!("info {multipv}depth {depth} nodes {} time {}", line.nodes, elapsed.as_millis());
    if let Some(v) = line.value {
        text.push_str(&format!(" score cp {}", (v * 1000.0).round() as i32));
    }
    let pv: Vec<String> = line.pv.iter().map(|m| compact_move(*m)).collect();
    text.push_str(" pv ");
    text.push_str(&pv.join(" "));
    text
}

/// One `go`, on the search thread; gives the player back.
fn search(mut player: Box<dyn Player>, game: &Game, go: Go, stop: &Stop, out: &Output<'_>) -> Box<dyn Player> {
    let started = Instant::now();
    if game.outcome().is_over() || game.legal_moves().is_empty() {
        if matches!(go, Go::Infinite(_)) {
            wait_for_stop(stop);
        }
        say(out, "bestmove (none)");
        return player;
    }
    let best = match go {
        Go::Limited(limits) => match choose_checked(player.as_mut(), game, &limits) {
            Ok(choice) => {
                say_info(out, &choice, started.elapsed());
                Some(choice)
            }
            Err(e) => {
                say(out, &format!("info string error: {e}"));
                None
            }
        },
        Go::Infinite(limits) => {
            let mut best = None;
            let mut slice = FIRST_SLICE;
            // The first slice runs even when `stop` came at once: a GUI that stops at once
            // still needs a move.
            loop {
                let slice_started = Instant::now();
                match choose_checked(player.as_mut(), game, &limits.with_time(Some(slice))) {
                    Ok(choice) => {
                        say_info(out, &choice, started.elapsed());
                        best = Some(choice);
                    }
                    Err(e) => {
                        say(out, &format!("info string error: {e}"));
                        break;
                    }
                }
                // A player that does not use its time (a fixed depth, a random mover) would
                // only repeat itself: keep its answer and wait.
                if slice_started.elapsed() < slice / 2 || stop.is_set() {
                    break;
                }
                slice = (slice * 2).min(LONGEST_SLICE);
            }
            wait_for_stop(stop);
            best
        }
    };
    match best {
        Some(choice) => say(out, &format!("bestmove {}", compact_move(choice.mv))),
        None => say(out, "bestmove (none)"),
    }
    player
}

fn wait_for_stop(stop: &Stop) {
    while !stop.is_set() {
        thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::LimitsRecorder;
    use tafl_search::{AlphaBeta, RandomPlayer};

    fn run_script(player: Box<dyn Player>, script: &str) -> Vec<String> {
        let mut server = UciServer::new(player, Variant::copenhagen(), EngineOptions::default());
        let mut out: Vec<u8> = Vec::new();
        server.run(&mut script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().map(str::to_string).collect()
    }

    #[test]
    fn handshake_and_a_search() {
        let out = run_script(
            Box::new(AlphaBeta::with_depth(2)),
            "uci\nisready\nucinewgame\nposition startpos moves d1d4 f4-f3\ngo depth 2\n",
        );
        assert_eq!(out[0], format!("id name tafl {}", env!("CARGO_PKG_VERSION")));
        assert!(out.contains(&"uciok".to_string()), "{out:?}");
        assert!(out.contains(&"readyok".to_string()), "{out:?}");
        let info = out.iter().find(|l| l.starts_with("info depth 2 ")).expect("an info line");
        assert!(info.contains(" score cp ") && info.contains(" pv "), "{info}");
        let best = out.last().unwrap();
        assert!(best.starts_with("bestmove "), "{out:?}");
        let m = parse_move(best.trim_start_matches("bestmove "), 11).unwrap().mv;
        let mut game = Game::new(Variant::copenhagen());
        for text in ["d1-d4", "f4-f3"] {
            game.play(parse_move(text, 11).unwrap().mv).unwrap();
        }
        assert!(game.position().check_move(m).is_ok());
    }

    /// The `info multipv` lines of a script's output: (K, first move of the line).
    fn multipv_lines(out: &[String]) -> Vec<(usize, String)> {
        out.iter()
            .filter_map(|l| l.strip_prefix("info multipv "))
            .map(|rest| {
                let k = rest.split_whitespace().next().and_then(|k| k.parse().ok()).expect("a line number");
                let pv = rest.split(" pv ").nth(1).expect("a pv");
                (k, pv.split_whitespace().next().expect("a move").to_string())
            })
            .collect()
    }

    #[test]
    fn multipv_reports_each_line_the_move_played_first() {
        let players: [Box<dyn Player>; 2] = [
            Box::new(AlphaBeta::with_depth(2)),
            Box::new(tafl_search::MctsPlayer::new(
                tafl_search::UniformEvaluator,
                tafl_search::SearchParams::gumbel(200),
            )),
        ];
        for player in players {
            let out = run_script(player, "uci\nsetoption name MultiPV value 3\nposition startpos\ngo depth 2\n");
            assert!(out.iter().any(|l| l == "option name MultiPV type spin default 1 min 1 max 256"), "{out:?}");
            let lines = multipv_lines(&out);
            assert_eq!(lines.iter().map(|l| l.0).collect::<Vec<_>>(), [1, 2, 3], "{out:?}");
            let mut moves: Vec<&String> = lines.iter().map(|l| &l.1).collect();
            assert_eq!(out.last().unwrap(), &format!("bestmove {}", lines[0].1));
            moves.sort();
            moves.dedup();
            assert_eq!(moves.len(), 3, "{out:?}");
            assert!(out.iter().filter(|l| l.starts_with("info multipv ")).all(|l| l.contains(" score cp ")));
        }
    }

    #[test]
    fn multipv_one_is_the_plain_info_and_bad_counts_are_refused() {
        let out = run_script(
            Box::new(AlphaBeta::with_depth(1)),
            "setoption name MultiPV value 0\nsetoption name MultiPV value 257\nsetoption name MultiPV value x\nsetoption name MultiPV value 1\ngo depth 1\n",
        );
        for (line, value) in out.iter().zip(["0", "257", "x"]) {
            assert_eq!(line, &format!("info string error: MultiPV must be 1 to 256, found `{value}`"));
        }
        assert!(out[3].starts_with("info depth 1 "), "{out:?}");
        assert!(multipv_lines(&out).is_empty());
    }

    #[test]
    fn a_player_without_lines_answers_one_info_under_multipv() {
        let out = run_script(Box::new(RandomPlayer::new(2)), "setoption name MultiPV value 4\ngo nodes 10\n");
        assert!(multipv_lines(&out).is_empty(), "{out:?}");
        assert!(out[0].starts_with("info depth 0 "), "{out:?}");
        assert!(out[1].starts_with("bestmove "), "{out:?}");
    }

    #[test]
    fn errors_are_reported_and_the_engine_goes_on() {
        let out = run_script(
            Box::new(RandomPlayer::new(1)),
            "position startpos moves d1d4 d4d5\nposition fen 11/11 a\ngo nodes x\nflip\nsetoption name Hash value 1\nposition startpos moves a4a3\nd\n",
        );
        assert!(out[0].starts_with("info string error: illegal move `d4d5`"), "{out:?}");
        assert!(out[1].starts_with("info string error: "), "{out:?}");
        assert!(out[2].starts_with("info string error: `nodes x`"), "{out:?}");
        assert_eq!(out[3], "info string error: unknown command `flip`");
        assert_eq!(out[4], "info string error: unknown option `hash`");
        assert!(
            out.last().unwrap().starts_with("fen 3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/5d4a/a10/"),
            "{out:?}"
        );
    }

    #[test]
    fn a_line_that_is_not_utf8_or_too_long_is_refused_and_the_engine_goes_on() {
        let mut script = b"isready\n\xff\n".to_vec();
        script.extend(std::iter::repeat_n(b'p', 10 << 20));
        script.extend_from_slice(b"\nisready\n");
        let mut server =
            UciServer::new(Box::new(RandomPlayer::new(1)), Variant::copenhagen(), EngineOptions::default());
        let mut out: Vec<u8> = Vec::new();
        server.run(&mut script.as_slice(), &mut out).unwrap();
        let long = format!("info string error: the line is {} bytes long, more than {MAX_LINE}", 10 << 20);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("readyok\ninfo string error: the line is not valid UTF-8\n{long}\nreadyok\n")
        );
    }

    /// The limits a recording player was asked with over `script`, and the output.
    fn limits_asked(script: &str) -> (Vec<Limits>, Vec<String>) {
        let (player, asked) = LimitsRecorder::new();
        let out = run_script(Box::new(player), script);
        let asked = asked.lock().unwrap().clone();
        (asked, out)
    }

    #[test]
    fn movetime_is_honoured() {
        let (asked, out) = limits_asked("position startpos\ngo movetime 300\n");
        let asked: Vec<Limits> = asked.into_iter().map(|l| Limits { stop: Stop::default(), ..l }).collect();
        assert_eq!(asked, [Limits { time: Some(Duration::from_millis(300)), ..Limits::default() }]);
        assert!(out.last().unwrap().starts_with("bestmove "), "{out:?}");
    }

    #[test]
    fn the_clock_limits_the_move_time() {
        // The attackers ("white") move at the start, the defenders after one move: each side
        // thinks with its own clock.
        let (asked, out) = limits_asked(
            "position startpos\ngo wtime 3000 btime 60000 winc 0 binc 0\nposition startpos moves d1d4\ngo wtime 3000 btime 60000 winc 0 binc 2000\n",
        );
        let times: Vec<Option<Duration>> = asked.iter().map(|l| l.time).collect();
        let ms = Duration::from_millis;
        assert_eq!(times, [Some(time_for_move(ms(3000), ms(0))), Some(time_for_move(ms(60000), ms(2000)))]);
        assert!(time_for_move(ms(3000), ms(0)) < ms(3000) / 10);
        assert!(out.last().unwrap().starts_with("bestmove "), "{out:?}");
    }

    #[test]
    fn stop_ends_a_limited_search_at_once() {
        // Depth 30 from the start would take days: `stop` ends it, and the move is legal; so
        // does `quit` (the end of the input lets a limited search finish).
        for script in ["position startpos\ngo depth 30\nstop\nisready\n", "position startpos\ngo depth 30\nquit\n"] {
            let out = run_script(Box::new(AlphaBeta::with_depth(30)), script);
            let best = out.iter().find_map(|l| l.strip_prefix("bestmove ")).expect("a bestmove line");
            let m = parse_move(best, 11).unwrap_or_else(|e| panic!("{best}: {e}")).mv;
            assert!(Game::new(Variant::copenhagen()).position().check_move(m).is_ok(), "{best}");
        }
    }

    #[test]
    fn infinite_searches_until_stop() {
        // The input ends at once after `isready`: the search must give its move and end. The
        // player is asked with the first slice as its time, never with no limit at all.
        let (asked, out) = limits_asked("position startpos\ngo infinite\nisready\n");
        assert!(out.contains(&"readyok".to_string()), "{out:?}");
        // A real move, even though the stop came before the search had started.
        let best = out.last().unwrap().strip_prefix("bestmove ").expect("a bestmove line");
        let m = parse_move(best, 11).unwrap_or_else(|e| panic!("{best}: {e}")).mv;
        assert!(Game::new(Variant::copenhagen()).position().check_move(m).is_ok(), "{best}");
        assert_eq!(asked.first().and_then(|l| l.time), Some(FIRST_SLICE), "{asked:?}");
        assert!(asked.iter().all(|l| l.time.is_some_and(|t| t <= LONGEST_SLICE)), "{asked:?}");
    }

    #[test]
    fn an_infinite_search_stopped_before_it_starts_still_gives_a_move() {
        // `stop` already set when the search thread begins (a GUI that stops at once).
        let (player, asked) = LimitsRecorder::new();
        let mut text: Vec<u8> = Vec::new();
        {
            let out: Output<'_> = Mutex::new(&mut text);
            let stop = Stop::new();
            stop.stop();
            let game = Game::new(Variant::copenhagen());
            let _ = search(Box::new(player), &game, Go::Infinite(Limits::default()), &stop, &out);
        }
        let text = String::from_utf8(text).unwrap();
        assert!(text.lines().last().is_some_and(|l| l.starts_with("bestmove ") && l != "bestmove (none)"), "{text}");
        assert_eq!(asked.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_go_with_no_limit_takes_the_default_move_time() {
        let (player, asked) = LimitsRecorder::new();
        let options = EngineOptions { move_time: Some(Duration::from_millis(700)) };
        let mut server = UciServer::new(Box::new(player), Variant::copenhagen(), options);
        let mut out: Vec<u8> = Vec::new();
        server.run(&mut "position startpos\ngo\ngo depth 3\n".as_bytes(), &mut out).unwrap();
        let asked: Vec<Limits> =
            asked.lock().unwrap().iter().map(|l| Limits { stop: Stop::default(), ..l.clone() }).collect();
        assert_eq!(
            asked,
            [
                Limits { time: Some(Duration::from_millis(700)), ..Limits::default() },
                Limits { depth: Some(3), ..Limits::default() }
            ]
        );
    }

    #[test]
    fn a_finished_game_has_no_best_move() {
        // The king already on a corner: the defenders have won.
        let out = run_script(Box::new(RandomPlayer::new(1)), "position fen k10/11/11/11/11/11/11/11/11/11/1a9 a\ngo\n");
        assert_eq!(out.last().unwrap(), "bestmove (none)");
    }
}
