//! What an engine says, as the client reads it: [`parse_reply`] turns each line into a
//! [`Reply`], an `info` line into an [`Info`] and its score into a value ([`Score`]). Apart from
//! the process and the conversation because it is pure text: no engine is needed to test it.

/// One line an engine writes, as the client reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `id KEY VALUE…` (`id name TaflZero`, `id author …`).
    Id {
        /// `name`, `author`, …
        key: String,
        /// The rest of the line.
        value: String,
    },
    /// `option name NAME type TYPE [default D] [min A] [max B] [var V]…`.
    Option(UciOption),
    /// `uciok`: the end of the engine's introduction.
    UciOk,
    /// `readyok`.
    ReadyOk,
    /// `info …`.
    Info(Info),
    /// `bestmove MOVE [ponder …]`: the move's text as written (`(none)` or `0000` for no move,
    /// empty when missing).
    BestMove(String),
    /// `bye`: the engine's answer to `quit`.
    Bye,
    /// Anything else (engines chat: TaflZero answers `position` with `position set to …`).
    Unknown,
}

/// An `option` line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UciOption {
    /// Its name (may hold spaces).
    pub name: String,
    /// Its type (`check`, `spin`, `combo`, `button`, `string`), if given.
    pub kind: Option<String>,
    /// Its default value, if given.
    pub default: Option<String>,
    /// The choices of a `combo`.
    pub vars: Vec<String>,
}

/// A search score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// `score cp V`.
    Cp(i64),
    /// `score mate N`: the side to move mates in N moves (N > 0) or is mated (N <= 0).
    Mate(i64),
}

/// Leela Chess Zero's (and TaflZero's) centipawn scale: `cp = CP_SCALE * tan(CP_STRETCH * q)`.
const CP_SCALE: f64 = 111.714_640_912;
const CP_STRETCH: f64 = 1.562_068_842_1;

impl Score {
    /// The score as a value in [-1, 1] from the side to move's view (the module docs say how).
    #[must_use]
    pub fn value(self) -> f32 {
        match self {
            Score::Mate(n) => {
                if n > 0 {
                    1.0
                } else {
                    -1.0
                }
            }
            Score::Cp(cp) => ((cp as f64 / CP_SCALE).atan() / CP_STRETCH).clamp(-1.0, 1.0) as f32,
        }
    }
}

/// What an `info` line says; fields it does not give are `None` (or empty), and so are those
/// whose value does not parse.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Info {
    /// `depth N`.
    pub depth: Option<u32>,
    /// `score cp V` or `score mate N`.
    pub score: Option<Score>,
    /// `winrate P%` (TaflZero): the side to move's win probability, in [0, 1].
    pub winrate: Option<f32>,
    /// `nodes N`.
    pub nodes: Option<u64>,
    /// `time MS`.
    pub time_ms: Option<u64>,
    /// `nps N`, or TaflZero's `speed N`.
    pub nps: Option<u64>,
    /// `multipv K`: the K-th best line.
    pub multipv: Option<u32>,
    /// `pv MOVE…`: the rest of the line, as written.
    pub pv: Vec<String>,
    /// `string TEXT`: the rest of the line.
    pub string: Option<String>,
}

impl Info {
    /// The value in [-1, 1] from the side to move's view: a mate score, else the win rate,
    /// else the centipawn score (the docs of [`crate::uci_client`] say how each is read).
    #[must_use]
    pub fn value(&self) -> Option<f32> {
        match (self.score, self.winrate) {
            (Some(s @ Score::Mate(_)), _) => Some(s.value()),
            (_, Some(w)) => Some((2.0 * w - 1.0).clamp(-1.0, 1.0)),
            (Some(s), None) => Some(s.value()),
            (None, None) => None,
        }
    }

    /// Takes in what a later line of the same search says, field by field: a line with only
    /// `nodes` and `time` keeps the last score and line.
    pub(super) fn update(&mut self, later: Info) {
        self.depth = later.depth.or(self.depth);
        self.score = later.score.or(self.score);
        self.winrate = later.winrate.or(self.winrate);
        self.nodes = later.nodes.or(self.nodes);
        self.time_ms = later.time_ms.or(self.time_ms);
        self.nps = later.nps.or(self.nps);
        if !later.pv.is_empty() {
            self.pv = later.pv;
        }
        self.string = later.string.or(self.string.take());
    }

