//! The connection: the socket, the login, the reader thread that turns lines into events,
//! the writes, and what a lost connection means for the games (reconnecting is the loop's,
//! in `run`). Kept apart so that everything that knows about `TcpStream` is in one place.

use std::io::{BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::thread;
use std::time::{Duration, Instant};

use super::{Client, Event};
use crate::protocol::{self, MAX_BINARY, MAX_LINE, Read, ServerLine};

/// One login's socket: the write half (the reader thread holds the other), its generation (events
/// of an older connection are dropped), and when we last heard from the server and pinged it.
pub(super) struct Connection {
    pub(super) writer: TcpStream,
    pub(super) generation: u64,
    pub(super) last_heard: Instant,
    pub(super) last_ping: Instant,
}

impl Client {
    pub(super) fn connect(&mut self) -> Result<Connection, ConnectError> {
        let o = &self.options;
        let address = o.address.to_socket_addrs().map_err(|e| ConnectError::Retry(e.to_string()))?.next();
        let address = address.ok_or_else(|| ConnectError::Retry(format!("{} has no address", o.address)))?;
        let stream = TcpStream::connect_timeout(&address, Duration::from_secs(10))
            .map_err(|e| ConnectError::Retry(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        stream.set_write_timeout(Some(Duration::from_secs(10))).map_err(|e| ConnectError::Retry(e.to_string()))?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(|e| ConnectError::Retry(e.to_string()))?;
        let mut reader = BufReader::new(stream.try_clone().map_err(|e| ConnectError::Retry(e.to_string()))?);
        let mut writer = stream;
        let mut create = o.create_account;
        for _ in 0..3 {
            let line = protocol::login_line(&o.version, create, &o.username, &o.password);
            writeln!(writer, "{line}").map_err(|e| ConnectError::Retry(e.to_string()))?;
            // The server answers the login before anything else; skip what is not an answer.
            let answer = loop {
                match protocol::read_line(&mut reader, MAX_LINE).map_err(|e| ConnectError::Retry(e.to_string()))? {
                    Read::Closed => return Err(ConnectError::Retry("closed during login".into())),
                    Read::TooLong(_) => {}
                    Read::Line(text) => {
                        if let answer @ (ServerLine::LoggedIn | ServerLine::LoginRefused(_)) = ServerLine::parse(&text)
                        {
                            break answer;
                        }
                    }
                }
            };
            match answer {
                ServerLine::LoggedIn => {
                    self.say(&format!("logged in to {} as {}", o.address, o.username));
                    return Ok(self.start_reader(reader, writer));
                }
                ServerLine::LoginRefused(words) => {
                    if create && words.contains("already_exists") {
                        self.say("the account exists: logging in");
                        create = false;
                        continue;
                    }
                    if words.contains("wrong_version") {
                        return Err(ConnectError::Fatal(format!(
                            "{words} (this client speaks protocol {}; try --protocol-version)",
                            o.version
                        )));
                    }
                    if !(words.contains("logged_in_already") || words.contains("retried_too_soon")) {
                        let hint = if words.contains("account_not_in_database") {
                            " (add --create-account to create it)"
                        } else {
                            ""
                        };
                        return Err(ConnectError::Fatal(format!("{words}{hint}")));
                    }
                    // Logged in elsewhere (our old connection, not yet dropped), or too soon.
                    return Err(ConnectError::Retry(format!("the server says `{}`", protocol::clip(&words))));
                }
                _ => {}
            }
        }
        Err(ConnectError::Retry("login did not settle".into()))
    }

    fn start_reader(&mut self, mut reader: BufReader<TcpStream>, writer: TcpStream) -> Connection {
        self.generation += 1;
        let generation = self.generation;
        let events = self.events.clone();
        thread::spawn(move || {
            loop {
                let event = match protocol::read_line(&mut reader, MAX_LINE) {
                    Ok(Read::Line(text)) => {
                        let line = ServerLine::parse(&text);
                        if let ServerLine::Binary(n) = line
                            && (n > MAX_BINARY || protocol::skip_bytes(&mut reader, n).is_err())
                        {
                            let _ = events.send(Event::Closed(generation, format!("a binary block of {n} bytes")));
                            return;
                        }
                        Event::Line(generation, line)
                    }
                    Ok(Read::TooLong(n)) => Event::TooLong(generation, n),
                    Ok(Read::Closed) => {
                        let _ = events.send(Event::Closed(generation, "the server closed the connection".into()));
                        return;
                    }
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                        continue;
                    }
                    Err(e) => {
                        let _ = events.send(Event::Closed(generation, e.to_string()));
                        return;
                    }
                };
                if events.send(event).is_err() {
                    return;
                }
            }
        });
        let now = Instant::now();
        Connection { writer, generation, last_heard: now, last_ping: now }
    }

    pub(super) fn send(&self, connection: &mut Connection, line: &str) -> Result<(), String> {
        writeln!(connection.writer, "{line}").map_err(|e| format!("writing `{}`: {e}", protocol::clip(line)))
    }

    pub(super) fn lost_connection(&mut self) {
        for a in self.active.values_mut() {
            a.synced = false;
            a.resume_asked = None;
            a.resume_tries = 0;
        }
        // The server drops offers of a player who logs out (clocks under a day); offer anew.
        self.offers.clear();
        self.offers_sent.clear();
        self.awaiting.clear();
        for id in self.joins.drain() {
            self.joins_left.push_back(id);
        }
    }
}

/// Why a connection attempt failed, and whether another attempt can help.
pub(super) enum ConnectError {
    /// Worth trying again later.
    Retry(String),
    /// Retrying cannot help (wrong password, wrong protocol version).
    Fatal(String),
}

/// 1 s, 2 s, 4 s … up to `max`: the server also slows down repeated logins (1, 2, 4, 8, 16 s,
/// then 30 minutes after five failures in a row), so never retry faster than it allows.
pub(super) fn backoff(failures: u32, max: Duration) -> Duration {
    let secs = 1u64 << failures.saturating_sub(1).min(10);
    Duration::from_secs(secs).min(max).max(Duration::from_secs(1))
}
