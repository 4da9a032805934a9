//! What a run reports: a serialisable summary (`summary.json`), text tables, the game records
//! on disk and an SVG plot of the ladder.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use serde::Serialize;
use tafl_files::write_atomic;
use tafl_rules::{Position, Side};

use crate::game::Termination;
use crate::ratings::{Meeting, bradley_terry};
use crate::record::{OtgTags, archive_line, otg, today};
use crate::run::{ArenaError, ArenaResults, GameResult, PairingStats};
use crate::spec::PlayerSpec;
use crate::stats::{EloEstimate, Pentanomial, Sprt, SprtDecision, SprtStatus, Wdl, likelihood_of_superiority};

/// The summary of a run, as written to `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// `match` (two players) or `tournament`.
    pub kind: &'static str,
    /// The variant.
    pub variant: String,
    /// The players, by index.
    pub players: Vec<String>,
    /// Games scheduled.
    pub games_planned: usize,
    /// Games played.
    pub games_played: usize,
    /// Stopped before the schedule ended (SPRT).
    pub stopped_early: bool,
    /// Games longer than this were drawn by the arena.
    pub max_plies: usize,
    /// Openings used.
    pub openings: usize,
    /// The match between players 0 and 1 (two-player runs only).
    #[serde(rename = "match")]
    pub matchup: Option<MatchSummary>,
    /// Every pairing, per side.
    pub pairings: Vec<PairingRow>,
    /// Joint Bradley–Terry ratings, best first.
    pub ladder: Vec<LadderEntry>,
    /// Wins per side over all games.
    pub sides: SideSummary,
    /// How many games ended each way (`king-escaped`, `max-plies`, `forfeit`, …).
    pub terminations: BTreeMap<String, usize>,
    /// Games lost by a player's failure.
    pub forfeits: Vec<ForfeitRow>,
    /// Every game.
    pub games: Vec<GameRow>,
}

/// A two-player match from player A's (index 0) view.
#[derive(Clone, Debug, Serialize)]
pub struct MatchSummary {
    /// Player A.
    pub a: String,
    /// Player B.
    pub b: String,
    /// A's results with the attackers.
    pub a_attacking: Wdl,
    /// A's results with the defenders.
    pub a_defending: Wdl,
    /// A's results in all.
    pub total: Wdl,
    /// A's results per pair.
    pub pairs: Pentanomial,
    /// Elo of A minus B, interval from the pairs (pentanomial).
    pub elo: EloEstimate,
    /// The same with the game-by-game (trinomial) interval.
    pub elo_trinomial: EloEstimate,
    /// Likelihood that A is stronger.
    pub los: f64,
    /// The SPRT, if one ran.
    pub sprt: Option<SprtSummary>,
}

/// An SPRT's setting and result.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SprtSummary {
    /// The test.
    #[serde(flatten)]
    pub test: Sprt,
    /// Where it ended.
    #[serde(flatten)]
    pub status: SprtStatus,
}

/// One pairing's results, from `a`'s view.
#[derive(Clone, Debug, Serialize)]
pub struct PairingRow {
    /// The first player.
    pub a: String,
    /// The second player.
    pub b: String,
    /// `a` with the attackers.
    pub a_attacking: Wdl,
    /// `a` with the defenders.
    pub a_defending: Wdl,
    /// `a` in all.
    pub total: Wdl,
    /// Elo of `a` minus `b` (pentanomial interval).
    pub elo: EloEstimate,
}

/// A rung of the ladder.
#[derive(Clone, Debug, Serialize)]
pub struct LadderEntry {
    /// 1 for the best.
    pub rank: usize,
    /// The player.
    pub name: String,
    /// Elo: field mean 0 (`tafl ratings` may shift the field to an anchor).
    pub elo: f64,
    /// Half width of the 95% interval.
    pub ci95: f64,
    /// Results over all games.
    pub wdl: Wdl,
    /// Results with the attackers.
    pub attacking: Wdl,
    /// Results with the defenders.
    pub defending: Wdl,
    /// Mean score.
    pub score: f64,
}

/// Results per side.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SideSummary {
    /// Games the attackers won.
    pub attackers_won: usize,
    /// Games the defenders won.
    pub defenders_won: usize,
    /// Drawn games.
    pub draws: usize,
}

/// A game lost by a player's failure.
#[derive(Clone, Debug, Serialize)]
pub struct ForfeitRow {
    /// The game number.
    pub game: usize,
    /// The failing player.
    pub player: String,
    /// Its side.
    pub side: Side,
    /// What happened.
    pub error: String,
}

