//! Recorded games as training samples: a warm start for a run from human games or from another
//! engine's games (archive records: the human archive, an arena's `games.csv`, self-play records).
//!
//! Self-play from a random network learns slowly on a small machine: its defenders win almost
//! every game, so the value head learns "defenders win" long before either side plays well.
//! Imported games give both heads a sensible start. Every position before a recorded ply becomes
//! a sample whose policy target is that ply (one-hot) and whose value is the game's result for
//! the side to move. The samples go to `selfplay/import/` as ordinary shards, so the replay
//! window holds them until self-play data pushes them out.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tafl_arena::{PlayerFactory, PlayerSpec, play_game, random_openings};
use tafl_rules::notation::{ArchiveGame, parse_archive_line};
use tafl_rules::{Game, Outcome, Side, Variant};
use tafl_run::metrics::Results;
use tafl_run::shard::{Sample, ShardHeader, shard_stem, write_shard};

use crate::config::WarmStartConfig;
use crate::{Observer, ZeroError};

/// The finished human Copenhagen 11x11 games built into tafl (`human` in `[warm-start]`
/// records): 876 records of the aagenielsen.dk server, 860 of them with a result.
pub const HUMAN_COPENHAGEN: &str = include_str!("../../tafl-rules/tests/data/copenhagen-11x11-archive.csv");

/// How records become samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImportOptions {
    /// Plies at the start of each game that give no sample (random openings of an arena match).
    pub skip_plies: usize,
    /// The samples' weight in the replay window (1: as likely to be drawn as a self-play sample).
    pub weight: f32,
    /// Games per shard.
    pub shard_games: usize,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions { skip_plies: 0, weight: 1.0, shard_games: 64 }
    }
}

/// What an import read and wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportStats {
    /// Games turned into samples.
    pub games: u64,
    /// Samples written.
    pub samples: u64,
    /// The games by result.
    pub results: Results,
    /// Lines that repeat an earlier game (paired arena games between deterministic players).
    pub duplicates: u64,
    /// Why a line was skipped, naming its file and line.
    pub skipped: Vec<String>,
}

impl ImportStats {
    /// One line: games by result, samples, and lines skipped.
    #[must_use]
    pub fn summary(&self) -> String {
        format!(
            "{} games (attackers/defenders/draws {}), {} samples; {} repeated and {} unusable lines skipped",
            self.games,
            self.results,
            self.samples,
            self.duplicates,
            self.skipped.len()
        )
    }
}

/// The samples of one recorded game and its winner (`None`: a draw). Plies after the rules
/// end the game are ignored. A game whose result is neither decided by the rules nor recorded
/// (`Ongoing`, a missing column) has no value target and is refused.
///
/// # Errors
/// An illegal ply (with its number), or an unknown result.
pub fn game_samples(
    record: &ArchiveGame,
    variant: &'static Variant,
    options: &ImportOptions,
) -> Result<(Vec<Sample>, Option<Side>), String> {
    let mut game = Game::new(variant);
    let mut samples = Vec::new();
    for (i, ply) in record.plies.iter().enumerate() {
        if game.outcome().is_over() {
            break;
        }
        if i >= options.skip_plies {
            let mut sample =
                Sample::of_position(game.position(), game.repetitions(), game.plies_since_capture(), game.ply());
            sample.policy = vec![(tafl_nn::move_index(ply.mv.mv, variant.size()) as u16, 1.0)];
            sample.weight = options.weight;
            samples.push(sample);
        }
        game.play(ply.mv.mv).map_err(|e| format!("ply {} ({}): {e}", i + 1, ply.text))?;
    }
    let winner = match game.outcome() {
        Outcome::Decided { winner, .. } => Some(winner),
        Outcome::Draw { .. } => None,
        Outcome::Ongoing => match record.result.as_deref() {
            Some("Black") => Some(Side::Attackers),
            Some("White") => Some(Side::Defenders),
            Some("Draw") => None,
            other => {
                return Err(format!(
                    "no result: the rules do not end the game and the record says `{}`",
                    other.unwrap_or("")
                ));
            }
        },
    };
    for s in &mut samples {
        s.set_outcome(winner, game.position());
        s.root_value = s.value;
    }
    Ok((samples, winner))
}

