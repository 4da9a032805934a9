//! # tafl-arena
//!
//! Matches and tournaments between any [`tafl_search::Player`]s: alpha-beta, random, external
//! engines over HTP or UCI, and (through a [`PlayerFactory`] from a higher crate) network players.
//!
//! * [`spec`]: player specs (`alphabeta:depth=3`, `htp:cmd=…`, `uci:cmd=…`) and factories; a
//!   fresh player is built for every game, so games run in parallel.
//! * [`opening`]: openings (random plies from a seed, or a FEN file); every opening is played
//!   twice with the sides swapped, and results are always shown per side.
//! * [`run`]: [`run_match`] and [`run_tournament`] (round robin), in parallel, with an optional
//!   SPRT that stops a match early; a move cap makes over-long games draws.
//! * [`stats`]: Elo from a score, 95% intervals from games (trinomial) and pairs
//!   (pentanomial), likelihood of superiority, GSPRT.
//! * [`ratings`]: joint Bradley–Terry ratings for a ladder.
//! * [`pool`]: one scale over matches played apart (`tafl ratings`).
//! * [`ladder`]: one player against a ladder of opponents, a rung per opponent (`tafl ladder`).
//! * [`levels`]: levels 1–10 for people (`--level N`), each a fixed player.
//! * [`record`] and [`report`]: archive lines (`tafl replay` reads them), OpenTafl `.otg`
//!   files, `summary.json`, text tables and an SVG ladder plot.
//!
//! Our [`tafl_rules::Game`] referees every game. A player that fails (an engine that dies,
//! times out, answers garbage or moves illegally) loses that game and the run goes on.

pub mod game;
pub mod ladder;
pub mod levels;
pub mod opening;
pub mod pool;
pub mod ratings;
pub mod record;
pub mod report;
pub mod run;
pub mod spec;
pub mod stats;

pub use game::{PlayedGame, Termination, play_game};
pub use ladder::{LadderReport, Rung};
pub use opening::{Opening, parse_openings, random_openings};
pub use pool::{Pool, PoolError, ratings_text};
pub use ratings::{Meeting, Rating, bradley_terry};
pub use report::{GAMES_CSV_HEADER, Summary, game_record, plot_ladder, write_results};
pub use run::{ArenaConfig, ArenaError, ArenaResults, GameResult, PairingStats, Progress, run_match, run_tournament};
pub use spec::{
    BuiltinFactory, HtpSpec, MAX_BATCH, MAX_CACHE, MAX_GUARD_PLIES, MAX_SPEC_DEPTH, MAX_SPEC_TIME, NetSearch,
    PlayerFactory, PlayerKind, PlayerSpec, SpecError, UciSpec, netless_player,
};
pub use stats::{EloEstimate, Pentanomial, Sprt, SprtDecision, SprtStatus, Wdl};
