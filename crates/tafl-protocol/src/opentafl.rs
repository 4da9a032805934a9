//! The OpenTafl engine protocol (OTEP), engine side, after `opentafl-engine-protocol.txt` and
//! `opentafl-notation-spec.txt` of the OpenTafl repository.
//!
//! OpenTafl starts the engine from an `.ini` file ([`engine_ini`]) and talks in unacknowledged
//! lines. The engine says `hello` when it starts; OpenTafl sends `rules <OTN rules>`, `side`,
//! `start`, then for each of our turns `opponent-move <moves> <position>` (except at the very
//! start), `play <side>` and `clock …`; we answer `move a4-a1`, and OpenTafl confirms with
//! `move <position>` or refuses with `error <code>` (then repeats `opponent-move` and `play`).
//! In analysis mode it sends `position <record>` and `analyze <n> <seconds>`, answered by
//! `analysis <n> <moves|separated|by|pipes> <evaluation> …`. `finish <code>` ends a game and
//! `goodbye` the engine.
//!
//! * Moves go out in simple notation (`a4-a1`); moves coming in may be simple or full OTN
//!   (`Ke5-e1-`, `e5-e8xe9`): a piece letter, captures and info symbols are ignored.
//! * Evaluations are the player's value from the side to move's view, times 1000, rounded.
//! * Every incoming position record is checked against our board; when they differ (a move we
//!   could not follow, a rule we judge otherwise) we take OpenTafl's board, which loses the
//!   game's history (repetitions) but keeps playing.
//! * A malformed or unknown line is answered `error 0 <why>` (a non-critical error, shown to
//!   the user) and the engine keeps running, and so is a line that is not UTF-8 or longer than
//!   [`MAX_LINE`], and an `opponent-move` on our turn (the game stays as it was); rules we
//!   cannot play are answered `error -1 <why>` (critical: OpenTafl ends the game).
//!
//! [`parse_rules`] turns an OTN rules string into a [`Variant`]; see it for what is supported.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::time::Duration;

use tafl_rules::{
    Escape, Game, KingCapture, Move, Piece, Position, Repetition, Rules, Setup, Side, Square, ThroneHostility, Variant,
    parse_square,
};
use tafl_search::Player;

use crate::engine::{EngineOptions, choose_checked, limits_with_time, send, time_for_move};
use crate::lines::{MAX_LINE, read_line};

/// Why a rules string cannot be played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RulesError(pub String);

fn unsupported(what: impl Into<String>) -> RulesError {
    RulesError(what.into())
}

/// An OTN rules string understood: the variant's name, start and rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtnRules {
    /// `name:` with underscores turned into spaces, or `OpenTafl` when absent.
    pub name: String,
    /// The start position (side to move from `atkf:`).
    pub start: Setup,
    /// Our rule options.
    pub rules: Rules,
}

impl OtnRules {
    /// A variant for these rules: a preset when they match one exactly, else a new variant
    /// (leaked: variants live for the whole program).
    pub fn variant(&self) -> Result<&'static Variant, RulesError> {
        for name in tafl_rules::PRESETS {
            if let Some(preset) = Variant::preset(name)
                && *preset.rules() == self.rules
                && *preset.start_setup() == self.start
            {
                return Ok(preset);
            }
        }
        Variant::from_setup(&self.name, self.start.clone(), self.rules)
            .map(Variant::leak)
            .map_err(|e| RulesError(e.to_string()))
    }
}

/// The piece types of a type list (`corh:tcnkTCNK`) we care about.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Types {
    attacker: bool,
    defender: bool,
    king: bool,
}

fn types(key: &str, value: &str) -> Result<Types, RulesError> {
    if let Some(c) = value.chars().find(|c| !"tcnkTCNK".contains(*c)) {
        return Err(unsupported(format!("`{key}:{value}`: `{c}` is not a piece type")));
    }
    Ok(Types { attacker: value.contains('t'), defender: value.contains('T'), king: value.contains('K') })
}

/// The OTN rules string of `variant`, which [`parse_rules`] reads back: OTN has no "defenders
/// lose on the third repetition", so Copenhagen repetition is written as `tfr:l` (the
/// repeating player loses), and the exit fort as `efe:y`; spaces in the name become `_`.
#[must_use]
pub fn write_rules(variant: &'static Variant) -> String {
    let rules = variant.rules();
    let yn = |b: bool| if b { 'y' } else { 'n' };
    let esc = match rules.escape {
        Escape::Corner => 'c',
        Escape::Edge => 'e',
    };
    let ks = yn(rules.king_capture != KingCapture::Custodial);
    let tfr = match rules.repetition {
        Repetition::DefendersLose => 'l',
        Repetition::Draw => 'd',
        Repetition::Off => 'i',
    };
    let sw = if rules.shieldwall { 's' } else { 'n' };
    let start = Position::start(variant);
    format!(
        "dim:{} name:{} esc:{esc} surf:{} atkf:{} tfr:{tfr} ka:{} ks:{ks} sw:{sw} efe:{} start:{}",
        variant.size(),
        variant.name().replace(' ', "_"),
        yn(rules.encirclement),
        yn(start.side_to_move() == Side::Attackers),
        yn(rules.king_armed),
        yn(rules.exit_fort),
        start.to_opentafl()
    )
}

