//! Variants: a board layout plus a set of rule options. Presets and TOML files.

use std::sync::OnceLock;

use serde::Deserialize;

use crate::bitboard::U256;
use crate::geometry::{Engine, Geometry};
use crate::rules::{Escape, KingCapture, NoMoves, Repetition, Rules, ThroneHostility};
use crate::setup::{Setup, SetupError};
use crate::square::{Piece, Side};

/// A variant: name, start position and rules. Positions refer to it by `&'static Variant`.
#[derive(Debug)]
pub struct Variant {
    name: String,
    rules: Rules,
    start: Setup,
    pub(crate) engine: Engine,
}

/// Why a variant could not be built.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum VariantError {
    /// The TOML text is malformed or has an unknown key (the message names line and key).
    #[error("variant file: {0}")]
    Toml(String),
    /// `base` names no preset.
    #[error("variant file: unknown base variant `{0}` (presets: {PRESET_LIST})")]
    UnknownBase(String),
    /// Neither `layout` nor `base` was given.
    #[error("variant file: needs a `layout` or a `base` preset")]
    NoLayout,
    /// The layout text is malformed.
    #[error("variant layout, line {line}, column {column}: {message}")]
    Layout {
        /// 1-based line within the layout.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The layout is not a valid start position.
    #[error("variant layout: {0}")]
    Setup(#[from] SetupError),
    /// The board size is not supported.
    #[error("variant: board size {0} is not supported (odd sizes 5 to 15)")]
    Size(usize),
}

const PRESET_LIST: &str = "copenhagen, copenhagen-13, tablut, brandubh";

/// The preset names, in the order `--help` lists them.
pub const PRESETS: [&str; 4] = ["copenhagen", "copenhagen-13", "tablut", "brandubh"];

const COPENHAGEN_LAYOUT: &str = "
...XXXXX...
.....X.....
...........
X....O....X
X...OOO...X
XX.OOKOO.XX
X...OOO...X
X....O....X
...........
.....X.....
...XXXXX...";

const COPENHAGEN_13_LAYOUT: &str = "
...XXXXXXX...
......X......
.............
X.....O.....X
X.....O.....X
X....OOO....X
XX.OOOKOOO.XX
X....OOO....X
X.....O.....X
X.....O.....X
.............
......X......
...XXXXXXX...";

const TABLUT_LAYOUT: &str = "
...XXX...
....X....
....O....
X...O...X
XXOOKOOXX
X...O...X
....O....
....X....
...XXX...";

const BRANDUBH_LAYOUT: &str = "
...X...
...X...
...O...
XXOKOXX
...O...
...X...
...X...";

impl Variant {
    /// Builds a variant from a layout (rank `size` first; `X` attacker, `O` defender, `K` king,
    /// `.` empty) and rules. Attackers move first.
    pub fn new(name: &str, layout: &str, rules: Rules) -> Result<Variant, VariantError> {
        let start = parse_layout(layout)?;
        Self::from_setup(name, start, rules)
    }

    /// Builds a variant whose start position is `start`.
    pub fn from_setup(name: &str, start: Setup, rules: Rules) -> Result<Variant, VariantError> {
        let size = start.size;
        if !(5..=15).contains(&size) || size.is_multiple_of(2) {
            return Err(VariantError::Size(size as usize));
        }
        let engine = if (size as u32) * (size as u32) <= 128 {
            Engine::Small(Geometry::<u128>::new(size, rules))
        } else {
            Engine::Large(Geometry::<U256>::new(size, rules))
        };
        let variant = Variant { name: name.to_string(), rules, start, engine };
        variant.check_setup(&variant.start)?;
        Ok(variant)
    }

    /// A preset by name, or `None`.
    #[must_use]
    pub fn preset(name: &str) -> Option<&'static Variant> {
        static CELLS: [OnceLock<Variant>; 4] = [const { OnceLock::new() }; 4];
        let i = PRESETS.iter().position(|p| *p == name)?;
        Some(CELLS[i].get_or_init(|| {
            let (layout, rules) = match i {
                0 => (COPENHAGEN_LAYOUT, Rules::COPENHAGEN),
                1 => (COPENHAGEN_13_LAYOUT, Rules::COPENHAGEN),
                2 => (TABLUT_LAYOUT, Rules::TABLUT),
                _ => (BRANDUBH_LAYOUT, Rules::COPENHAGEN),
            };
            // The preset layouts are constants checked by the tests.
            Variant::new(name, layout, rules).unwrap_or_else(|e| panic!("preset {name}: {e}"))
        }))
    }

    /// Copenhagen Hnefatafl 11x11.
    #[must_use]
    pub fn copenhagen() -> &'static Variant {
        Self::preset("copenhagen").unwrap_or_else(|| unreachable!())
    }

    /// Parses a variant file:
    ///
    /// ```toml
    /// name = "my-variant"        # optional
    /// base = "copenhagen"        # optional preset to start from
    /// layout = """               # optional when base is given
    /// ...X...
    /// ...X...
    /// ...O...
    /// XXOKOXX
    /// ...O...
    /// ...X...
    /// ...X...
    /// """
    /// [rules]                    # optional: overrides of the base (or Copenhagen) rules
    /// shieldwall = false
    /// move-limit = 50
    /// ```
    pub fn from_toml(text: &str) -> Result<Variant, VariantError> {
        let file: VariantFile =
            toml::from_str(text).map_err(|e| VariantError::Toml(e.to_string().trim().replace('\n', " ")))?;
        let base = match &file.base {
            Some(b) => Some(Variant::preset(b).ok_or_else(|| VariantError::UnknownBase(b.clone()))?),
            None => None,
        };
        let mut rules = base.map_or(Rules::COPENHAGEN, |b| b.rules);
        if let Some(o) = file.rules {
            o.apply(&mut rules);
        }
        let name = file.name.unwrap_or_else(|| base.map_or("custom".into(), |b| b.name.clone()));
        match (&file.layout, base) {
            (Some(layout), _) => {
                Variant::new(&name, layout.get_ref(), rules).map_err(|e| e.at_file_line(text, layout.span().start))
            }
            (None, Some(b)) => Variant::from_setup(&name, b.start.clone(), rules),
            (None, None) => Err(VariantError::NoLayout),
        }
    }

    /// Gives the variant a `'static` lifetime so positions can refer to it. Variants live for
    /// the whole program; this leaks a few kilobytes once per loaded variant.
    #[must_use]
    pub fn leak(self) -> &'static Variant {
        Box::leak(Box::new(self))
    }

    /// The variant's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The rule options.
    #[must_use]
    pub fn rules(&self) -> &Rules {
        &self.rules
    }
    /// Board side length.
    #[must_use]
    pub fn size(&self) -> u8 {
        self.start.size
    }
    /// The start position as plain data.
    #[must_use]
    pub fn start_setup(&self) -> &Setup {
        &self.start
    }

    /// True when `sq` is the throne (the centre).
    #[must_use]
    pub fn is_throne(&self, sq: crate::Square) -> bool {
        let c = self.size() / 2;
        sq.file() == c && sq.rank() == c
    }

    /// True when `sq` is a corner and corners are special (corner escape).
    #[must_use]
    pub fn is_corner(&self, sq: crate::Square) -> bool {
        let last = self.size() - 1;
        self.rules.escape == Escape::Corner
            && (sq.file() == 0 || sq.file() == last)
            && (sq.rank() == 0 || sq.rank() == last)
    }

    /// True when only the king may stop on `sq`.
    #[must_use]
    pub fn is_restricted(&self, sq: crate::Square) -> bool {
        self.is_throne(sq) || self.is_corner(sq)
    }

    /// Checks that a setup can be played in this variant.
    pub fn check_setup(&self, setup: &Setup) -> Result<(), SetupError> {
        setup.check(self)
    }
}