/// One game, briefly.
#[derive(Clone, Debug, Serialize)]
pub struct GameRow {
    /// Game number.
    pub index: usize,
    /// Pair number.
    pub pair: usize,
    /// Opening index.
    pub opening: usize,
    /// The attackers' player.
    pub attackers: String,
    /// The defenders' player.
    pub defenders: String,
    /// The winning side, or none for a draw.
    pub winner: Option<Side>,
    /// How it ended.
    pub termination: Termination,
    /// Plies in all.
    pub plies: usize,
    /// Plies of the opening.
    pub opening_plies: usize,
    /// Seconds it took.
    pub seconds: f64,
    /// The archive line.
    pub record: String,
}

impl Summary {
    /// Summarises a run.
    #[must_use]
    pub fn new(results: &ArenaResults) -> Summary {
        let names: Vec<String> = results.players.iter().map(|p| p.name().to_string()).collect();
        let mut sides = SideSummary::default();
        let mut terminations = BTreeMap::new();
        let mut forfeits = Vec::new();
        let mut games = Vec::with_capacity(results.games.len());
        for g in &results.games {
            match g.played.winner {
                Some(Side::Attackers) => sides.attackers_won += 1,
                Some(Side::Defenders) => sides.defenders_won += 1,
                None => sides.draws += 1,
            }
            *terminations.entry(g.played.termination.name().to_string()).or_insert(0) += 1;
            if let Termination::Forfeit { loser, error } = &g.played.termination {
                let p = if *loser == Side::Attackers { g.attackers } else { g.defenders };
                forfeits.push(ForfeitRow {
                    game: g.index,
                    player: names[p].clone(),
                    side: *loser,
                    error: error.clone(),
                });
            }
            games.push(GameRow {
                index: g.index,
                pair: g.pair,
                opening: g.opening,
                attackers: names[g.attackers].clone(),
                defenders: names[g.defenders].clone(),
                winner: g.played.winner,
                termination: g.played.termination.clone(),
                plies: g.played.moves().len(),
                opening_plies: g.played.opening_plies,
                seconds: g.played.seconds,
                record: archive_line(&g.played),
            });
        }
        let pairings: Vec<PairingRow> = results
            .pairings
            .iter()
            .map(|p| PairingRow {
                a: names[p.a].clone(),
                b: names[p.b].clone(),
                a_attacking: p.a_attacking,
                a_defending: p.a_defending,
                total: p.total(),
                elo: EloEstimate::pentanomial(&p.pairs),
            })
            .collect();
        let matchup = (names.len() == 2).then(|| {
            let p = &results.pairings[0];
            MatchSummary {
                a: names[0].clone(),
                b: names[1].clone(),
                a_attacking: p.a_attacking,
                a_defending: p.a_defending,
                total: p.total(),
                pairs: p.pairs,
                elo: EloEstimate::pentanomial(&p.pairs),
                elo_trinomial: EloEstimate::trinomial(p.total()),
                los: likelihood_of_superiority(p.total()),
                sprt: results.sprt.map(|(test, status)| SprtSummary { test, status }),
            }
        });
        let ladder = ladder(&names, &results.pairings);
        Summary {
            kind: if names.len() == 2 { "match" } else { "tournament" },
            variant: results.variant.clone(),
            players: names,
            games_planned: results.games_planned,
            games_played: results.games.len(),
            stopped_early: results.stopped_early,
            max_plies: results.max_plies,
            openings: results.openings.len(),
            matchup,
            pairings,
            ladder,
            sides,
            terminations,
            forfeits,
            games,
        }
    }

    /// The results as text tables.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} on {}: {} of {} games{}, {} openings, drawn after {} plies",
            self.kind,
            self.variant,
            self.games_played,
            self.games_planned,
            if self.stopped_early { " (stopped early)" } else { "" },
            self.openings,
            self.max_plies
        );
        match &self.matchup {
            Some(m) => match_text(m, &mut out),
            None => self.tournament_text(&mut out),
        }
        let s = self.sides;
        let _ = writeln!(
            out,
            "\nSides: attackers won {}, defenders won {}, draws {}",
            s.attackers_won, s.defenders_won, s.draws
        );
        let ends: Vec<String> = self.terminations.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(out, "Ended by: {}", ends.join(", "));
        if let Some(n) = self.terminations.get("max-plies") {
            let _ = writeln!(out, "Note: {n} games reached the cap of {} plies and count as draws.", self.max_plies);
        }
        for f in self.forfeits.iter().take(10) {
            let _ = writeln!(out, "Forfeit, game {}: {} ({}) {}", f.game, f.player, f.side, f.error);
        }
        if self.forfeits.len() > 10 {
            let _ = writeln!(out, "… and {} more forfeits (see summary.json)", self.forfeits.len() - 10);
        }
        out
    }

    /// A tournament's tables: the ladder, then every pairing.
    fn tournament_text(&self, out: &mut String) {
        ladder_table(&self.ladder, out);
        let _ = writeln!(
            out,
            "\n{:<48} {:>14} {:>14} {:>18}",
            "pairing (A vs B)", "A attacking", "A defending", "Elo A - B"
        );
        for p in &self.pairings {
            let _ = writeln!(
                out,
                "{:<48} {:>14} {:>14} {:>+8.1} ±{:<6.1}",
                format!("{} vs {}", p.a, p.b),
                p.a_attacking.to_string(),
                p.a_defending.to_string(),
                p.elo.elo,
                p.elo.margin()
            );
        }
    }
}