/// Parses an OTN rules string such as
/// `dim:11 name:Copenhagen atkf:y tfr:w sw:s efe:y start:/3ttttt3/…/`.
///
/// Supported, mapped onto our [`Rules`]: `dim` (odd, 5 to 15), `name`, `esc` (corner or edge
/// escape), `surf` (encirclement), `atkf`, `tfr` (`d` draw, `i` ignored; `w` and `l` both become
/// "the defenders lose on the third repetition": OTN blames a side by who repeats, we by role,
/// and under Copenhagen rules it is the defenders who must avoid repeating), `ka` (`y`/`n`), `ks`
/// (`s`/`y` strong: four sides, or three and the throne; `w`/`n` weak: custodial), `sw` (`n`, or
/// `s`: corners may close a shieldwall), `swf:y`, `efe`, `cenh`/`cenhe`/`cenp` (throne
/// hostility and passing, as far as our options express them), and the defaults of every other
/// key. Refused: berserk pieces and moves, jumps, speed limits, fortresses, moved or extra
/// corners and thrones, weak shieldwalls, shieldwalls without flanking, middleweight kings,
/// half-armed kings, and keys we do not know.
pub fn parse_rules(text: &str) -> Result<OtnRules, RulesError> {
    let mut map: HashMap<&str, &str> = HashMap::new();
    for component in text.split_whitespace() {
        let (key, value) = component.split_once(':').unwrap_or((component, ""));
        map.insert(key, value);
    }
    let dim: u8 = map
        .get("dim")
        .ok_or_else(|| unsupported("the rules have no `dim:`"))?
        .parse()
        .map_err(|_| unsupported("`dim:` is not a number"))?;
    if !(5..=15).contains(&dim) || dim.is_multiple_of(2) {
        return Err(unsupported(format!("board size {dim} is not supported (odd sizes 5 to 15)")));
    }
    let start = map.get("start").ok_or_else(|| unsupported("the rules have no `start:`"))?;
    let get = |key: &str, default: &'static str| -> &str { map.get(key).copied().unwrap_or(default) };
    let yes_no = |key: &str, default: &'static str| -> Result<bool, RulesError> {
        match get(key, default) {
            "y" => Ok(true),
            "n" => Ok(false),
            v => Err(unsupported(format!("`{key}:{v}` is not y or n"))),
        }
    };

    const KNOWN: [&str; 31] = [
        "dim", "name", "esc", "surf", "atkf", "tfr", "ka", "ks", "kj", "nj", "cj", "cor", "cen", "afor", "dfor", "spd",
        "corh", "cenh", "cenhe", "aforh", "dforh", "corp", "cenp", "aforp", "dforp", "cors", "cens", "afors", "dfors",
        "sw", "swf",
    ];
    const KNOWN_MORE: [&str; 7] = ["efe", "ber", "start", "corre", "cenre", "aforre", "dforre"];
    if let Some(key) = map.keys().find(|k| !KNOWN.contains(k) && !KNOWN_MORE.contains(k)) {
        return Err(unsupported(format!("unknown rule `{key}`")));
    }

    let mut rules = Rules::COPENHAGEN;
    rules.escape = match get("esc", "c") {
        "c" => Escape::Corner,
        "e" => Escape::Edge,
        v => return Err(unsupported(format!("`esc:{v}`"))),
    };
    rules.encirclement = yes_no("surf", "y")?;
    let attackers_first = yes_no("atkf", "y")?;
    rules.repetition = match get("tfr", "d") {
        "d" => Repetition::Draw,
        "i" => Repetition::Off,
        "w" | "l" => Repetition::DefendersLose,
        v => return Err(unsupported(format!("`tfr:{v}`"))),
    };
    rules.king_armed = match get("ka", "y") {
        "y" => true,
        "n" => false,
        v => return Err(unsupported(format!("`ka:{v}`: a king armed only as hammer or anvil"))),
    };
    rules.king_capture = match get("ks", "s") {
        "s" | "y" => KingCapture::FourSides,
        "w" | "n" => KingCapture::Custodial,
        v => return Err(unsupported(format!("`ks:{v}`: only strong and weak kings"))),
    };
    if get("kj", "n") != "n" {
        return Err(unsupported("a jumping king (`kj`)"));
    }
    if !matches!(get("ber", "n"), "n" | "") {
        return Err(unsupported("berserk moves (`ber`)"));
    }
    if !matches!(get("spd", "-1"), "-1" | "") {
        return Err(unsupported("speed limits (`spd`)"));
    }
    for key in ["afor", "dfor"] {
        if !get(key, "").is_empty() {
            return Err(unsupported(format!("fortresses (`{key}`)")));
        }
    }
    let centre = Square::new(dim / 2, dim / 2);
    let last = dim - 1;
    let corners = [Square::new(0, 0), Square::new(last, 0), Square::new(0, last), Square::new(last, last)];
    let squares = |key: &str| -> Result<Option<Vec<Square>>, RulesError> {
        match map.get(key) {
            None | Some(&"default") => Ok(None),
            Some(list) => list
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| parse_square(s, dim).map_err(|e| unsupported(format!("`{key}:{list}`: {e}"))))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    };
    match squares("cen")? {
        None => {}
        Some(list) if list == [centre] => {}
        Some(_) => return Err(unsupported("a throne other than the centre (`cen`)")),
    }
    match squares("cor")? {
        None => {}
        Some(mut list) => {
            list.sort();
            let mut expected = corners.to_vec();
            expected.sort();
            let plain_edge_escape = list.is_empty() && rules.escape == Escape::Edge;
            if list != expected && !plain_edge_escape {
                return Err(unsupported("corners other than the four corner squares (`cor`)"));
            }
        }
    }
    match get("sw", "n") {
        "n" => rules.shieldwall = false,
        "s" => rules.shieldwall = true,
        v => return Err(unsupported(format!("`sw:{v}`: only strong shieldwalls (corners may close them)"))),
    }
    if rules.shieldwall && !yes_no("swf", "y")? {
        return Err(unsupported("shieldwalls without flanking (`swf:n`)"));
    }
    rules.exit_fort = yes_no("efe", "n")?;

    // The throne: who may pass, who may stop, to whom it is hostile when occupied or empty.
    let cenp = types("cenp", get("cenp", "tcnkTCNK"))?;
    rules.throne_passable = match (cenp.attacker, cenp.defender) {
        (true, true) => true,
        (false, false) => false,
        _ => return Err(unsupported("a throne passable by one side only (`cenp`)")),
    };
    let cens = types("cens", get("cens", "K"))?;
    if cens.attacker || cens.defender || !cens.king {
        return Err(unsupported("a throne others than the king may stop on (`cens`)"));
    }
    let cenh = types("cenh", get("cenh", "tcnk"))?;
    let cenhe = types("cenhe", get("cenhe", "tcnkTCNK"))?;
    if cenh.attacker != cenhe.attacker {
        return Err(unsupported(
            "a throne hostile to attackers only when empty, or only when occupied (`cenh`, `cenhe`)",
        ));
    }
    rules.throne_hostile_to_attackers = cenhe.attacker;
    rules.throne_hostile_to_defenders = match (cenh.defender, cenhe.defender) {
        (true, true) => ThroneHostility::Always,
        (false, true) => ThroneHostility::WhenEmpty,
        (false, false) => ThroneHostility::Never,
        (true, false) => return Err(unsupported("a throne hostile to defenders only while occupied (`cenh`)")),
    };
    if let Some(re) = map.get("cenre")
        && !types("cenre", re)?.king
    {
        return Err(unsupported("a king who may not return to the throne (`cenre`)"));
    }
    if rules.escape == Escape::Corner {
        let corh = types("corh", get("corh", "tcnkTCNK"))?;
        if !(corh.attacker && corh.defender) {
            return Err(unsupported("corners hostile to one side only (`corh`)"));
        }
        for key in ["corp", "cors"] {
            let t = types(key, get(key, "K"))?;
            if t.attacker || t.defender || !t.king {
                return Err(unsupported(format!("corners others than the king may use (`{key}`)")));
            }
        }
    }

    let side = if attackers_first { Side::Attackers } else { Side::Defenders };
    let setup = Setup::from_opentafl(start, side).map_err(|e| unsupported(format!("`start:`: {e}")))?;
    if setup.size != dim {
        return Err(unsupported(format!("`start:` is {}x{} but `dim:` is {dim}", setup.size, setup.size)));
    }
    if start.chars().any(|c| "nNcC".contains(c)) {
        return Err(unsupported("knights and commanders"));
    }
    let name = map.get("name").map_or_else(|| "OpenTafl".to_string(), |n| n.replace('_', " "));
    Ok(OtnRules { name, start: setup, rules })
}

