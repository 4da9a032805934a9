//! Player specs: `KIND:KEY=VALUE,KEY=VALUE…` strings such as `alphabeta:depth=3`,
//! `random:seed=7`, `mcts:model=PATH,visits=200`, `builtin:time=1s`, `DIR:visits=800` (a player
//! bundle), `htp:cmd=PROGRAM ARGS` or `uci:movetime=500,cmd=PROGRAM ARGS`, parsed once where the
//! text enters (the command line, a config, a tournament file) into a [`PlayerSpec`] whose
//! [`PlayerKind`] holds every setting typed and bounded; and the factory that turns a spec into a
//! fresh player for each game.
//!
//! The arena builds players through a [`PlayerFactory`], so a crate above the network
//! (`tafl-players`) can build the kinds with a net and fall back to [`netless_player`] for the
//! rest:
//!
//! ```
//! use tafl_arena::{PlayerKind, PlayerSpec, SpecError, netless_player};
//! use tafl_search::Player;
//! let factory = |spec: &PlayerSpec, game_seed: u64| -> Result<Box<dyn Player>, SpecError> {
//!     match spec.kind() {
//!         // PlayerKind::Mcts { .. } => build an MCTS player with a network here,
//!         _ => netless_player(spec, game_seed),
//!     }
//! };
//! let spec: PlayerSpec = "random:seed=7".parse().unwrap();
//! assert_eq!(spec.kind(), &PlayerKind::Random { seed: 7 });
//! assert_eq!(factory(&spec, 0).unwrap().name(), "random:seed=7");
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use tafl_protocol::htp::{HtpConfig, HtpPlayer};
use tafl_protocol::uci_client::{UciConfig, UciPlayer};
use tafl_search::{AlphaBeta, Limits, MAX_SEARCH_COUNT, Player, RandomPlayer};

/// The keys of an `alphabeta` spec, which become its search [`Limits`].
pub const LIMIT_KEYS: [&str; 4] = ["visits", "nodes", "depth", "time"];
/// The keys a spec of a player with a net takes (`builtin`, a bundle); `mcts` also takes `model`.
pub const NET_KEYS: [&str; 7] = ["visits", "batch", "gumbel", "cache", "seed", "time", "guard"];

/// The deepest `depth=` a spec may ask for (alpha-beta searches at most 32 plies anyway).
pub const MAX_SPEC_DEPTH: u64 = 64;
/// The longest `time=` or `timeout=` a spec may ask for per move.
pub const MAX_SPEC_TIME: Duration = Duration::from_secs(3600);
/// The deepest tactical check (`guard=`) a spec may ask for: each ply multiplies its cost by
/// the branching factor, and 8 plies already take minutes.
pub const MAX_GUARD_PLIES: u64 = 8;
/// The largest `batch=` (leaves per net call) a spec may ask for.
pub const MAX_BATCH: u64 = 1024;
/// The largest `cache=` (positions kept by the evaluator's cache) a spec may ask for: about
/// 2 GB of policies at the most.
pub const MAX_CACHE: u64 = 1 << 20;

/// The kind of the player that ships with tafl (`builtin:visits=800`).
pub const BUILTIN: &str = "builtin";
/// The kinds a spec may name.
pub const KINDS: &str = "builtin, mcts, random, alphabeta, htp, uci, or a player bundle's directory";
/// The kinds [`netless_player`] builds.
pub const NETLESS_KINDS: &str = "random, alphabeta, htp, uci";

/// A parsed player spec: what plays, with which settings, under which name.
///
/// Its [`Display`](fmt::Display) is spec text that parses back to the same spec: the text it
/// was read from, or for a spec built in code ([`PlayerSpec::new`], [`PlayerSpec::with_name`])
/// its settings in key order (exact to the millisecond; a name or path with a comma in it does
/// not read back).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerSpec {
    kind: PlayerKind,
    name: String,
    text: String,
}

