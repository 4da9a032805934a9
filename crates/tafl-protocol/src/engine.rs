//! What every engine server shares: which protocol, how long a move may take, and serving a
//! connection over stdin/stdout or TCP.
//!
//! The servers ([`crate::htp::HtpServer`], [`crate::opentafl::OpenTaflServer`],
//! [`crate::uci::UciServer`]) are plain state machines over a `BufRead` and a `Write`, so tests
//! drive them with in-memory buffers and the CLI hands them stdin/stdout or a socket.

use std::fmt;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::str::FromStr;
use std::time::Duration;

use tafl_rules::{Game, Move, Side};
use tafl_search::{Limits, MoveChoice, Player, PlayerError};

/// The protocols a player can be served over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// The Hnefatafl Text Protocol of hnefatafl.org and the `hnefatafl-copenhagen` crate.
    Htp,
    /// The OpenTafl engine protocol (OTEP).
    OpenTafl,
    /// A UCI-style protocol, as TaflZero speaks it.
    Uci,
}

impl Protocol {
    /// The names [`Protocol::from_str`] accepts.
    pub const NAMES: &'static str = "htp, opentafl, uci";
}

impl FromStr for Protocol {
    type Err = String;

    fn from_str(text: &str) -> Result<Protocol, String> {
        match text.to_ascii_lowercase().as_str() {
            "htp" => Ok(Protocol::Htp),
            "opentafl" | "otep" => Ok(Protocol::OpenTafl),
            "uci" => Ok(Protocol::Uci),
            _ => Err(format!("unknown protocol `{text}` (known: {})", Protocol::NAMES)),
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Protocol::Htp => "htp",
            Protocol::OpenTafl => "opentafl",
            Protocol::Uci => "uci",
        })
    }
}

/// Settings every server takes from the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// The longest one move may take when the protocol gives no clock (`None`: the player's
    /// own limits decide).
    pub move_time: Option<Duration>,
}

/// How long to think with `remaining` on the clock and `increment` added after the move:
/// a thirtieth of the remaining time plus most of the increment, never more than the remaining
/// time less a safety margin (the move must arrive before the flag falls), and never zero.
#[must_use]
pub fn time_for_move(remaining: Duration, increment: Duration) -> Duration {
    let margin = (remaining / 20).clamp(Duration::from_millis(20), Duration::from_secs(1));
    let budget = remaining / 30 + increment.mul_f32(0.8);
    let ceiling = remaining.saturating_sub(margin);
    budget.min(ceiling).max(Duration::from_millis(10))
}

/// The limits for one search: the player's own, with `time` (from a clock or a command) as the
/// time limit when given, else the default move time of the options.
#[must_use]
pub fn limits_with_time(time: Option<Duration>, options: &EngineOptions) -> Limits {
    Limits { time: time.or(options.move_time), ..Limits::default() }
}

/// Asks `player` for a move and checks that it is legal: a player that answers an illegal
/// move is a bug, reported rather than played.
pub fn choose_checked(player: &mut dyn Player, game: &Game, limits: &Limits) -> Result<MoveChoice, PlayerError> {
    let choice = player.choose(game, limits)?;
    game.position()
        .check_move(choice.mv)
        .map_err(|e| PlayerError::Engine(format!("{} chose the illegal move {}: {e}", player.name(), choice.mv)))?;
    Ok(choice)
}

/// A value from the side to move's view turned into the attackers' view.
#[must_use]
pub fn attackers_view(value: f32, side_to_move: Side) -> f32 {
    if side_to_move == Side::Attackers { value } else { -value }
}

/// Moves written without a dash (`d1d4`), as UCI-style protocols write them.
#[must_use]
pub fn compact_move(m: Move) -> String {
    format!("{}{}", m.from, m.to)
}

/// Serves connections on `addr` one after the other, forever: `serve` gets each connection's
/// reader and writer. A failed connection is reported on stderr and the next one is accepted.
pub fn listen<A, F>(addr: A, mut serve: F) -> io::Result<()>
where
    A: ToSocketAddrs,
    F: FnMut(&mut dyn BufRead, &mut (dyn Write + Send)) -> io::Result<()>,
{
    let listener = TcpListener::bind(addr)?;
    eprintln!("listening on {}", listener.local_addr()?);
    for stream in listener.incoming() {
        let result = stream.and_then(|stream| serve_stream(stream, &mut serve));
        if let Err(e) = result {
            eprintln!("connection failed: {e}");
        }
    }
    Ok(())
}

fn serve_stream<F>(stream: TcpStream, serve: &mut F) -> io::Result<()>
where
    F: FnMut(&mut dyn BufRead, &mut (dyn Write + Send)) -> io::Result<()>,
{
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    eprintln!("connection from {peer}");
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    serve(&mut reader, &mut writer)?;
    eprintln!("connection from {peer} closed");
    Ok(())
}

/// Writes one line and flushes it: engines talk to programs that wait for whole lines.
pub(crate) fn send(out: &mut dyn Write, line: &str) -> io::Result<()> {
    writeln!(out, "{line}")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_parse() {
        assert_eq!("HTP".parse::<Protocol>(), Ok(Protocol::Htp));
        assert_eq!("opentafl".parse::<Protocol>(), Ok(Protocol::OpenTafl));
        assert_eq!("uci".parse::<Protocol>().map(|p| p.to_string()), Ok("uci".to_string()));
        assert!("gtp".parse::<Protocol>().is_err());
    }

    #[test]
    fn a_move_never_takes_the_whole_clock() {
        let t = time_for_move(Duration::from_secs(60), Duration::ZERO);
        assert_eq!(t, Duration::from_secs(2));
        let t = time_for_move(Duration::from_millis(100), Duration::from_secs(10));
        assert!(t <= Duration::from_millis(80), "{t:?}");
        assert!(time_for_move(Duration::ZERO, Duration::ZERO) > Duration::ZERO);
    }
}
