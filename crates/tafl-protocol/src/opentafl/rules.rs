//! OTN rules strings, both ways: [`parse_rules`] reads one into our [`Rules`] and start
//! position (refusing what our rules cannot play), [`write_rules`] and [`rules_string`] write a
//! variant as one. Apart from the engine session because it is a notation, not a protocol: the
//! arena's game records use it too.

use std::collections::HashMap;

use tafl_rules::{Escape, KingCapture, Repetition, Rules, Setup, Side, Square, ThroneHostility, Variant, parse_square};

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
///
/// Over 100 lines: one arm per OTN key, in the order of the list above, so that each key's
/// meaning is read in one place.
pub fn parse_rules(text: &str) -> Result<OtnRules, RulesError> {
    // Long on purpose: the keys one after another, each mapped or refused where it is read, in
    // the order the doc lists them; split up, a refusal would no longer sit beside its mapping.
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

/// The OTN rules string of `variant`, as far as OTN can say it: the inverse of [`parse_rules`]
/// for the rules it supports. OTN has no "the defenders lose on the third repetition", so
/// Copenhagen's repetition is written `tfr:w` as in OpenTafl's own Copenhagen string (the side
/// that repeats loses), and its exit fort `efe:y`; spaces in the name become `_`. The one writer
/// of rules strings (game records, the OpenTafl engine protocol).
#[must_use]
pub fn write_rules(variant: &Variant) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opentafl::tests::COPENHAGEN;

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

    #[test]
    fn copenhagen_rules_are_the_copenhagen_preset() {
        let rules = parse_rules(COPENHAGEN).unwrap();
        assert_eq!(rules.name, "Copenhagen");
        assert_eq!(rules.rules, Rules::COPENHAGEN);
        assert!(std::ptr::eq(rules.variant().unwrap(), Variant::copenhagen()));
        // Our own rules string reads back as the same variant.
        let back = parse_rules(&write_rules(Variant::copenhagen())).unwrap();
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
}