/// A two-player match's table: results by side, Elo, LOS, pairs and the SPRT.
fn match_text(m: &MatchSummary, out: &mut String) {
    let _ = writeln!(
        out,
        "\n{:<34} {:>5} {:>5} {:>5} {:>7}",
        format!("{} vs {}", m.a, m.b),
        "win",
        "draw",
        "loss",
        "score"
    );
    for (label, wdl) in
        [("A with the attackers", m.a_attacking), ("A with the defenders", m.a_defending), ("A in all", m.total)]
    {
        let _ = writeln!(
            out,
            "{label:<34} {:>5} {:>5} {:>5} {:>6.1}%",
            wdl.wins,
            wdl.draws,
            wdl.losses,
            100.0 * wdl.score()
        );
    }
    let _ = writeln!(out, "\nElo A - B: {} (95%, from {} pairs)", m.elo, m.elo.samples);
    let _ = writeln!(out, "           {} (95%, game by game)", m.elo_trinomial);
    let _ = writeln!(out, "LOS: {:.1}%", 100.0 * m.los);
    let p = m.pairs.0;
    let _ = writeln!(out, "Pairs scoring 0/0.5/1/1.5/2: {} {} {} {} {}", p[0], p[1], p[2], p[3], p[4]);
    if let Some(s) = &m.sprt {
        let verdict = match s.status.decision {
            SprtDecision::Continue => "undecided",
            SprtDecision::AcceptH0 => "H0 accepted",
            SprtDecision::AcceptH1 => "H1 accepted",
        };
        let _ = writeln!(
            out,
            "SPRT elo0={} elo1={} alpha={} beta={}: LLR {:.2} in [{:.2}, {:.2}]: {verdict}",
            s.test.elo0, s.test.elo1, s.test.alpha, s.test.beta, s.status.llr, s.status.lower, s.status.upper
        );
    }
}

/// The ladder as a table, best first: Elo with its 95% half width, games, score, and the
/// score with each side.
pub(crate) fn ladder_table(ladder: &[LadderEntry], out: &mut String) {
    let _ = writeln!(
        out,
        "\n{:<4} {:<32} {:>7} {:>6} {:>6} {:>7} {:>10} {:>10}",
        "rank", "player", "Elo", "±95%", "games", "score", "attacking", "defending"
    );
    for e in ladder {
        let _ = writeln!(
            out,
            "{:<4} {:<32} {:>+7.1} {:>6.1} {:>6} {:>6.1}% {:>9.1}% {:>9.1}%",
            e.rank,
            e.name,
            e.elo,
            e.ci95,
            e.wdl.games(),
            100.0 * e.score,
            100.0 * e.attacking.score(),
            100.0 * e.defending.score()
        );
    }
}

/// The players ranked by Bradley-Terry Elo over all their games, with their results by side.
pub(crate) fn ladder(names: &[String], pairings: &[PairingStats]) -> Vec<LadderEntry> {
    let meetings: Vec<Meeting> = pairings.iter().map(|p| Meeting { a: p.a, b: p.b, wdl: p.total() }).collect();
    let ratings = bradley_terry(names.len(), &meetings, 1.0);
    let mut attacking = vec![Wdl::default(); names.len()];
    let mut defending = vec![Wdl::default(); names.len()];
    for p in pairings {
        attacking[p.a] = attacking[p.a].plus(p.a_attacking);
        defending[p.a] = defending[p.a].plus(p.a_defending);
        attacking[p.b] = attacking[p.b].plus(p.a_defending.flipped());
        defending[p.b] = defending[p.b].plus(p.a_attacking.flipped());
    }
    let totals: Vec<Wdl> = (0..names.len()).map(|i| attacking[i].plus(defending[i])).collect();
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&x, &y| ratings[y].elo.total_cmp(&ratings[x].elo));
    order
        .iter()
        .enumerate()
        .map(|(rank, &i)| LadderEntry {
            rank: rank + 1,
            name: names[i].clone(),
            elo: ratings[i].elo,
            ci95: ratings[i].ci95,
            wdl: totals[i],
            attacking: attacking[i],
            defending: defending[i],
            score: totals[i].score(),
        })
        .collect()
}