/// The OTN rules string of a variant, as far as OTN can say it (the inverse of
/// [`parse_rules`] for the rules it supports).
#[must_use]
pub fn rules_string(variant: &Variant) -> String {
    let r = variant.rules();
    let yn = |b: bool| if b { "y" } else { "n" };
    let mut parts = vec![format!("dim:{}", variant.size()), format!("name:{}", variant.name().replace(' ', "_"))];
    if r.escape == Escape::Edge {
        parts.push("esc:e".into());
    }
    parts.push(format!("surf:{}", yn(r.encirclement)));
    parts.push(format!("atkf:{}", yn(variant.start_setup().side_to_move == Side::Attackers)));
    parts.push(
        match r.repetition {
            Repetition::DefendersLose => "tfr:w",
            Repetition::Draw => "tfr:d",
            Repetition::Off => "tfr:i",
        }
        .into(),
    );
    parts.push(format!("ka:{}", yn(r.king_armed)));
    parts.push(format!("ks:{}", if r.king_capture == KingCapture::Custodial { "w" } else { "s" }));
    if !r.throne_passable {
        parts.push("cenp:K".into());
    }
    let attackers = if r.throne_hostile_to_attackers { "tcnk" } else { "" };
    let (occupied, empty) = match r.throne_hostile_to_defenders {
        ThroneHostility::Always => ("TCN", "TCNK"),
        ThroneHostility::WhenEmpty => ("", "TCNK"),
        ThroneHostility::Never => ("", ""),
    };
    parts.push(format!("cenh:{attackers}{occupied}"));
    parts.push(format!("cenhe:{attackers}{empty}"));
    parts.push(format!("sw:{}", if r.shieldwall { "s" } else { "n" }));
    parts.push(format!("efe:{}", yn(r.exit_fort)));
    parts.push(format!("start:{}", variant.start_setup().to_opentafl()));
    parts.join(" ")
}

