//! Player specs: `KIND:KEY=VALUE,KEY=VALUE…` strings such as `alphabeta:depth=3`,
//! `random:seed=7`, `mcts:model=PATH,visits=200`, `htp:cmd=PROGRAM ARGS` or
//! `uci:movetime=500,cmd=PROGRAM ARGS`, and the factory that turns a spec into a fresh player for
//! each game.
//!
//! The arena builds players through a [`PlayerFactory`], so a crate above the network
//! (`tafl-players`) can handle `mcts:` specs and fall back to [`netless_player`] for the rest:
//!
//! ```
//! use tafl_arena::{PlayerSpec, SpecError, netless_player};
//! use tafl_search::Player;
//! let factory = |spec: &PlayerSpec, game_seed: u64| -> Result<Box<dyn Player>, SpecError> {
//!     match spec.kind.as_str() {
//!         // "mcts" => build an MCTS player with a network here,
//!         _ => netless_player(spec, game_seed),
//!     }
//! };
//! let spec: PlayerSpec = "random:seed=7".parse().unwrap();
//! assert_eq!(factory(&spec, 0).unwrap().name(), "random:seed=7");
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use tafl_protocol::htp::{HtpConfig, HtpPlayer};
use tafl_protocol::uci_client::{UciConfig, UciPlayer};
use tafl_search::{AlphaBeta, Limits, MAX_SEARCH_COUNT, Player, RandomPlayer};

/// The keys that become search [`Limits`]: `visits`, `nodes`, `depth`, `time`.
pub const LIMIT_KEYS: [&str; 4] = ["visits", "nodes", "depth", "time"];

/// The deepest `depth=` a spec may ask for (alpha-beta searches at most 32 plies anyway).
pub const MAX_SPEC_DEPTH: u64 = 64;
/// The longest `time=` or `timeout=` a spec may ask for per move.
pub const MAX_SPEC_TIME: Duration = Duration::from_secs(3600);
/// The deepest tactical check (`guard=`) a spec may ask for: each ply multiplies its cost by
/// the branching factor, and 8 plies already take minutes.
pub const MAX_GUARD_PLIES: u64 = 8;

/// A parsed player spec: a kind and its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerSpec {
    /// What kind of player: `random`, `alphabeta`, `htp`, `uci`, `mcts`, …
    pub kind: String,
    /// `key=value` parameters, in key order.
    pub params: BTreeMap<String, String>,
    /// A display name: the `name` parameter if given, else the spec text.
    pub name: String,
}

/// A bad spec, or a player that could not be built; says which key is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The spec is empty or has no kind.
    #[error("empty player spec (expected e.g. `alphabeta:depth=3`)")]
    Empty,
    /// A parameter without `=`.
    #[error("in `{spec}`: `{param}` is not KEY=VALUE")]
    NotKeyValue {
        /// The whole spec.
        spec: String,
        /// The parameter.
        param: String,
    },
    /// A key given twice.
    #[error("in `{spec}`: key `{key}` given twice")]
    Duplicate {
        /// The whole spec.
        spec: String,
        /// The key.
        key: String,
    },
    /// No factory knows this kind.
    #[error("unknown player kind `{kind}` (known: {known})")]
    UnknownKind {
        /// The kind.
        kind: String,
        /// The kinds the factory knows.
        known: String,
    },
    /// A key the kind does not take.
    #[error("`{kind}` players take no key `{key}` (keys: {allowed})")]
    UnknownKey {
        /// The kind.
        kind: String,
        /// The key.
        key: String,
        /// The keys it takes.
        allowed: String,
    },
    /// A key's value does not parse.
    #[error("`{key}={value}`: expected {expected}")]
    BadValue {
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// A required key is missing.
    #[error("`{kind}` players need `{key}=…`")]
    Missing {
        /// The kind.
        kind: String,
        /// The key.
        key: String,
    },
    /// The player could not be built (an engine did not start, a model did not load).
    #[error("cannot build `{spec}`: {message}")]
    Build {
        /// The spec.
        spec: String,
        /// Why.
        message: String,
    },
}

impl FromStr for PlayerSpec {
    type Err = SpecError;