    /// An `info string error…`: how our server (and others) refuse a command.
    pub(super) fn error(&self) -> Option<&str> {
        self.string.as_deref().filter(|s| s.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("error")))
    }
}

/// Reads one line from an engine. Never fails: what is not a known reply is
/// [`Reply::Unknown`], and a field that does not parse is left out.
#[must_use]
pub fn parse_reply(line: &str) -> Reply {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["uciok", ..] => Reply::UciOk,
        ["readyok", ..] => Reply::ReadyOk,
        ["bye", ..] => Reply::Bye,
        ["bestmove", rest @ ..] => Reply::BestMove(rest.first().map(|m| (*m).to_string()).unwrap_or_default()),
        ["id", key, value @ ..] => Reply::Id { key: (*key).to_string(), value: value.join(" ") },
        ["option", rest @ ..] => Reply::Option(parse_option(rest)),
        ["info", rest @ ..] => Reply::Info(parse_info(rest)),
        _ => Reply::Unknown,
    }
}

fn parse_option(words: &[&str]) -> UciOption {
    const KEYS: [&str; 6] = ["name", "type", "default", "min", "max", "var"];
    let mut option = UciOption::default();
    let mut i = 0;
    while i < words.len() {
        let key = words[i];
        let end = words[i + 1..].iter().position(|w| KEYS.contains(w)).map_or(words.len(), |n| i + 1 + n);
        let value = words[i + 1..end].join(" ");
        match key {
            "name" => option.name = value,
            "type" => option.kind = Some(value),
            "default" => option.default = Some(value),
            "var" => option.vars.push(value),
            // `min`, `max` and words before the first key are not needed.
            _ => {}
        }
        i = end;
    }
    option
}

fn parse_info(words: &[&str]) -> Info {
    let mut info = Info::default();
    let mut i = 0;
    while i < words.len() {
        let next = words.get(i + 1).copied().unwrap_or_default();
        let number = || next.parse::<u64>().ok();
        i += match words[i] {
            "depth" => {
                info.depth = next.parse().ok();
                2
            }
            "nodes" => {
                info.nodes = number();
                2
            }
            "time" => {
                info.time_ms = number();
                2
            }
            "nps" | "speed" => {
                info.nps = number();
                2
            }
            "multipv" => {
                info.multipv = next.parse().ok();
                2
            }
            "winrate" => {
                info.winrate = parse_percent(next);
                2
            }
            "score" => {
                let v = words.get(i + 2).and_then(|v| v.parse::<i64>().ok());
                info.score = match next {
                    "cp" => v.map(Score::Cp),
                    "mate" => v.map(Score::Mate),
                    _ => None,
                };
                3
            }
            "pv" => {
                info.pv = words[i + 1..].iter().map(|w| (*w).to_string()).collect();
                words.len()
            }
            "string" => {
                info.string = Some(words[i + 1..].join(" "));
                words.len()
            }
            // `seldepth`, `hashfull`, `currmove` and the like take one value; `lowerbound` after
            // a score none, and skipping one word then is harmless.
            _ => 1,
        };
    }
    info
}