/// Parses a move record, simple (`a4-a1`) or full OTN (`Ke5-e1-`, `e5-e8xe9/f8`): an optional
/// piece letter, a square, `-`, a square; captures and info symbols after it are ignored.
pub fn parse_otn_move(text: &str, size: u8) -> Result<Move, String> {
    let mut s = text.trim();
    let mut chars = s.chars();
    if let (Some(a), Some(b)) = (chars.next(), chars.next())
        && a.is_ascii_alphabetic()
        && b.is_ascii_alphabetic()
    {
        s = &s[1..];
    }
    let split = |s: &str| -> Option<(usize, usize)> {
        let letter = s.chars().next().filter(char::is_ascii_alphabetic)?;
        let digits = s[letter.len_utf8()..].chars().take_while(char::is_ascii_digit).count();
        (digits > 0).then_some((0, 1 + digits))
    };
    let bad = || format!("`{text}` is not a move record");
    let (_, end) = split(s).ok_or_else(bad)?;
    let from = parse_square(&s[..end], size).map_err(|e| format!("`{text}`: {e}"))?;
    let rest = &s[end..];
    let rest = match rest.strip_prefix('-') {
        Some(r) => r,
        None if rest.starts_with(['^', '=']) => {
            return Err(format!("`{text}`: berserk moves and jumps are not supported"));
        }
        None => return Err(bad()),
    };
    let (_, end) = split(rest).ok_or_else(bad)?;
    let to = parse_square(&rest[..end], size).map_err(|e| format!("`{text}`: {e}"))?;
    Ok(Move::new(from, to))
}