    /// Parses `KIND[:KEY=VALUE[,KEY=VALUE…]]`. The value of `cmd` runs to the end of the spec
    /// (commands contain spaces and may contain commas), so `cmd` must come last.
    fn from_str(text: &str) -> Result<PlayerSpec, SpecError> {
        let text = text.trim();
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = kind.trim();
        if kind.is_empty() {
            return Err(SpecError::Empty);
        }
        let mut params = BTreeMap::new();
        let mut rest = rest.trim();
        while !rest.is_empty() {
            let (param, tail) =
                if rest.starts_with("cmd=") { (rest, "") } else { rest.split_once(',').unwrap_or((rest, "")) };
            rest = tail.trim();
            let param = param.trim();
            if param.is_empty() {
                continue;
            }
            let (key, value) = param
                .split_once('=')
                .ok_or_else(|| SpecError::NotKeyValue { spec: text.to_string(), param: param.to_string() })?;
            let key = key.trim().to_string();
            if params.insert(key.clone(), value.trim().to_string()).is_some() {
                return Err(SpecError::Duplicate { spec: text.to_string(), key });
            }
        }
        let name = params.get("name").cloned().unwrap_or_else(|| text.to_string());
        Ok(PlayerSpec { kind: kind.to_string(), params, name })
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl PlayerSpec {
    /// A spec from its parts, named `name`: what a program builds without text to parse, so
    /// that a value may hold any character (a model's path with a comma in it).
    #[must_use]
    pub fn from_parts<'a>(kind: &str, params: impl IntoIterator<Item = (&'a str, String)>, name: &str) -> Self {
        let mut params: BTreeMap<String, String> = params.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        params.insert("name".to_string(), name.to_string());
        PlayerSpec { kind: kind.to_string(), params, name: name.to_string() }
    }

    /// The value of a parameter.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }

    /// Fails on the first key not in `allowed` (`name` is always allowed).
    pub fn check_keys(&self, allowed: &[&str]) -> Result<(), SpecError> {
        for key in self.params.keys() {
            if key != "name" && !allowed.contains(&key.as_str()) {
                return Err(SpecError::UnknownKey {
                    kind: self.kind.clone(),
                    key: key.clone(),
                    allowed: allowed.join(", "),
                });
            }
        }
        Ok(())
    }

    /// A whole-number parameter.
    pub fn u64(&self, key: &str) -> Result<Option<u64>, SpecError> {
        self.get(key).map(|v| v.parse().map_err(|_| bad(key, v, "a whole number"))).transpose()
    }

    /// A yes/no parameter: `true`, `yes`, `1` or `false`, `no`, `0`.
    pub fn flag(&self, key: &str) -> Result<Option<bool>, SpecError> {
        self.get(key)
            .map(|v| match v {
                "true" | "yes" | "1" => Ok(true),
                "false" | "no" | "0" => Ok(false),
                _ => Err(bad(key, v, "true or false")),
            })
            .transpose()
    }

    /// A whole-number parameter of at most `max`.
    pub fn bounded(&self, key: &str, max: u64) -> Result<Option<u64>, SpecError> {
        match self.u64(key)? {
            Some(n) if n > max => Err(bad(key, &n.to_string(), &format!("a whole number of at most {max}"))),
            n => Ok(n),
        }
    }

    /// A duration parameter: `1s`, `250ms`, `1.5s`, `2m`, or plain seconds; at most
    /// [`MAX_SPEC_TIME`].
    pub fn duration(&self, key: &str) -> Result<Option<Duration>, SpecError> {
        let expected = "a duration of at most an hour, such as 1s, 250ms or 2m";
        self.get(key)
            .map(|v| parse_duration(v).filter(|d| *d <= MAX_SPEC_TIME).ok_or_else(|| bad(key, v, expected)))
            .transpose()
    }

    /// The search limits in the spec (`visits`, `nodes`, `depth`, `time`), each bounded
    /// ([`MAX_SEARCH_COUNT`], [`MAX_SPEC_DEPTH`], [`MAX_SPEC_TIME`]).
    pub fn limits(&self) -> Result<Limits, SpecError> {
        let depth = self.bounded("depth", MAX_SPEC_DEPTH)?.map(|d| d as u32);
        let visits = self.bounded("visits", MAX_SEARCH_COUNT)?;
        let nodes = self.bounded("nodes", MAX_SEARCH_COUNT.saturating_mul(64))?;
        Ok(Limits { visits, nodes, depth, time: self.duration("time")?, ..Limits::default() })
    }
}

