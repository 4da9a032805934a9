//! # tafl-protocol
//!
//! Engine protocols over stdin/stdout: the Hnefatafl Text Protocol ([`htp`]) used by
//! hnefatafl.org and the `hnefatafl-copenhagen` crate. The client side ([`htp::HtpPlayer`])
//! drives an external engine as a [`tafl_search::Player`], so that it can play in the arena;
//! [`uci_client::UciPlayer`] does the same for engines that speak the UCI-style protocol
//! (TaflZero, or our own [`uci::UciServer`]). This crate owns no game rules:
//! [`tafl_rules::Game`] referees every move.
//!
//! The server side serves any [`tafl_search::Player`] to the frontends people use:
//! [`htp::HtpServer`] (a drop-in for the reference engine `hnefatafl-text-protocol`),
//! [`opentafl::OpenTaflServer`] (the OpenTafl engine protocol, with OTN rules strings parsed
//! into variants by [`opentafl::parse_rules`]) and [`uci::UciServer`] (a UCI-style protocol as
//! TaflZero speaks it). Each is a state machine over a `BufRead` and a `Write`;
//! [`engine::listen`] serves them over TCP. Every line from a peer is read through [`lines`],
//! which caps its length and refuses what is not UTF-8 without ending the session.

mod child;
pub use child::EngineError;
pub mod engine;
pub mod htp;
pub mod lines;
pub mod opentafl;
pub mod uci;
pub mod uci_client;

#[cfg(test)]
pub(crate) mod testing;
