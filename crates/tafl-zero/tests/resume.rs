//! A training round interrupted part-way (killed, or stopped by a deadline) goes on from its
//! last resumable point and ends with as many steps as an uninterrupted round. The interruption
//! is injected at a given step, never timed: a panic stands for `kill -9` (nothing runs after
//! it), `should_stop` for a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tafl_arena::BuiltinFactory;
use tafl_zero::config::WarmStartConfig;
use tafl_zero::import::{ImportOptions, import_records, teacher_games};
use tafl_zero::optimize::{RoundReport, train_round};
use tafl_zero::{Observer, Run};

const STEPS: u32 = 12;

fn config(resume_every_seconds: f64) -> String {
    format!(
        "[run]\nvariant = \"brandubh\"\nseed = 3\n\
         [net]\nblocks = 1\nchannels = 8\nglobal-pool-interval = 0\npolicy-channels = 2\nvalue-channels = 2\nvalue-hidden = 8\n\
         [optimize]\nbatch-size = 16\nmin-steps = {STEPS}\nmax-steps = {STEPS}\nwindow-min = 100\nresume-every-seconds = {resume_every_seconds:?}\n"
    )
}

/// An observer that stops the round (`stop_after`) or dies in it (`die_after`) once that many
/// steps are done, and keeps the warnings.
#[derive(Default)]
struct Interrupt {
    stop_after: Option<u64>,
    die_after: Option<u64>,
    done: AtomicU64,
    warnings: Mutex<Vec<String>>,
}

impl Observer for Interrupt {
    fn stage(&self, _: &str, _: u64, _: &str) {}
    fn progress(&self, done: u64, _: &str) {
        self.done.store(done, Ordering::SeqCst);
        if self.die_after == Some(done) {
            panic!("simulated kill -9 after step {done}");
        }
    }
    fn finish(&self) {}
    fn info(&self, _: &str) {}
    fn warn(&self, line: &str) {
        self.warnings.lock().unwrap().push(line.to_string());
    }
    fn should_stop(&self) -> bool {
        self.stop_after.is_some_and(|n| self.done.load(Ordering::SeqCst) >= n)
    }
}

/// Archive lines of a few quick Brandubh games, made once.
fn records() -> &'static str {
    static RECORDS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    RECORDS.get_or_init(|| {
        let variant = tafl_rules::Variant::preset("brandubh").unwrap();
        let warm = WarmStartConfig {
            teacher_games: 8,
            teacher_opening_plies: 2,
            teacher_max_plies: 100,
            threads: 1,
            ..WarmStartConfig::default()
        };
        let teacher = "alphabeta:depth=1".parse().unwrap();
        teacher_games(variant, &teacher, &teacher, &BuiltinFactory, &warm, 11, &Interrupt::default()).unwrap()
    })
}

/// A fresh run with the same imported games as every other.
fn new_run(name: &str, resume_every_seconds: f64) -> (Run, PathBuf) {
    let root = std::env::temp_dir().join(format!("tafl-resume-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let run = Run::open(&root, Some(&config(resume_every_seconds)), None).unwrap();
    let stats =
        import_records(&run.dir.import_dir(), run.variant, records(), "test games", &ImportOptions::default()).unwrap();
    assert!(stats.samples > 100, "{}", stats.summary());
    (run, root)
}

fn round(run: &Run, observer: &Interrupt) -> Option<RoundReport> {
    train_round(&run.dir, &run.config, run.variant, observer, true).unwrap()
}

fn points(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("resume/m000000"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The steps and samples of the new model, as the run records them.
fn recorded(run: &Run, report: &RoundReport) -> (u64, u64) {
    let info = run.dir.model_info(&report.id, &tafl_nn::evaluator::expected_for(run.variant)).unwrap();
    (info.steps_total, info.samples_seen)
}

#[test]
fn a_killed_round_goes_on_from_its_last_point_and_takes_every_step() {
    let (whole, whole_root) = new_run("whole", 0.0);
    let uninterrupted = round(&whole, &Interrupt::default()).unwrap();
    assert_eq!((uninterrupted.steps, uninterrupted.resumed_from_step), (STEPS, 0));
    assert!(points(&whole_root).is_empty(), "a finished round leaves no point behind");

    let (run, root) = new_run("killed", 0.0);
    let dying = Interrupt { die_after: Some(5), ..Interrupt::default() };
    assert!(catch_unwind(AssertUnwindSafe(|| round(&run, &dying))).is_err());
    // A point after every step (resume-every-seconds = 0), the older ones removed; the fifth
    // step died before its point was written.
    assert_eq!(points(&root), ["step-000004"]);
    assert_eq!(run.dir.models(), ["m000000"], "no model from an unfinished round");

    let resumed = round(&run, &Interrupt::default()).unwrap();
    assert_eq!(resumed.resumed_from_step, 4);
    assert_eq!(resumed.steps, uninterrupted.steps);
    assert_eq!(recorded(&run, &resumed), recorded(&whole, &uninterrupted));
    assert_eq!(recorded(&run, &resumed), (u64::from(STEPS), u64::from(STEPS) * 16));
    assert!(points(&root).is_empty());
    for dir in [whole_root, root] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_stopped_round_keeps_its_steps_and_goes_on() {
    // No timed point during the round: only the stop writes one.
    let (run, root) = new_run("stopped", 1e9);
    let stopping = Interrupt { stop_after: Some(3), ..Interrupt::default() };
    assert!(round(&run, &stopping).is_none());
    assert_eq!(points(&root), ["step-000003"]);

    let resumed = round(&run, &Interrupt::default()).unwrap();
    assert_eq!((resumed.resumed_from_step, resumed.steps), (3, STEPS));
    assert_eq!(recorded(&run, &resumed).0, u64::from(STEPS));
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_damaged_point_is_reported_and_the_round_starts_again() {
    let (run, root) = new_run("damaged", 0.0);
    let dying = Interrupt { die_after: Some(3), ..Interrupt::default() };
    assert!(catch_unwind(AssertUnwindSafe(|| round(&run, &dying))).is_err());
    let weights = root.join("resume/m000000/step-000002/weights.bpk");
    let mut bytes = std::fs::read(&weights).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xFF;
    std::fs::write(&weights, bytes).unwrap();

    let observer = Interrupt::default();
    let report = round(&run, &observer).unwrap();
    assert_eq!((report.resumed_from_step, report.steps), (0, STEPS));
    let warnings = observer.warnings.lock().unwrap().join("\n");
    assert!(warnings.contains("step-000002") && warnings.contains("checksum"), "{warnings}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_round_whose_losses_are_not_finite_publishes_nothing() {
    // A NaN learning rate passes no config check now; a round that diverges ends the same way.
    let (run, root) = new_run("not-finite", 0.0);
    let mut config = run.config.clone();
    config.optimize.learning_rate = f64::NAN;
    let e = train_round(&run.dir, &config, run.variant, &Interrupt::default(), true).unwrap_err();
    assert!(matches!(e, tafl_zero::ZeroError::NotFinite { what: "losses", .. }), "{e}");
    assert!(e.to_string().contains("the round from m000000"), "{e}");
    assert_eq!(run.dir.models(), ["m000000"], "no model published");
    assert_eq!(run.dir.best_model().as_deref(), Some("m000000"));
    assert!(points(&root).is_empty(), "no point of the round is kept");
    let _ = std::fs::remove_dir_all(root);
}