/// What plays, with its settings: every key of the spec, checked and bounded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerKind {
    /// `random[:seed=N]`: uniformly random moves; the seed is mixed with each game's.
    Random {
        /// `seed=` (default 0).
        seed: u64,
    },
    /// `alphabeta[:depth=N][,time=DUR][,nodes=N]`: the alpha-beta baseline with these limits.
    AlphaBeta(Limits),
    /// `htp:[timeout=DUR,][tcp=true,]cmd=PROGRAM ARGS`: an external engine over HTP.
    Htp(HtpSpec),
    /// `uci:[timeout=DUR,][movetime=DUR|MS,][nodes=N,]cmd=PROGRAM ARGS`: an external engine over
    /// the UCI-style protocol (TaflZero's).
    Uci(UciSpec),
    /// `mcts:model=PATH[,…]`: an MCTS player guided by a checkpoint, a run's best model or a
    /// bundle's net.
    Mcts {
        /// `model=`: the net's path; `None` for `model=none`, a search with uniform priors.
        model: Option<PathBuf>,
        /// The other keys.
        search: NetSearch,
    },
    /// `builtin[:…]`: the player that ships with tafl, with overrides of its settings.
    Builtin(NetSearch),
    /// `DIR[:…]`: the player bundle (`tafl export`) in a directory, with overrides.
    Bundle {
        /// The bundle's directory.
        dir: PathBuf,
        /// The overrides.
        search: NetSearch,
    },
}

/// The settings of an `htp` spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtpSpec {
    /// `cmd=`: the program and its arguments, split at spaces (the last key: it runs to the
    /// spec's end).
    pub cmd: String,
    /// `timeout=`: the longest wait for a move (default 60 s).
    pub timeout: Option<Duration>,
    /// `tcp=true`: the engine connects to us (the reference engine's `--host` mode).
    pub tcp: bool,
}

/// The settings of a `uci` spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciSpec {
    /// `cmd=`: the program and its arguments (the last key).
    pub cmd: String,
    /// `timeout=`: the longest wait for a move (default the move time and 10 s, or 60 s for nodes).
    pub timeout: Option<Duration>,
    /// `movetime=`: asked as `go movetime` (a plain number is milliseconds, as in UCI).
    pub movetime: Option<Duration>,
    /// `nodes=`: asked as `go nodes`.
    pub nodes: Option<u64>,
}

/// The settings of a player guided by a net; `None` keeps the player's own (a bundle's
/// manifest, or the `mcts` defaults).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetSearch {
    /// `visits=`: simulations a move.
    pub visits: Option<u64>,
    /// `batch=`: leaves per net call.
    pub batch: Option<usize>,
    /// `gumbel=`: Gumbel root search (else PUCT).
    pub gumbel: Option<bool>,
    /// `cache=`: positions kept by the evaluator's cache.
    pub cache: Option<usize>,
    /// `seed=`: mixed with each game's.
    pub seed: Option<u64>,
    /// `time=`: the time a move.
    pub time: Option<Duration>,
    /// `guard=`: plies of the tactical check.
    pub guard: Option<u32>,
}

impl NetSearch {
    /// The limits the spec asks for itself (`visits`, `time`).
    #[must_use]
    pub fn limits(&self) -> Limits {
        Limits { visits: self.visits, time: self.time, ..Limits::default() }
    }

    fn read(p: &Params) -> Result<NetSearch, SpecError> {
        Ok(NetSearch {
            visits: p.bounded("visits", MAX_SEARCH_COUNT)?,
            batch: p.bounded("batch", MAX_BATCH)?.map(|b| b as usize),
            gumbel: p.flag("gumbel")?,
            cache: p.bounded("cache", MAX_CACHE)?.map(|c| c as usize),
            seed: p.u64("seed")?,
            time: p.duration("time")?,
            guard: p.bounded("guard", MAX_GUARD_PLIES)?.map(|g| g as u32),
        })
    }

    fn write(&self, out: &mut Vec<(&'static str, String)>) {
        let keys = [
            ("visits", self.visits.map(|v| v.to_string())),
            ("batch", self.batch.map(|b| b.to_string())),
            ("gumbel", self.gumbel.map(|g| g.to_string())),
            ("cache", self.cache.map(|c| c.to_string())),
            ("seed", self.seed.map(|s| s.to_string())),
            ("time", self.time.map(duration_text)),
            ("guard", self.guard.map(|g| g.to_string())),
        ];
        out.extend(keys.into_iter().filter_map(|(key, value)| Some((key, value?))));
    }
}

impl PlayerKind {
    /// The kind as a spec names it: `random`, `alphabeta`, …, or a bundle's directory.
    #[must_use]
    pub fn word(&self) -> String {
        match self {
            PlayerKind::Random { .. } => "random".into(),
            PlayerKind::AlphaBeta(_) => "alphabeta".into(),
            PlayerKind::Htp(_) => "htp".into(),
            PlayerKind::Uci(_) => "uci".into(),
            PlayerKind::Mcts { .. } => "mcts".into(),
            PlayerKind::Builtin(_) => BUILTIN.into(),
            PlayerKind::Bundle { dir, .. } => dir.display().to_string(),
        }
    }