/// Reads archive records from `text` (named `source` in messages) and writes their samples as
/// shards into `out` (a run's `selfplay/import/`). Unreadable or illegal lines are skipped and
/// named in [`ImportStats::skipped`]; repeated games are imported once.
///
/// # Errors
/// A shard cannot be written.
pub fn import_records(
    out: &Path,
    variant: &'static Variant,
    text: &str,
    source: &str,
    options: &ImportOptions,
) -> Result<ImportStats, ZeroError> {
    std::fs::create_dir_all(out).map_err(|e| ZeroError::io(out, e))?;
    let mut stats = ImportStats::default();
    let mut seen = HashSet::new();
    let mut batch: Vec<Sample> = Vec::new();
    let mut batch_games = 0u64;
    let mut written = 0u32;
    let mut flush = |batch: &mut Vec<Sample>, games: &mut u64| -> Result<(), ZeroError> {
        if *games == 0 {
            return Ok(());
        }
        written += 1;
        let header = ShardHeader::new(variant, *games, format!("import {source}"));
        let stem = shard_stem(written);
        write_shard(&out.join(format!("{stem}.bin")), header, batch)?;
        batch.clear();
        *games = 0;
        Ok(())
    };
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("moves,") {
            continue;
        }
        let moves = line.split(',').next().unwrap_or_default();
        if !seen.insert(moves.to_string()) {
            stats.duplicates += 1;
            continue;
        }
        let parsed = parse_archive_line(line, variant.size())
            .map_err(|e| format!("column {}: {}", e.column, e.message))
            .and_then(|record| game_samples(&record, variant, options));
        let (samples, winner) = match parsed {
            Ok(x) => x,
            Err(e) => {
                stats.skipped.push(format!("{source}:{}: {e}", i + 1));
                continue;
            }
        };
        stats.results.add(winner);
        stats.games += 1;
        stats.samples += samples.len() as u64;
        batch.extend(samples);
        batch_games += 1;
        if batch_games >= options.shard_games.max(1) as u64 {
            flush(&mut batch, &mut batch_games)?;
        }
    }
    flush(&mut batch, &mut batch_games)?;
    Ok(stats)
}