/// The `.ini` file OpenTafl reads to start an external engine. OpenTafl resolves `directory`
/// against its own `engines/` folder and runs `command arguments` in it, so the file assumes
/// the `tafl` binary sits (or is linked) at `<opentafl>/engines/tafl/tafl`.
#[must_use]
pub fn engine_ini(player_spec: &str, variant: &str) -> String {
    format!(
        "[engine]\ndirectory=tafl\nfilename=tafl\ncommand=./tafl\narguments=engine --protocol opentafl --variant {variant} --player {player_spec}\n"
    )
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Clock {
    attackers: Option<Duration>,
    defenders: Option<Duration>,
}

/// An OpenTafl engine session.
pub struct OpenTaflServer {
    player: Box<dyn Player>,
    options: EngineOptions,
    game: Game,
    /// The side OpenTafl says we play.
    side: Option<Side>,
    clock: Clock,
    /// Our last move, until OpenTafl confirms or refuses it.
    pending: Option<Move>,
    /// Variants built from rules strings, so that repeated `rules` do not leak new ones.
    variants: HashMap<String, &'static Variant>,
}

impl OpenTaflServer {
    /// A session that starts with `variant` until OpenTafl sends its rules.
    #[must_use]
    pub fn new(player: Box<dyn Player>, variant: &'static Variant, options: EngineOptions) -> OpenTaflServer {
        OpenTaflServer {
            player,
            options,
            game: Game::new(variant),
            side: None,
            clock: Clock::default(),
            pending: None,
            variants: HashMap::new(),
        }
    }

    /// The game as the engine sees it.
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Says `hello`, then serves until `goodbye` or the end of the input.
    pub fn run(&mut self, input: &mut dyn BufRead, output: &mut dyn Write) -> io::Result<()> {
        send(output, "hello")?;
        while let Some(line) = read_line(input, MAX_LINE)? {
            match line {
                Ok(line) => {
                    if !self.handle(line.trim(), output)? {
                        return Ok(());
                    }
                }
                Err(e) => send(output, &format!("error 0 {e}"))?,
            }
        }
        Ok(())
    }

    /// Handles one message; returns false on `goodbye`.
    pub fn handle(&mut self, line: &str, out: &mut dyn Write) -> io::Result<bool> {
        let (command, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match command {
            "" | "hello" | "start" | "simple-moves" | "status" => {}
            "goodbye" => return Ok(false),
            "rules" => self.rules(rest, out)?,
            "side" => match side_word(rest) {
                Some(side) => self.side = Some(side),
                None => send(out, &format!("error 0 side: expected attackers or defenders, found `{rest}`"))?,
            },
            "position" => self.position(rest, out)?,
            "clock" => self.clock(rest, out)?,
            "play" => self.play(rest, out)?,
            "move" => self.confirmed(rest),
            "error" => {
                // OpenTafl refused our move: take it back; it resends the position and `play`.
                if let Some(m) = self.pending.take()
                    && self.game.moves().last() == Some(&m)
                {
                    self.game.undo();
                }
            }
            "opponent-move" => self.opponent_move(rest, out)?,
            "analyze" => self.analyze(rest, out)?,
            "finish" => {
                self.pending = None;
                self.player.new_game();
            }
            other => send(out, &format!("error 0 unknown command `{other}`"))?,
        }
        Ok(true)
    }

    fn rules(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let variant = match self.variants.get(text) {
            Some(v) => Ok(*v),
            None => parse_rules(text).and_then(|r| r.variant()),
        };
        match variant {
            Ok(v) => {
                self.variants.insert(text.to_string(), v);
                self.game = Game::new(v);
                self.pending = None;
                self.player.new_game();
                Ok(())
            }
            Err(e) => send(out, &format!("error -1 rules not supported: {e}")),
        }
    }

    /// Replaces our board by a position record, keeping the side to move.
    fn set_board(&mut self, record: &str, side_to_move: Side) -> Result<(), String> {
        let variant = self.game.variant();
        let position =
            Position::from_opentafl(variant, record, side_to_move).map_err(|e| format!("position `{record}`: {e}"))?;
        self.game = Game::from_position(position);
        Ok(())
    }

    fn position(&mut self, record: &str, out: &mut dyn Write) -> io::Result<()> {
        let side = self.game.position().side_to_move();
        match self.set_board(record, side) {
            Ok(()) => Ok(()),
            Err(e) => send(out, &format!("error 0 {e}")),
        }
    }

    fn clock(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let millis = |w: Option<&&str>| -> Option<Option<Duration>> {
            let w = w?.trim_end_matches('*');
            let ms: i64 = w.parse().ok()?;
            Some((ms >= 0).then(|| Duration::from_millis(ms.unsigned_abs())))
        };
        match (millis(words.first()), millis(words.get(1))) {
            (Some(attackers), Some(defenders)) => {
                // In overtime the clock shows the period left; the main-time rule fits it too.
                self.clock = Clock { attackers, defenders };
                Ok(())
            }
            _ => send(out, &format!("error 0 clock: expected two times in milliseconds, found `{text}`")),
        }
    }

    fn time_for(&self, side: Side) -> Option<Duration> {
        let left = if side == Side::Attackers { self.clock.attackers } else { self.clock.defenders };
        left.map(|l| time_for_move(l, Duration::ZERO))
    }

    fn play(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let Some(side) = side_word(text) else {
            return send(out, &format!("error 0 play: expected attackers or defenders, found `{text}`"));
        };
        self.side = Some(side);
        if self.game.position().side_to_move() != side {
            // After `position`, the record does not say who moves: `play` does.
            let mut setup = self.game.position().to_setup();
            setup.side_to_move = side;
            match Position::from_setup(self.game.variant(), &setup) {
                Ok(p) => self.game = Game::from_position(p),
                Err(e) => return send(out, &format!("error 0 play: {e}")),
            }
        }
        // OpenTafl sends this turn's `clock` right after `play`: we go by the last one, less
        // the time we have used since (our clock only runs on our turns).
        let limits = limits_with_time(self.time_for(side), &self.options);
        let started = std::time::Instant::now();
        let choice = choose_checked(self.player.as_mut(), &self.game, &limits);
        let used = started.elapsed();
        let left = if side == Side::Attackers { &mut self.clock.attackers } else { &mut self.clock.defenders };
        if let Some(left) = left {
            *left = left.saturating_sub(used);
        }
        match choice {
            Ok(choice) => {
                self.game.play_unchecked(choice.mv);
                self.pending = Some(choice.mv);
                send(out, &format!("move {}", choice.mv))?;
                let value =
                    choice.value.map_or_else(|| "?".to_string(), |v| format!("{}", (v * 1000.0).round() as i32));
                send(out, &format!("status depth {} nodes {} eval {value}", choice.depth, choice.nodes))
            }
            Err(e) => send(out, &format!("error 0 no move: {e}")),
        }
    }

    /// OpenTafl confirms our move with the board after it.
    fn confirmed(&mut self, record: &str) {
        self.pending = None;
        if !record.is_empty() && self.game.position().to_opentafl() != record {
            let side = self.game.position().side_to_move();
            let _ = self.set_board(record, side);
        }
    }

    fn opponent_move(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let (moves, record) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let record = record.trim();
        let to_move = self.game.position().side_to_move();
        if self.side == Some(to_move) {
            // Our turn: OpenTafl repeats the opponent's move after refusing ours (we took ours
            // back, so the board is the one it sends); anything else is not a move it can mean.
            if record.is_empty() || record != self.game.position().to_opentafl() {
                send(
                    out,
                    &format!(
                        "error 0 opponent-move: it is our turn (we play the {}); the move is not played",
                        to_move.name()
                    ),
                )?;
            }
            return Ok(());
        }
        self.pending = None;
        let size = self.game.variant().size();
        let mut mover = self.game.position().side_to_move();
        let mut followed = true;
        for token in moves.split('|').filter(|t| !t.is_empty()) {
            match parse_otn_move(token, size) {
                Ok(m) => {
                    mover = self.game.position().piece_at(m.from).map_or(mover, Piece::side);
                    if self.game.play(m).is_err() {
                        followed = false;
                        break;
                    }
                }
                Err(e) => {
                    send(out, &format!("error 0 opponent-move: {e}"))?;
                    followed = false;
                    break;
                }
            }
        }
        if record.is_empty() {
            return Ok(());
        }
        if (!followed || self.game.position().to_opentafl() != record)
            && let Err(e) = self.set_board(record, mover.opponent())
        {
            send(out, &format!("error 0 opponent-move: {e}"))?;
        }
        Ok(())
    }

    fn analyze(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        let words: Vec<&str> = text.split_whitespace().collect();
        // `try_`: a finite but huge number of seconds does not fit a Duration.
        let time = words
            .get(1)
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok());
        let (Some(_count), Some(time)) = (words.first().and_then(|n| n.parse::<u32>().ok()), time) else {
            return send(out, &format!("error 0 analyze: expected a count and seconds, found `{text}`"));
        };
        let limits = limits_with_time(Some(time), &self.options);
        match choose_checked(self.player.as_mut(), &self.game, &limits) {
            Ok(choice) => {
                let pv: Vec<String> = choice.pv.iter().map(ToString::to_string).collect();
                let pv = if pv.is_empty() { choice.mv.to_string() } else { pv.join("|") };
                let eval = choice.value.map_or(0, |v| (v * 1000.0).round() as i32);
                send(out, &format!("analysis 1 {pv} {eval}"))
            }
            Err(e) => send(out, &format!("error 0 analyze: {e}")),
        }
    }

    /// The side OpenTafl last said we play.
    #[must_use]
    pub fn side(&self) -> Option<Side> {
        self.side
    }
}

fn side_word(text: &str) -> Option<Side> {
    match text.trim() {
        "attackers" => Some(Side::Attackers),
        "defenders" => Some(Side::Defenders),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::LimitsRecorder;
    use tafl_search::{AlphaBeta, Limits, RandomPlayer};

    #[test]
    fn written_rules_read_back_as_the_same_variant() {
        // Not tablut: its passable-only-by-the-king throne, its king captured against the edge
        // and its draw when a side cannot move have no key in what is written.
        for name in ["copenhagen", "copenhagen-13", "brandubh"] {
            let variant = Variant::preset(name).expect("a preset");
            let text = write_rules(variant);
            let read = parse_rules(&text).unwrap_or_else(|e| panic!("{name}: {text}: {e}"));
            assert_eq!(read.rules, *variant.rules(), "{name}: {text}");
            assert_eq!(read.start, *variant.start_setup(), "{name}: {text}");
        }
    }

    const COPENHAGEN: &str = "dim:11 name:Copenhagen atkf:y tfr:w sw:s efe:y start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";

    #[test]
    fn copenhagen_rules_are_the_copenhagen_preset() {
        let rules = parse_rules(COPENHAGEN).unwrap();
        assert_eq!(rules.name, "Copenhagen");
        assert_eq!(rules.rules, Rules::COPENHAGEN);
        assert!(std::ptr::eq(rules.variant().unwrap(), Variant::copenhagen()));
        // Our own rules string reads back as the same variant.
        let back = parse_rules(&rules_string(Variant::copenhagen())).unwrap();
        assert_eq!(back.rules, Rules::COPENHAGEN);
        assert_eq!(back.start, *Variant::copenhagen().start_setup());
    }

    #[test]
    fn brandubh_and_fetlar_rules_parse() {
        let brandub = parse_rules("dim:7 ks:n cenhe: cenh: start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/").unwrap();
        assert_eq!(brandub.rules.king_capture, KingCapture::Custodial);
        assert_eq!(brandub.rules.throne_hostile_to_defenders, ThroneHostility::Never);
        assert!(!brandub.rules.throne_hostile_to_attackers);
        assert!(brandub.variant().is_ok());
        let fetlar =
            parse_rules("dim:11 atkf:n start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/")
                .unwrap();
        assert_eq!(fetlar.start.side_to_move, Side::Defenders);
        assert_eq!(fetlar.rules.repetition, Repetition::Draw);
        assert!(!fetlar.rules.shieldwall);
    }

    #[test]
    fn unsupported_rules_are_refused_with_a_reason() {
        let berserk = "dim:11 surf:n atkf:n kj:r ber:c start:/3ttttt3/5c5/11/t4T4t/t3NTT3t/tc1TTKTT1ct/t3TTT3t/t4T4t/11/5c5/3ttttt3/";
        assert!(parse_rules(berserk).unwrap_err().0.contains("jumping king"));
        let sea_battle = "dim:9 esc:e ka:n cen: cenhe: cor: start:/3ttt3/4t4/4T4/t3T3t/ttTTKTTtt/t3T3t/4T4/4t4/3ttt3/";
        assert!(parse_rules(sea_battle).unwrap_err().0.contains("throne"));
        assert!(
            parse_rules("dim:11 sw:w start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/")
                .is_err()
        );
        assert!(parse_rules("dim:11 foo:y start:/11/11/11/11/11/5K5/11/11/11/11/11/").unwrap_err().0.contains("foo"));
        assert!(parse_rules("dim:12 start:/").is_err());
        assert!(parse_rules("start:/3t3/").is_err());
    }

    #[test]
    fn parses_move_records() {
        assert_eq!(parse_otn_move("a4-a1", 11).unwrap().to_string(), "a4-a1");
        assert_eq!(parse_otn_move("Ke5-e1-", 11).unwrap().to_string(), "e5-e1");
        assert_eq!(parse_otn_move("e5-e8xe9/f8", 11).unwrap().to_string(), "e5-e8");
        assert_eq!(parse_otn_move("k10-k11++", 11).unwrap().to_string(), "k10-k11");
        assert!(parse_otn_move("Ne6^=e8", 11).is_err());
        assert!(parse_otn_move("hello", 11).is_err());
        assert!(parse_otn_move("z1-a1", 11).is_err());
    }

    fn run(server: &mut OpenTaflServer, script: &str) -> Vec<String> {
        let mut out = Vec::new();
        server.run(&mut script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().map(str::to_string).collect()
    }

    #[test]
    fn plays_a_game_as_opentafl_drives_it() {
        let mut s =
            OpenTaflServer::new(Box::new(AlphaBeta::with_depth(1)), Variant::copenhagen(), EngineOptions::default());
        // We play the defenders: OpenTafl sends the attackers' first move, then `play`.
        let after_d1_d4 = "/4tttt3/5t5/11/t2t1T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
        let script = format!(
            "hello\nrules {COPENHAGEN}\nside defenders\nstart\nopponent-move d1-d4 {after_d1_d4}\nplay defenders\nclock 300000 300000 0 0 0\nfrobnicate\ngoodbye\nplay attackers\n"
        );
        let out = run(&mut s, &script);
        assert_eq!(out[0], "hello");
        assert!(out[1].starts_with("move "), "{out:?}");
        assert!(out[2].starts_with("status "), "{out:?}");
        assert_eq!(out[3], "error 0 unknown command `frobnicate`");
        assert_eq!(out.len(), 4, "stops at goodbye: {out:?}");
        assert_eq!(s.game().ply(), 2);
        assert_eq!(s.game().position().side_to_move(), Side::Attackers);
    }

    #[test]
    fn a_line_that_is_not_utf8_or_too_long_is_refused_and_the_engine_goes_on() {
        let mut script = b"hello\n\xff\n".to_vec();
        script.extend(std::iter::repeat_n(b's', 10 << 20));
        script.extend_from_slice(b"\nfrobnicate\n");
        let mut s =
            OpenTaflServer::new(Box::new(RandomPlayer::new(1)), Variant::copenhagen(), EngineOptions::default());
        let mut out = Vec::new();
        s.run(&mut script.as_slice(), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let long = format!("error 0 the line is {} bytes long, more than {MAX_LINE}", 10 << 20);
        assert_eq!(
            out,
            format!("hello\nerror 0 the line is not valid UTF-8\n{long}\nerror 0 unknown command `frobnicate`\n")
        );
    }

    #[test]
    fn an_opponent_move_on_our_turn_is_refused_and_changes_nothing() {
        let after_d1_d4 = "/4tttt3/5t5/11/t2t1T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
        let mut s =
            OpenTaflServer::new(Box::new(RandomPlayer::new(3)), Variant::copenhagen(), EngineOptions::default());
        let mut out = Vec::new();
        s.handle(&format!("rules {COPENHAGEN}"), &mut out).unwrap();
        s.handle("side attackers", &mut out).unwrap();
        let start = s.game().position().to_opentafl();
        // Our own piece, a defender's, with and without the board after it.
        for line in
            [format!("opponent-move d1-d4 {after_d1_d4}"), "opponent-move d1-d4".into(), "opponent-move f4-f3".into()]
        {
            s.handle(&line, &mut out).unwrap();
            assert_eq!((s.game().ply(), s.game().position().to_opentafl()), (0, start.clone()), "{line}");
        }
        let text = String::from_utf8(std::mem::take(&mut out)).unwrap();
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("error 0 opponent-move: it is our turn (we play the attackers)"))
                .count(),
            3,
            "{text}"
        );
        // As defenders: OpenTafl refuses our move and says the opponent's again, with the board
        // we are back at: nothing to answer.
        let mut s =
            OpenTaflServer::new(Box::new(RandomPlayer::new(3)), Variant::copenhagen(), EngineOptions::default());
        for line in [
            "side defenders".to_string(),
            format!("opponent-move d1-d4 {after_d1_d4}"),
            "play defenders".into(),
            "error 3".into(),
        ] {
            s.handle(&line, &mut out).unwrap();
        }
        assert_eq!(s.game().ply(), 1);
        out.clear();
        s.handle(&format!("opponent-move d1-d4 {after_d1_d4}"), &mut out).unwrap();
        assert_eq!((s.game().ply(), s.game().position().to_opentafl()), (1, after_d1_d4.to_string()));
        assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    }

    #[test]
    fn a_refused_move_is_taken_back_and_a_wrong_board_resynced() {
        let mut s =
            OpenTaflServer::new(Box::new(RandomPlayer::new(3)), Variant::copenhagen(), EngineOptions::default());
        let mut out = Vec::new();
        s.handle("play attackers", &mut out).unwrap();
        assert_eq!(s.game().ply(), 1);
        s.handle("error 2", &mut out).unwrap();
        assert_eq!(s.game().ply(), 0);
        // A move we cannot follow, on the opponent's turn: OpenTafl's board wins.
        s.handle("side defenders", &mut out).unwrap();
        let board = "/4tttt3/5t5/11/t2t1T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
        s.handle(&format!("opponent-move a1-a2 {board}"), &mut out).unwrap();
        assert_eq!(s.game().position().to_opentafl(), board);
        assert_eq!(s.game().position().side_to_move(), Side::Defenders);
        s.handle("rules dim:11 ber:c start:/11/11/11/11/11/5K5/11/11/11/11/11/", &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("error -1 rules not supported: berserk"), "{text}");
    }

    #[test]
    fn the_clock_limits_the_move_time() {
        let (player, asked) = LimitsRecorder::new();
        let mut s = OpenTaflServer::new(Box::new(player), Variant::copenhagen(), EngineOptions::default());
        let out = run(&mut s, &format!("rules {COPENHAGEN}\nclock 3000 90000 0 0 0\nplay attackers\n"));
        assert!(out[1].starts_with("move "), "{out:?}");
        let asked = asked.lock().unwrap().clone();
        let expected = time_for_move(Duration::from_millis(3000), Duration::ZERO);
        assert_eq!(asked, [Limits { time: Some(expected), ..Limits::default() }]);
        assert!(expected < Duration::from_millis(300));
    }

    #[test]
    fn analyzes_with_a_time_limit() {
        let mut s =
            OpenTaflServer::new(Box::new(AlphaBeta::with_depth(2)), Variant::copenhagen(), EngineOptions::default());
        let out = run(
            &mut s,
            &format!(
                "rules {COPENHAGEN}\nposition /3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/\nanalyze 1 0.5\nanalyze x\n"
            ),
        );
        assert!(out[1].starts_with("analysis 1 "), "{out:?}");
        let words: Vec<&str> = out[1].split_whitespace().collect();
        assert_eq!(words.len(), 4, "{out:?}");
        assert!(parse_otn_move(words[2].split('|').next().unwrap(), 11).is_ok());
        assert!(out[2].starts_with("error 0 analyze"), "{out:?}");
        // The time asked is the time the player gets.
        let (player, asked) = LimitsRecorder::new();
        let mut s = OpenTaflServer::new(Box::new(player), Variant::copenhagen(), EngineOptions::default());
        let out = run(&mut s, &format!("rules {COPENHAGEN}\nanalyze 1 0.5\nanalyze 1 1e300\nanalyze 1 inf\n"));
        assert_eq!(*asked.lock().unwrap(), [Limits { time: Some(Duration::from_millis(500)), ..Limits::default() }]);
        // Seconds that no Duration holds are refused, not a panic.
        assert!(
            out[1].starts_with("analysis 1 ")
                && out[2].starts_with("error 0 analyze")
                && out[3].starts_with("error 0 analyze"),
            "{out:?}"
        );
    }

    #[test]
    fn the_example_ini_is_what_the_engine_prints() {
        let file = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/opentafl/tafl.ini"));
        assert_eq!(file, engine_ini("alphabeta:time=1s", "copenhagen"));
    }

    #[test]
    fn the_ini_names_the_engine_command() {
        let ini = engine_ini("alphabeta:depth=4", "copenhagen");
        assert!(ini.starts_with("[engine]\n"));
        assert!(ini.contains("arguments=engine --protocol opentafl --variant copenhagen --player alphabeta:depth=4\n"));
    }
}