    /// The settings of a player with a net (`mcts`, `builtin`, a bundle).
    #[must_use]
    pub fn net_search(&self) -> Option<&NetSearch> {
        match self {
            PlayerKind::Mcts { search, .. } | PlayerKind::Builtin(search) | PlayerKind::Bundle { search, .. } => {
                Some(search)
            }
            _ => None,
        }
    }

    /// Reads the keys of the kind `word` names.
    fn read(word: &str, p: &Params) -> Result<PlayerKind, SpecError> {
        match word {
            "random" => {
                p.check_keys(&["seed"])?;
                Ok(PlayerKind::Random { seed: p.u64("seed")?.unwrap_or(0) })
            }
            "alphabeta" => {
                p.check_keys(&LIMIT_KEYS)?;
                Ok(PlayerKind::AlphaBeta(p.limits()?))
            }
            "htp" => {
                p.check_keys(&["cmd", "timeout", "tcp"])?;
                let cmd = p.required("cmd")?;
                let tcp = match p.get("tcp") {
                    None | Some("false") => false,
                    Some("true") => true,
                    Some(v) => return Err(bad("tcp", v, "true or false")),
                };
                Ok(PlayerKind::Htp(HtpSpec { cmd, timeout: p.duration("timeout")?, tcp }))
            }
            "uci" => {
                p.check_keys(&["cmd", "timeout", "movetime", "nodes"])?;
                let cmd = p.required("cmd")?;
                Ok(PlayerKind::Uci(UciSpec {
                    cmd,
                    timeout: p.duration("timeout")?,
                    movetime: p.movetime()?,
                    nodes: p.bounded("nodes", MAX_SEARCH_COUNT)?,
                }))
            }
            "mcts" => {
                let mut keys = NET_KEYS.to_vec();
                keys.push("model");
                p.check_keys(&keys)?;
                let model = p.required("model")?;
                let model = (model != "none").then(|| PathBuf::from(model));
                Ok(PlayerKind::Mcts { model, search: NetSearch::read(p)? })
            }
            BUILTIN => {
                p.check_keys(&NET_KEYS)?;
                Ok(PlayerKind::Builtin(NetSearch::read(p)?))
            }
            dir if Path::new(dir).is_dir() => {
                p.check_keys(&NET_KEYS)?;
                Ok(PlayerKind::Bundle { dir: PathBuf::from(dir), search: NetSearch::read(p)? })
            }
            kind => Err(SpecError::UnknownKind { kind: kind.to_string(), known: KINDS.to_string() }),
        }
    }

    /// The keys of the kind, in the order a spec writes them (`cmd` last).
    fn write(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut some = |key, value: Option<String>| {
            if let Some(value) = value {
                out.push((key, value));
            }
        };
        match self {
            PlayerKind::Random { seed } => some("seed", (*seed != 0).then(|| seed.to_string())),
            PlayerKind::AlphaBeta(limits) => {
                some("depth", limits.depth.map(|d| d.to_string()));
                some("nodes", limits.nodes.map(|n| n.to_string()));
                some("time", limits.time.map(duration_text));
                some("visits", limits.visits.map(|v| v.to_string()));
            }
            PlayerKind::Htp(h) => {
                some("tcp", h.tcp.then(|| "true".to_string()));
                some("timeout", h.timeout.map(duration_text));
                some("cmd", Some(h.cmd.clone()));
            }
            PlayerKind::Uci(u) => {
                some("movetime", u.movetime.map(duration_text));
                some("nodes", u.nodes.map(|n| n.to_string()));
                some("timeout", u.timeout.map(duration_text));
                some("cmd", Some(u.cmd.clone()));
            }
            PlayerKind::Mcts { model, search } => {
                let model = model.as_ref().map_or_else(|| "none".to_string(), |m| m.display().to_string());
                some("model", Some(model));
                search.write(&mut out);
            }
            PlayerKind::Builtin(search) | PlayerKind::Bundle { search, .. } => search.write(&mut out),
        }
        out
    }
}

/// A duration as a spec writes it: milliseconds when whole, else seconds.
fn duration_text(d: Duration) -> String {
    if d.subsec_nanos().is_multiple_of(1_000_000) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs_f64())
    }
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
    /// No such kind, or one this factory does not build.
    #[error("unknown player kind `{kind}` (known: {known})")]
    UnknownKind {
        /// The kind.
        kind: String,
        /// The kinds known there.
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
        let (word, params) = Params::parse(text)?;
        let kind = PlayerKind::read(word, &params)?;
        let name = params.get("name").map_or_else(|| text.to_string(), str::to_string);
        Ok(PlayerSpec { kind, name, text: text.to_string() })
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl serde::Serialize for PlayerSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for PlayerSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(|e| serde::de::Error::custom(format!("`{text}`: {e}")))
    }
}