/// Plays `warm.teacher-games` games of `teacher` (attackers) against `defenders` (the same spec
/// for a teacher against itself), each from its own random opening of
/// `warm.teacher-opening-plies` plies, `warm.threads` at a time; returns them as archive lines.
/// A forfeited game is left out.
///
/// # Errors
/// A player cannot be built.
pub fn teacher_games(
    variant: &'static Variant,
    teacher: &PlayerSpec,
    defenders_spec: &PlayerSpec,
    factory: &dyn PlayerFactory,
    warm: &WarmStartConfig,
    seed: u64,
    observer: &dyn Observer,
) -> Result<String, ZeroError> {
    let games = warm.teacher_games;
    let bad = |key: &'static str, spec: &PlayerSpec| {
        let spec = spec.name().to_string();
        move |source| ZeroError::Spec { key, spec, source }
    };
    let limits = teacher.limits();
    factory.build(teacher, seed).map_err(bad("warm-start.teacher", teacher))?;
    let defender_limits = defenders_spec.limits();
    factory.build(defenders_spec, seed).map_err(bad("warm-start.teacher-defenders", defenders_spec))?;
    let openings = random_openings(variant, games, warm.teacher_opening_plies, seed);
    let next = AtomicUsize::new(0);
    let lines: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
    let opponent = if defenders_spec.name() == teacher.name() { "itself" } else { defenders_spec.name() };
    observer.stage(&format!("warm start: {} against {opponent}", teacher.name()), games as u64, "games");
    std::thread::scope(|scope| {
        for _ in 0..warm.threads.clamp(1, games.max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= games || observer.should_stop() {
                        break;
                    }
                    let game_seed = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    let (Ok(mut attackers), Ok(mut defenders)) =
                        (factory.build(teacher, game_seed), factory.build(defenders_spec, game_seed ^ 1))
                    else {
                        continue;
                    };
                    let played = play_game(
                        &openings[i % openings.len()],
                        attackers.as_mut(),
                        &limits,
                        defenders.as_mut(),
                        &defender_limits,
                        warm.teacher_max_plies,
                    );
                    let mut lines = lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    if !matches!(played.termination, tafl_arena::Termination::Forfeit { .. }) {
                        lines.push((i, tafl_arena::record::archive_line(&played)));
                    }
                    observer.progress(lines.len() as u64, "");
                }
            });
        }
    });
    observer.finish();
    let mut lines = lines.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    lines.sort();
    Ok(lines.into_iter().map(|(_, l)| l + "\n").collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimize::shard_expect;
    use tafl_run::shard::read_shard;

    const ARCHIVE: &str = HUMAN_COPENHAGEN;

    fn copenhagen() -> &'static Variant {
        Variant::preset("copenhagen").expect("preset")
    }

    fn line(text: &str) -> ArchiveGame {
        parse_archive_line(text, 11).expect("a valid line")
    }

    #[test]
    fn each_ply_gives_a_sample_with_the_played_move_and_the_recorded_result() {
        let v = copenhagen();
        let record = line("d1-d3 e5-e2 f2-i2 d6-d9 a5-c5 e7-b7 a8-b8xb7,1,0,Black");
        let (samples, winner) = game_samples(&record, v, &ImportOptions::default()).expect("legal");
        assert_eq!(winner, Some(Side::Attackers));
        assert_eq!(samples.len(), 7);
        for (i, (s, ply)) in samples.iter().zip(&record.plies).enumerate() {
            assert_eq!(usize::from(s.ply), i);
            assert_eq!(s.policy, vec![(tafl_nn::move_index(ply.mv.mv, 11) as u16, 1.0)]);
            let expected = if s.side() == Side::Attackers { 1.0 } else { -1.0 };
            assert_eq!(s.value, expected);
            let position = s.position(v).expect("a position of the variant");
            assert!(position.legal_moves().contains(&ply.mv.mv), "ply {i} is legal in its sample");
        }
        let options = ImportOptions { skip_plies: 4, weight: 0.5, ..ImportOptions::default() };
        let late = game_samples(&record, v, &options).expect("legal").0;
        assert_eq!(late.len(), 3);
        assert_eq!(late[0].ply, 4);
        assert!(late.iter().all(|s| s.weight == 0.5));
        let draw = game_samples(&line("d1-d3 e5-e2,0,0,Draw"), v, &ImportOptions::default()).expect("legal").0;
        assert!(draw.iter().all(|s| s.value == 0.0));
    }

    #[test]
    fn games_without_a_result_or_with_an_illegal_ply_are_refused() {
        let v = copenhagen();
        let e = game_samples(&line("d1-d3 e5-e2,0,0,Ongoing"), v, &ImportOptions::default()).unwrap_err();
        assert!(e.contains("Ongoing"), "{e}");
        // d1 is empty after d1-d3: the third ply moves nothing.
        let e = game_samples(&line("d1-d3 e5-e2 d1-d2,0,0,Black"), v, &ImportOptions::default()).unwrap_err();
        assert!(e.starts_with("ply 3 (d1-d2)"), "{e}");
    }

    #[test]
    fn the_human_archive_imports_into_readable_shards_once() {
        let v = copenhagen();
        let root = std::env::temp_dir().join(format!("tafl-zero-import-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let run = tafl_run::RunDir::open(&root).expect("run dir");
        let doubled = format!("{ARCHIVE}\nthis is not a record,0,0,Black\n{ARCHIVE}");
        let stats =
            import_records(&run.import_dir(), v, &doubled, "archive.csv", &ImportOptions::default()).expect("import");
        let lines = ARCHIVE.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).count() as u64;
        assert_eq!(stats.duplicates, lines, "the second copy is skipped");
        let ongoing = ARCHIVE.lines().filter(|l| l.ends_with(",Ongoing")).count() as u64;
        assert!(stats.games >= lines - ongoing - 5 && stats.games <= lines, "{stats:?}");
        assert_eq!(stats.games, stats.results.games());
        let bad = doubled.lines().position(|l| l.starts_with("this is")).expect("the bad line") + 1;
        assert!(
            stats.skipped.iter().any(|s| s.starts_with(&format!("archive.csv:{bad}: column 1"))),
            "{:?}",
            stats.skipped
        );
        let (shards, warnings) = run.shards(&shard_expect(v));
        assert!(warnings.is_empty(), "{warnings:?}");
        let mut samples = 0;
        let mut games = 0;
        for shard in &shards {
            let (header, content) = read_shard(&shard.path, &shard_expect(v)).expect("a valid shard");
            samples += content.len() as u64;
            games += header.games;
            assert!(content.iter().all(|s| s.policy.len() == 1 && s.value.abs() <= 1.0));
        }
        assert_eq!((samples, games), (stats.samples, stats.games));
        assert!(stats.samples > 40 * stats.games, "about 50 plies per game: {stats:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn teacher_games_are_legal_records_from_different_openings() {
        let v = Variant::preset("brandubh").expect("preset");
        let teacher: PlayerSpec = "alphabeta:depth=1".parse().expect("spec");
        let warm = WarmStartConfig {
            teacher_games: 6,
            teacher_opening_plies: 4,
            teacher_max_plies: 60,
            threads: 2,
            ..WarmStartConfig::default()
        };
        let text =
            teacher_games(v, &teacher, &teacher, &tafl_arena::BuiltinFactory, &warm, 3, &crate::Plain).expect("games");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6);
        let openings: HashSet<String> =
            lines.iter().map(|l| l.split(' ').take(4).collect::<Vec<_>>().join(" ")).collect();
        assert!(openings.len() > 1, "{openings:?}");
        let options = ImportOptions { skip_plies: 4, ..ImportOptions::default() };
        for line in lines {
            let (samples, _) =
                game_samples(&parse_archive_line(line, v.size()).expect("archive line"), v, &options).expect("legal");
            assert!(samples.iter().all(|s| s.ply >= 4));
        }
        // A spec that reads but whose player does not start.
        let bad: PlayerSpec = "htp:cmd=/no/such/engine".parse().expect("spec");
        assert!(teacher_games(v, &bad, &bad, &tafl_arena::BuiltinFactory, &warm, 3, &crate::Plain).is_err());
    }
}