impl Setup {
    /// Checks the setup against a variant: size, at most one king, no soldier on a restricted
    /// square. Positions without a king, or with few pieces, are accepted (puzzles, tests).
    pub fn check(&self, variant: &Variant) -> Result<(), SetupError> {
        if self.size != variant.size() {
            return Err(SetupError::Size { expected: variant.size(), found: self.size });
        }
        let mut king = None;
        for (sq, piece) in self.pieces() {
            match piece {
                Piece::King => {
                    if let Some(first) = king {
                        return Err(SetupError::TwoKings(first, sq));
                    }
                    king = Some(sq);
                }
                _ if variant.is_restricted(sq) => return Err(SetupError::SoldierOnRestricted(sq)),
                _ => {}
            }
        }
        Ok(())
    }
}

impl VariantError {
    /// Turns a line number within a layout string into a line number of the file holding it,
    /// given the byte offset where the string starts.
    fn at_file_line(self, text: &str, start: usize) -> VariantError {
        match self {
            VariantError::Layout { line, column, message } => {
                let before = text.get(..start).unwrap_or_default();
                let opens_with_newline =
                    text.get(start..).is_some_and(|t| t.starts_with("'''\n") || t.starts_with("\"\"\"\n"));
                let first = before.matches('\n').count() + 1 + usize::from(opens_with_newline);
                VariantError::Layout { line: first + line - 1, column, message }
            }
            other => other,
        }
    }
}