impl From<PlayerKind> for PlayerSpec {
    /// The spec of `kind`, named by its text.
    fn from(kind: PlayerKind) -> PlayerSpec {
        let text = write(&kind, None);
        PlayerSpec { kind, name: text.clone(), text }
    }
}

/// The text of a spec: the kind's keys in order, the name (if any) before `cmd`, which runs to
/// the end.
fn write(kind: &PlayerKind, name: Option<&str>) -> String {
    let mut params = kind.write();
    if let Some(name) = name {
        let at = params.iter().position(|(key, _)| *key == "cmd").unwrap_or(params.len());
        params.insert(at, ("name", name.to_string()));
    }
    let params: Vec<String> = params.iter().map(|(key, value)| format!("{key}={value}")).collect();
    if params.is_empty() { kind.word() } else { format!("{}:{}", kind.word(), params.join(",")) }
}

impl PlayerSpec {
    /// A spec built in code, named `name`: a value may hold any character (a model's path
    /// with a comma in it), though then its text does not read back.
    #[must_use]
    pub fn new(kind: PlayerKind, name: &str) -> PlayerSpec {
        PlayerSpec { text: write(&kind, Some(name)), kind, name: name.to_string() }
    }

    /// This spec under another name (its text says the name).
    #[must_use]
    pub fn with_name(self, name: &str) -> PlayerSpec {
        PlayerSpec::new(self.kind, name)
    }

    /// What plays, with its settings.
    #[must_use]
    pub fn kind(&self) -> &PlayerKind {
        &self.kind
    }

    /// The name in tables and records: the `name` key if given, else the spec's text.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The search limits the spec asks for itself: an alpha-beta's, or the `visits` and
    /// `time` of a player with a net; none for the others.
    #[must_use]
    pub fn limits(&self) -> Limits {
        match &self.kind {
            PlayerKind::AlphaBeta(limits) => limits.clone(),
            kind => kind.net_search().map(NetSearch::limits).unwrap_or_default(),
        }
    }
}

/// The `key=value` pairs of a spec's text, before its kind reads them.
struct Params {
    kind: String,
    map: BTreeMap<String, String>,
}