/// `55.0%` (or `55.0`) as 0.55, when it is a percentage.
fn parse_percent(text: &str) -> Option<f32> {
    let p: f32 = text.strip_suffix('%').unwrap_or(text).parse().ok()?;
    (0.0..=100.0).contains(&p).then_some(p / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_handshake() {
        assert_eq!(parse_reply("id name TaflZero 0.3"), Reply::Id { key: "name".into(), value: "TaflZero 0.3".into() });
        assert_eq!(parse_reply("uciok"), Reply::UciOk);
        assert_eq!(parse_reply(" readyok \r"), Reply::ReadyOk);
        assert_eq!(parse_reply("bye"), Reply::Bye);
        let Reply::Option(o) = parse_reply("option name NNFile type string default ./default_nn.onnx") else {
            panic!()
        };
        assert_eq!(
            (o.name.as_str(), o.kind.as_deref(), o.default.as_deref()),
            ("NNFile", Some("string"), Some("./default_nn.onnx"))
        );
        let Reply::Option(o) =
            parse_reply("option name Variant type combo default copenhagen var copenhagen var brandubh")
        else {
            panic!()
        };
        assert_eq!(o.vars, ["copenhagen", "brandubh"]);
        let Reply::Option(o) = parse_reply("option name Move Time type spin default 0 min 0 max 9") else { panic!() };
        assert_eq!(o.name, "Move Time");
        assert_eq!(parse_reply("position set to startpos (3 moves)"), Reply::Unknown);
        assert_eq!(parse_reply(""), Reply::Unknown);
        assert_eq!(parse_reply("uciokay"), Reply::Unknown);
    }

    #[test]
    fn parses_info_lines() {
        let Reply::Info(i) = parse_reply("info depth 3 score cp -25 nodes 1200 time 15 speed 80000 pv a4a3 d5d2 x9")
        else {
            panic!()
        };
        assert_eq!(
            (i.depth, i.score, i.nodes, i.time_ms, i.nps),
            (Some(3), Some(Score::Cp(-25)), Some(1200), Some(15), Some(80000))
        );
        assert_eq!(i.pv, ["a4a3", "d5d2", "x9"]);
        // TaflZero's line: no depth, a win rate.
        let Reply::Info(i) = parse_reply("info score cp 12 winrate 55.0% nodes 400 time 1000 speed 400 pv f4f3") else {
            panic!()
        };
        assert_eq!(i.winrate, Some(0.55));
        assert!((i.value().unwrap() - 0.1).abs() < 1e-6);
        let Reply::Info(i) = parse_reply("info depth 9 seldepth 12 multipv 2 score mate -3 lowerbound nodes x pv")
        else {
            panic!()
        };
        assert_eq!((i.depth, i.multipv, i.score, i.nodes), (Some(9), Some(2), Some(Score::Mate(-3)), None));
        assert_eq!(i.value(), Some(-1.0));
        let Reply::Info(i) = parse_reply("info string error: bad fen `x`") else { panic!() };
        assert_eq!(i.error(), Some("error: bad fen `x`"));
        let Reply::Info(i) = parse_reply("info score cp") else { panic!() };
        assert_eq!(i.score, None);
        assert_eq!(parse_reply("bestmove a4a3 ponder d5d2"), Reply::BestMove("a4a3".into()));
        assert_eq!(parse_reply("bestmove"), Reply::BestMove(String::new()));
    }

    #[test]
    fn scores_become_values() {
        assert_eq!(Score::Cp(0).value(), 0.0);
        assert_eq!(Score::Mate(2).value(), 1.0);
        assert_eq!(Score::Mate(0).value(), -1.0);
        // TaflZero's cp = 111.71 tan(1.5621 q), inverted.
        for q in [-0.9f64, -0.5, 0.1, 0.7] {
            let cp = (CP_SCALE * (CP_STRETCH * q).tan()) as i64;
            assert!((f64::from(Score::Cp(cp).value()) - q).abs() < 0.01, "{q} {cp}");
        }
        assert_eq!(Score::Cp(i64::MAX).value(), 1.0);
        assert_eq!(Score::Cp(i64::MIN).value(), -1.0);
        assert_eq!(parse_percent("150%"), None);
        assert_eq!(parse_percent("NaN%"), None);
    }

    #[test]
    fn later_info_lines_keep_what_they_do_not_say() {
        let mut info = Info::default();
        let lines = ["info depth 2 score cp 30 nodes 10 pv a4a3", "info nodes 50 time 3", "info string thinking"];
        for line in lines {
            let Reply::Info(i) = parse_reply(line) else { panic!() };
            info.update(i);
        }
        assert_eq!((info.depth, info.score, info.nodes, info.pv.len()), (Some(2), Some(Score::Cp(30)), Some(50), 1));
        assert_eq!(info.string.as_deref(), Some("thinking"));
    }
}