fn bad(key: &str, value: &str, expected: &str) -> SpecError {
    SpecError::BadValue { key: key.to_string(), value: value.to_string(), expected: expected.to_string() }
}

/// Parses `1s`, `250ms`, `1.5s`, `2m`, or plain seconds.
#[must_use]
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text, 1.0)
    };
    let seconds: f64 = number.trim().parse().ok()?;
    // `try_`: a finite but huge number of seconds does not fit a Duration.
    Duration::try_from_secs_f64(seconds * scale).ok()
}

/// Builds a fresh player for one game from a spec. `game_seed` differs from game to game;
/// players with randomness mix it into their own seed so that games differ but a match can
/// be reproduced. Implemented for every `Fn(&PlayerSpec, u64) -> Result<Box<dyn Player>, SpecError>`.
pub trait PlayerFactory: Sync {
    /// A new player for `spec`.
    fn build(&self, spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError>;
}

impl<F> PlayerFactory for F
where
    F: Fn(&PlayerSpec, u64) -> Result<Box<dyn Player>, SpecError> + Sync,
{
    fn build(&self, spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError> {
        self(spec, game_seed)
    }
}

/// The factory for players that need no network: `random`, `alphabeta`, `htp`, `uci`.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuiltinFactory;

impl PlayerFactory for BuiltinFactory {
    fn build(&self, spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError> {
        netless_player(spec, game_seed)
    }
}

/// The kinds [`netless_player`] knows.
pub const NETLESS_KINDS: &str = "random, alphabeta, htp, uci";

/// Builds a player that needs no network:
/// * `random[:seed=N]`: uniformly random moves; the seed is mixed with the game's seed;
/// * `alphabeta[:depth=N][,time=DUR][,nodes=N]`: the alpha-beta baseline;
/// * `htp:[timeout=DUR,][tcp=true,]cmd=PROGRAM ARGS`: an external engine over HTP, `timeout`
///   per move (default 60 s); with `tcp=true` the engine connects to us (the reference engine's
///   `--host` mode, see `tafl_protocol::htp::client`); `cmd` must come last;
/// * `uci:[timeout=DUR,][movetime=DUR|MS,][nodes=N,]cmd=PROGRAM ARGS`: an external engine over
///   the UCI-style protocol (TaflZero's; see `tafl_protocol::uci_client`), asked for `go movetime`
///   (a plain number is milliseconds, as in UCI) and/or `go nodes` unless the caller's limits
///   say otherwise (default a second a move); `timeout` per move (default the move time and
///   10 s, or 60 s for nodes); `cmd` must come last.
///
/// Every kind also takes `name=…` for tables. Any other kind is [`SpecError::UnknownKind`].
pub fn netless_player(spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError> {
    match spec.kind.as_str() {
        "random" => {
            spec.check_keys(&["seed"])?;
            let seed = spec.u64("seed")?.unwrap_or(0);
            Ok(Box::new(RandomPlayer::new(seed ^ game_seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))))
        }
        "alphabeta" => {
            spec.check_keys(&LIMIT_KEYS)?;
            Ok(Box::new(AlphaBeta::new(spec.limits()?)))
        }
        "htp" => {
            spec.check_keys(&["cmd", "timeout", "tcp"])?;
            let cmd =
                spec.get("cmd").ok_or_else(|| SpecError::Missing { kind: spec.kind.clone(), key: "cmd".into() })?;
            let mut config = HtpConfig::from_command_line(cmd)
                .map_err(|e| SpecError::Build { spec: spec.name.clone(), message: e.to_string() })?;
            config.tcp = match spec.get("tcp") {
                None | Some("false") => false,
                Some("true") => true,
                Some(v) => return Err(bad("tcp", v, "true or false")),
            };
            if let Some(t) = spec.duration("timeout")? {
                config.move_timeout = t;
            }
            config.name = Some(spec.name.clone());
            let player = HtpPlayer::spawn(config)
                .map_err(|e| SpecError::Build { spec: spec.name.clone(), message: e.to_string() })?;
            Ok(Box::new(player))
        }
        "uci" => Ok(Box::new(uci_player(spec)?)),
        kind => Err(SpecError::UnknownKind { kind: kind.to_string(), known: NETLESS_KINDS.to_string() }),
    }
}

/// A `uci:` spec's engine, started and past its handshake.
fn uci_player(spec: &PlayerSpec) -> Result<UciPlayer, SpecError> {
    spec.check_keys(&["cmd", "timeout", "movetime", "nodes"])?;
    let cmd = spec.get("cmd").ok_or_else(|| SpecError::Missing { kind: spec.kind.clone(), key: "cmd".into() })?;
    let build =
        |e: tafl_protocol::uci_client::UciError| SpecError::Build { spec: spec.name.clone(), message: e.to_string() };
    let mut config = UciConfig::from_command_line(cmd).map_err(build)?;
    config.move_timeout = spec.duration("timeout")?;
    config.movetime = movetime(spec)?;
    config.nodes = spec.bounded("nodes", MAX_SEARCH_COUNT)?;
    config.name = Some(spec.name.clone());
    UciPlayer::spawn(config).map_err(build)
}

/// `movetime=`: a duration, or a plain number of milliseconds as UCI's `go movetime` takes;
/// more than nothing and at most [`MAX_SPEC_TIME`].
fn movetime(spec: &PlayerSpec) -> Result<Option<Duration>, SpecError> {
    let Some(text) = spec.get("movetime") else { return Ok(None) };
    let time = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().ok().map(Duration::from_millis)
    } else {
        parse_duration(text)
    };
    match time {
        Some(t) if !t.is_zero() && t <= MAX_SPEC_TIME => Ok(Some(t)),
        _ => Err(bad(
            "movetime",
            text,
            "milliseconds or a duration, more than 0 and at most an hour, such as 500 or 1.5s",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> PlayerSpec {
        s.parse().unwrap()
    }

    #[test]
    fn parses_kinds_and_params() {
        let s = spec("alphabeta:depth=3,time=1s");
        assert_eq!(s.kind, "alphabeta");
        assert_eq!(s.get("depth"), Some("3"));
        assert_eq!(
            s.limits().unwrap(),
            Limits { depth: Some(3), time: Some(Duration::from_secs(1)), ..Limits::default() }
        );
        assert_eq!(spec("random").params.len(), 0);
        assert_eq!(spec("random:seed=7,name=r7").name, "r7");
        assert_eq!(spec("random:seed=7").name, "random:seed=7");
    }

    #[test]
    fn flags_take_yes_and_no_and_nothing_else() {
        let s = spec("mcts:a=true,b=no,c=1,d=0,e=maybe");
        assert_eq!(s.flag("a"), Ok(Some(true)));
        assert_eq!(s.flag("b"), Ok(Some(false)));
        assert_eq!(s.flag("c"), Ok(Some(true)));
        assert_eq!(s.flag("d"), Ok(Some(false)));
        assert_eq!(s.flag("f"), Ok(None));
        let e = s.flag("e").unwrap_err();
        assert!(e.to_string().contains("e=maybe") && e.to_string().contains("true or false"), "{e}");
    }

    #[test]
    fn a_spec_from_parts_is_the_spec_its_text_gives() {
        let made = PlayerSpec::from_parts("mcts", [("model", "runs/a".to_string()), ("visits", "8".into())], "m1");
        assert_eq!(made, spec("mcts:model=runs/a,visits=8,name=m1"));
        let comma = PlayerSpec::from_parts("mcts", [("model", "runs/a,b".to_string())], "m2");
        assert_eq!(comma.get("model"), Some("runs/a,b"));
    }

    #[test]
    fn cmd_takes_the_rest() {
        let s = spec("htp:timeout=5s,cmd=engine --a 1,2 --b");
        assert_eq!(s.get("cmd"), Some("engine --a 1,2 --b"));
        assert_eq!(s.duration("timeout").unwrap(), Some(Duration::from_secs(5)));
    }

    #[test]
    fn errors_name_the_bad_key() {
        assert_eq!("".parse::<PlayerSpec>(), Err(SpecError::Empty));
        assert!(matches!("random:seed".parse::<PlayerSpec>(), Err(SpecError::NotKeyValue { .. })));
        assert!(matches!("random:seed=1,seed=2".parse::<PlayerSpec>(), Err(SpecError::Duplicate { .. })));
        let e = netless_player(&spec("alphabeta:dpeth=3"), 0).err().unwrap();
        assert!(e.to_string().contains("dpeth"), "{e}");
        let e = netless_player(&spec("alphabeta:depth=three"), 0).err().unwrap();
        assert!(e.to_string().contains("depth=three"), "{e}");
        let e = netless_player(&spec("mcts:visits=100"), 0).err().unwrap();
        assert!(matches!(e, SpecError::UnknownKind { .. }), "{e}");
        let e = netless_player(&spec("htp"), 0).err().unwrap();
        assert!(matches!(e, SpecError::Missing { .. }), "{e}");
        let e = netless_player(&spec("htp:cmd=/nonexistent/engine"), 0).err().unwrap();
        assert!(matches!(e, SpecError::Build { .. }), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_duration("-1s"), None);
        assert_eq!(parse_duration("soon"), None);
        // Finite but too long for a Duration (found by fuzzing): refused, not a panic.
        assert_eq!(parse_duration("1e300"), None);
        assert_eq!(parse_duration("1e30m"), None);
        assert!(spec("alphabeta:time=1e300").limits().is_err());
    }

    #[test]
    fn builds_netless_players() {
        assert!(netless_player(&spec("random:seed=7"), 3).unwrap().name().starts_with("random:seed="));
        assert!(netless_player(&spec("alphabeta:depth=2"), 0).is_ok());
    }

    #[test]
    fn uci_specs_take_a_move_time_nodes_and_a_timeout() {
        assert_eq!(movetime(&spec("uci:movetime=250,cmd=e")), Ok(Some(Duration::from_millis(250))));
        assert_eq!(movetime(&spec("uci:movetime=1.5s,cmd=e")), Ok(Some(Duration::from_millis(1500))));
        assert_eq!(movetime(&spec("uci:cmd=e")), Ok(None));
        for bad in ["0", "0s", "soon", "3600001", "2h", "-5"] {
            let e = movetime(&spec(&format!("uci:movetime={bad},cmd=e"))).unwrap_err();
            assert!(e.to_string().contains(&format!("movetime={bad}")), "{e}");
        }
        let build = |s: &str| netless_player(&spec(s), 0).err().expect("an error");
        assert!(matches!(build("uci"), SpecError::Missing { .. }));
        assert!(matches!(build("uci:depth=3,cmd=e"), SpecError::UnknownKey { .. }));
        assert!(build(&format!("uci:nodes={},cmd=e", MAX_SEARCH_COUNT + 1)).to_string().contains("nodes="));
        assert!(build("uci:timeout=forever,cmd=e").to_string().contains("timeout=forever"));
        let e = build("uci:movetime=100,cmd=/nonexistent/engine --net x");
        assert!(matches!(&e, SpecError::Build { message, .. } if message.contains("/nonexistent/engine")), "{e}");
    }

    #[test]
    fn a_uci_spec_builds_an_engine_that_plays() {
        // A scripted engine (the `cmd` is split at spaces, so the script is a file).
        let dir = std::env::temp_dir().join(format!("tafl-spec-uci-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("engine.sh");
        let log = dir.join("log");
        let text = format!(
            "while read -r cmd rest; do echo \"$cmd $rest\" >> '{}'; case \"$cmd\" in uci) echo uciok;; isready) echo readyok;; go) echo 'bestmove d1d4';; quit) echo bye; exit 0;; esac; done\n",
            log.display()
        );
        std::fs::write(&script, text).unwrap();
        let s = spec(&format!("uci:movetime=50,nodes=7,timeout=5s,name=scripted,cmd=sh {}", script.display()));
        let mut p = netless_player(&s, 0).unwrap();
        assert_eq!(p.name(), "scripted");
        let game = tafl_rules::Game::new(tafl_rules::Variant::copenhagen());
        assert_eq!(p.choose(&game, &Limits::default()).unwrap().mv.to_string(), "d1-d4");
        drop(p);
        let sent = std::fs::read_to_string(&log).unwrap();
        assert!(sent.contains("go movetime 50 nodes 7"), "{sent}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