impl Params {
    /// Splits `KIND[:KEY=VALUE,…]` into the kind's word and its keys.
    fn parse(text: &str) -> Result<(&str, Params), SpecError> {
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = kind.trim();
        if kind.is_empty() {
            return Err(SpecError::Empty);
        }
        let mut map = BTreeMap::new();
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
            if map.insert(key.clone(), value.trim().to_string()).is_some() {
                return Err(SpecError::Duplicate { spec: text.to_string(), key });
            }
        }
        Ok((kind, Params { kind: kind.to_string(), map }))
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(String::as_str)
    }

    fn required(&self, key: &str) -> Result<String, SpecError> {
        let missing = || SpecError::Missing { kind: self.kind.clone(), key: key.to_string() };
        self.get(key).map(str::to_string).ok_or_else(missing)
    }

    /// Fails on the first key not in `allowed` (`name` is always allowed).
    fn check_keys(&self, allowed: &[&str]) -> Result<(), SpecError> {
        match self.map.keys().find(|key| *key != "name" && !allowed.contains(&key.as_str())) {
            Some(key) => {
                Err(SpecError::UnknownKey { kind: self.kind.clone(), key: key.clone(), allowed: allowed.join(", ") })
            }
            None => Ok(()),
        }
    }

    /// A whole-number parameter.
    fn u64(&self, key: &str) -> Result<Option<u64>, SpecError> {
        self.get(key).map(|v| v.parse().map_err(|_| bad(key, v, "a whole number"))).transpose()
    }

    /// A yes/no parameter: `true`, `yes`, `1` or `false`, `no`, `0`.
    fn flag(&self, key: &str) -> Result<Option<bool>, SpecError> {
        self.get(key)
            .map(|v| match v {
                "true" | "yes" | "1" => Ok(true),
                "false" | "no" | "0" => Ok(false),
                _ => Err(bad(key, v, "true or false")),
            })
            .transpose()
    }

    /// A whole-number parameter of at most `max`.
    fn bounded(&self, key: &str, max: u64) -> Result<Option<u64>, SpecError> {
        match self.u64(key)? {
            Some(n) if n > max => Err(bad(key, &n.to_string(), &format!("a whole number of at most {max}"))),
            n => Ok(n),
        }
    }

    /// A duration parameter: `1s`, `250ms`, `1.5s`, `2m`, or plain seconds; at most
    /// [`MAX_SPEC_TIME`].
    fn duration(&self, key: &str) -> Result<Option<Duration>, SpecError> {
        let expected = "a duration of at most an hour, such as 1s, 250ms or 2m";
        self.get(key)
            .map(|v| parse_duration(v).filter(|d| *d <= MAX_SPEC_TIME).ok_or_else(|| bad(key, v, expected)))
            .transpose()
    }

    /// The search limits (`visits`, `nodes`, `depth`, `time`), each bounded
    /// ([`MAX_SEARCH_COUNT`], [`MAX_SPEC_DEPTH`], [`MAX_SPEC_TIME`]).
    fn limits(&self) -> Result<Limits, SpecError> {
        let depth = self.bounded("depth", MAX_SPEC_DEPTH)?.map(|d| d as u32);
        let visits = self.bounded("visits", MAX_SEARCH_COUNT)?;
        let nodes = self.bounded("nodes", MAX_SEARCH_COUNT.saturating_mul(64))?;
        Ok(Limits { visits, nodes, depth, time: self.duration("time")?, ..Limits::default() })
    }

    /// `movetime=`: a duration, or a plain number of milliseconds as UCI's `go movetime`
    /// takes; more than nothing and at most [`MAX_SPEC_TIME`].
    fn movetime(&self) -> Result<Option<Duration>, SpecError> {
        let Some(text) = self.get("movetime") else { return Ok(None) };
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

/// Builds a player that needs no network (`random`, `alphabeta`, `htp`, `uci`; see
/// [`PlayerKind`]); the others are [`SpecError::UnknownKind`] here. An `htp` engine waits at
/// most 60 s a move unless `timeout` says otherwise; a `uci` engine is asked for its
/// `movetime` and/or `nodes` unless the caller's limits say otherwise (default a second a
/// move).
pub fn netless_player(spec: &PlayerSpec, game_seed: u64) -> Result<Box<dyn Player>, SpecError> {
    let build = |message: String| SpecError::Build { spec: spec.name.clone(), message };
    match &spec.kind {
        PlayerKind::Random { seed } => {
            Ok(Box::new(RandomPlayer::new(seed ^ game_seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))))
        }
        PlayerKind::AlphaBeta(limits) => Ok(Box::new(AlphaBeta::new(limits.clone()))),
        PlayerKind::Htp(htp) => {
            let mut config = HtpConfig::from_command_line(&htp.cmd).map_err(|e| build(e.to_string()))?;
            config.tcp = htp.tcp;
            if let Some(t) = htp.timeout {
                config.move_timeout = t;
            }
            config.name = Some(spec.name.clone());
            Ok(Box::new(HtpPlayer::spawn(config).map_err(|e| build(e.to_string()))?))
        }
        PlayerKind::Uci(uci) => {
            let mut config = UciConfig::from_command_line(&uci.cmd).map_err(|e| build(e.to_string()))?;
            config.move_timeout = uci.timeout;
            config.movetime = uci.movetime;
            config.nodes = uci.nodes;
            config.name = Some(spec.name.clone());
            Ok(Box::new(UciPlayer::spawn(config).map_err(|e| build(e.to_string()))?))
        }
        kind => Err(SpecError::UnknownKind { kind: kind.word(), known: NETLESS_KINDS.to_string() }),
    }
}

#[cfg(test)]
mod tests;