/// Writes `summary.json`, `games.csv` (archive format) and `otg/NNNN.otg` into `dir`, each
/// whole or not at all.
pub fn write_results(dir: &Path, results: &ArenaResults, summary: &Summary) -> Result<(), ArenaError> {
    let write = |path: &Path, text: &str| write_atomic(path, text.as_bytes()).map_err(ArenaError::write(path));
    let otg_dir = dir.join("otg");
    fs::create_dir_all(&otg_dir).map_err(ArenaError::write(&otg_dir))?;
    let summary_path = dir.join("summary.json");
    let json = serde_json::to_string_pretty(summary).map_err(|e| ArenaError::write(&summary_path)(e.into()))?;
    write(&summary_path, &(json + "\n"))?;
    let mut csv = String::from(GAMES_CSV_HEADER);
    let date = today();
    for g in &results.games {
        csv += &game_record(g, &results.players);
        let tags = OtgTags {
            event: "tafl arena".into(),
            date: date.clone(),
            attackers: results.players[g.attackers].name().to_string(),
            defenders: results.players[g.defenders].name().to_string(),
            round: (g.index + 1).to_string(),
        };
        write(&otg_dir.join(format!("{:04}.otg", g.index)), &otg(&g.played, &tags))?;
    }
    write(&dir.join("games.csv"), &csv)?;
    Ok(())
}

/// The first line of `games.csv`.
pub const GAMES_CSV_HEADER: &str =
    "# tafl arena games: moves,attacker_captures,defender_captures,result (Black = attackers won)\n";

/// One game as `games.csv` holds it: comment lines naming the players (and the start position
/// when it is not the variant's), then the archive line that `tafl replay` reads.
#[must_use]
pub fn game_record(g: &GameResult, players: &[PlayerSpec]) -> String {
    let mut text = String::new();
    let start = g.played.game.start();
    // A forfeit says why (resigned, timed out, died, illegal move): the archive line cannot.
    let why = match &g.played.termination {
        Termination::Forfeit { loser, error } => format!(" by the {loser}: {}", error.replace('\n', " ")),
        _ => String::new(),
    };
    let _ = writeln!(
        text,
        "# game {}: {} (attackers) vs {} (defenders), {}{why}",
        g.index,
        players[g.attackers].name(),
        players[g.defenders].name(),
        g.played.termination.name()
    );
    if *start != Position::start(start.variant()) {
        let _ = writeln!(text, "# start {}", start.to_fen());
    }
    let _ = writeln!(text, "{}", archive_line(&g.played));
    text
}

/// Draws the ladder (Elo with 95% error bars, best on top) as an SVG file, written whole or not
/// at all.
pub fn plot_ladder(path: &Path, ladder: &[LadderEntry], title: &str) -> Result<(), ArenaError> {
    let mut svg = String::new();
    draw_ladder(&mut svg, ladder, title).map_err(|message| ArenaError::Plot { path: path.to_path_buf(), message })?;
    write_atomic(path, svg.as_bytes()).map_err(ArenaError::write(path))
}

fn draw_ladder(svg: &mut String, ladder: &[LadderEntry], title: &str) -> Result<(), String> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let n = ladder.len().max(1);
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    let lo = ladder.iter().map(|e| finite(e.elo - finite(e.ci95))).fold(0.0, f64::min) - 50.0;
    let hi = ladder.iter().map(|e| finite(e.elo + finite(e.ci95))).fold(0.0, f64::max) + 50.0;
    let height = 120 + 60 * n as u32;
    let root = SVGBackend::with_string(svg, (800, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(10)
        .build_cartesian_2d(lo..hi, -0.7..(n as f64 - 0.3))
        .map_err(|e| err(&e))?;
    chart.configure_mesh().disable_y_mesh().disable_y_axis().x_desc("Elo, 95% interval").draw().map_err(|e| err(&e))?;
    // Best on top: rank 1 at the highest y.
    let y = |rank: usize| (n - rank) as f64;
    chart
        .draw_series(ladder.iter().map(|e| {
            let ci = finite(e.ci95);
            ErrorBar::new_horizontal(y(e.rank), e.elo - ci, e.elo, e.elo + ci, BLUE.stroke_width(2), 12)
        }))
        .map_err(|e| err(&e))?;
    chart.draw_series(ladder.iter().map(|e| Circle::new((e.elo, y(e.rank)), 4, BLUE.filled()))).map_err(|e| err(&e))?;
    chart
        .draw_series(ladder.iter().map(|e| {
            Text::new(
                format!("{}  {:+.0} ± {:.0}", e.name, e.elo, finite(e.ci95)),
                (e.elo - finite(e.ci95), y(e.rank) + 0.3),
                ("sans-serif", 15),
            )
        }))
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
