//! # tafl-online
//!
//! A trained player as an account on a Copenhagen Hnefatafl game server: the line protocol of
//! `hnefatafl-server` (hnefatafl.org, port 49152), learnt from the server's behaviour and
//! source and written here from scratch ([`protocol`]); clock management under its Fischer
//! clock ([`clock`]); a referee that checks every reported position with `tafl-rules` and notes
//! where the server's rules differ ([`referee`]); and the client that logs in, offers, accepts
//! and joins games, plays them with any [`tafl_search::Player`], reconnects and stops cleanly
//! ([`client`]). Standard library threads and sockets only: one reader thread per connection,
//! one search thread per game.

pub mod client;
pub mod clock;
pub mod protocol;
pub mod referee;

pub use client::{Client, GameSummary, Log, MakePlayer, OnStop, OnlineError, Options};
pub use clock::{Budget, ClockPolicy};
pub use protocol::{GameId, ServerLine, TimeControl};