fn parse_layout(text: &str) -> Result<Setup, VariantError> {
    let lines: Vec<(usize, &str)> =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty()).collect();
    let size = lines.len();
    if !(5..=15).contains(&size) || size.is_multiple_of(2) {
        return Err(VariantError::Size(size));
    }
    let mut setup = Setup::empty(size as u8, Side::Attackers);
    for (row, (line_no, line)) in lines.iter().enumerate() {
        let rank = (size - 1 - row) as u8;
        if line.chars().count() != size {
            let message = format!("expected {size} squares, found {}", line.chars().count());
            return Err(VariantError::Layout { line: *line_no, column: 1, message });
        }
        for (file, c) in line.chars().enumerate() {
            let piece = match c {
                '.' => None,
                'X' | 'x' | 'A' | 'a' => Some(crate::Piece::Attacker),
                'O' | 'o' | 'D' | 'd' => Some(crate::Piece::Defender),
                'K' | 'k' => Some(crate::Piece::King),
                _ => {
                    let message = format!("unexpected `{c}` (use . X O K)");
                    return Err(VariantError::Layout { line: *line_no, column: file + 1, message });
                }
            };
            setup.set(crate::Square::new(file as u8, rank), piece);
        }
    }
    Ok(setup)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantFile {
    name: Option<String>,
    base: Option<String>,
    layout: Option<toml::Spanned<String>>,
    rules: Option<RulesOverride>,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct RulesOverride {
    throne_passable: Option<bool>,
    throne_hostile_to_attackers: Option<bool>,
    throne_hostile_to_defenders: Option<ThroneHostility>,
    king_armed: Option<bool>,
    king_capture: Option<KingCapture>,
    escape: Option<Escape>,
    shieldwall: Option<bool>,
    exit_fort: Option<bool>,
    encirclement: Option<bool>,
    repetition: Option<Repetition>,
    no_moves: Option<NoMoves>,
    /// 0 turns the limit off.
    move_limit: Option<u16>,
}

impl RulesOverride {
    fn apply(self, r: &mut Rules) {
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = self.$f { r.$f = v; } )* };
        }
        set!(
            throne_passable,
            throne_hostile_to_attackers,
            throne_hostile_to_defenders,
            king_armed,
            king_capture,
            escape,
            shieldwall,
            exit_fort,
            encirclement,
            repetition,
            no_moves
        );
        if let Some(limit) = self.move_limit {
            r.move_limit = (limit > 0).then_some(limit);
        }
    }
}
