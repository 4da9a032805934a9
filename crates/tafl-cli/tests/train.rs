//! `tafl train` end to end with configs/smoke.toml: killed with SIGKILL inside each stage in turn
//! (teacher games, self-play, optimize, gate), restarted, it completes, and every shard and model loads.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tafl_rules::Variant;
use tafl_run::RunDir;
use tafl_run::shard::{ShardExpect, read_shard};

const SMOKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/smoke.toml");

fn tafl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tafl"))
}

fn temp_run(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-train-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_with(&path, ext));
        } else if path.extension().is_some_and(|e| e == ext) && !entry.file_name().to_string_lossy().starts_with('.') {
            out.push(path);
        }
    }
    out
}

/// The stages of a run that a SIGKILL must not damage, in the order a run meets them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    TeacherGames,
    SelfPlay,
    Optimize,
    Gate,
}

impl Phase {
    /// True when `line` is a progress line of this phase with some but not all of its work done
    /// (`… 3/16 games (18%) in 1s …`).
    fn is_inside(self, line: &str) -> bool {
        let Some(percent) =
            line.split_once(" (").and_then(|(_, rest)| rest.split_once("%)")).and_then(|(p, _)| p.parse::<u32>().ok())
        else {
            return false;
        };
        let prefix = match self {
            Phase::TeacherGames => "warm start: ",
            Phase::SelfPlay => "selfplay ",
            Phase::Optimize => "optimize: ",
            Phase::Gate => "gate ",
        };
        line.starts_with(prefix) && (1..100).contains(&percent)
    }
}

/// Starts `tafl train` and kills it with SIGKILL inside `phase`, right after a progress line
/// that shows the phase under way; returns that line.
fn kill_inside(args: &[&str], phase: Phase) -> String {
    use std::io::BufRead;
    let mut child = tafl().args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut log = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        if phase.is_inside(&line) {
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
            return line;
        }
        log.push(line);
    }
    let _ = child.wait();
    panic!("the run ended before {phase:?} was under way:\n{}", log.join("\n"));
}

#[test]
fn train_survives_kill_9_and_completes() {
    let run = temp_run("kill");
    let args = ["train", "--config", SMOKE, "--run", run.to_str().unwrap()];

    // Killed inside each stage in turn (each restart resumes the run and goes on to the next).
    for phase in [Phase::TeacherGames, Phase::SelfPlay, Phase::Optimize, Phase::Gate] {
        let line = kill_inside(&args, phase);
        eprintln!("killed inside {phase:?}, after `{line}`");
    }

    let out = tafl().args(args).arg("--quiet").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "restart failed: {stderr}");
    assert!(stderr.contains("done: 2 iterations"), "{stderr}");

    // Every shard and every model loads; best names one of them.
    let variant = Variant::preset("brandubh").unwrap();
    let expect = ShardExpect { variant: "brandubh".into(), encoding_version: tafl_nn::POLICY_VERSION };
    let shards = files_with(&run.join("selfplay"), "bin");
    assert!(!shards.is_empty());
    for shard in &shards {
        let (header, samples) = read_shard(shard, &expect).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(header.count as usize, samples.len());
        assert!(samples.iter().all(|s| s.position(variant).is_some()));
    }
    let dir = RunDir::open(&run).unwrap();
    let models = dir.models();
    assert!(models.len() >= 3, "{models:?}");
    let expected = tafl_nn::evaluator::expected_for(variant);
    for id in &models {
        tafl_nn::checkpoint::load(&dir.model_dir(id), &expected, &tafl_nn::device())
            .unwrap_or_else(|e| panic!("{id}: {e}"));
    }
    assert!(models.contains(&dir.best_model().unwrap()));
    // The warm start's teacher games were imported once, and nothing half-written is left.
    assert!(!files_with(&dir.import_dir(), "bin").is_empty());
    assert!(!run.join("selfplay/.import-partial").exists());
    assert!(dir.gate_result("m000002").is_some());

    // The self-play records are archive lines that `tafl replay` accepts.
    let records = files_with(&run.join("selfplay"), "csv");
    assert!(!records.is_empty());
    let replay = tafl().args(["replay", "--variant", "brandubh", records[0].to_str().unwrap()]).output().unwrap();
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stdout));

    // Restarting with the same config keeps the one config.toml.
    let copies = std::fs::read_dir(&run)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("config-"))
        .count();
    assert_eq!(copies, 0);

    // A finished run restarted has nothing left to do.
    let again = tafl().args(args).arg("--quiet").output().unwrap();
    assert!(again.status.success());
    assert_eq!(dir.models(), models);

    let report = tafl().args(["report", "--run", run.to_str().unwrap()]).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    assert!(run.join("report/index.html").is_file());
    assert!(run.join("report/losses.svg").is_file());
    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn unknown_config_keys_are_named() {
    let run = temp_run("badkey");
    std::fs::create_dir_all(&run).unwrap();
    let config = run.join("bad.toml");
    std::fs::write(&config, "[selfplay]\ngames-in-flite = 3\n").unwrap();
    let out = tafl()
        .args(["train", "--config", config.to_str().unwrap(), "--run", run.join("r").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("games-in-flite"));
    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn import_turns_records_into_shards_and_refuses_missing_files() {
    let run = temp_run("import");
    let archive = concat!(env!("CARGO_MANIFEST_DIR"), "/../tafl-rules/tests/data/copenhagen-11x11-archive.csv");
    let missing = tafl().args(["import", "--run", run.to_str().unwrap(), "/nonexistent/games.csv"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/games.csv"));
    assert!(!run.exists(), "a failed import leaves no run behind");

    let out = tafl().args(["import", "--run", run.to_str().unwrap(), archive]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(": 860 games (attackers/defenders/draws 370/486/4)"), "{stdout}");
    let expect = ShardExpect { variant: "copenhagen".into(), encoding_version: tafl_nn::POLICY_VERSION };
    let samples: usize =
        files_with(&run.join("selfplay/import"), "bin").iter().map(|p| read_shard(p, &expect).unwrap().1.len()).sum();
    assert!(stdout.contains(&format!("{samples} samples")), "{stdout}");
    let _ = std::fs::remove_dir_all(&run);
}

/// The smoke config made smaller: one iteration of every stage, evaluation included.
fn one_small_iteration() -> String {
    std::fs::read_to_string(SMOKE)
        .unwrap()
        .replace("iterations = 2", "iterations = 1")
        .replace("games-per-iteration = 64", "games-per-iteration = 16")
        .replace("min-steps = 20", "min-steps = 10")
        .replace("max-steps = 60", "max-steps = 10")
        .replace("enabled = true\ngames = 8", "enabled = true\ngames = 4")
        .replace("every = 2\ngames = 4", "every = 1\ngames = 2")
        .replace("teacher-games = 16", "teacher-games = 8")
        .replace("steps = 30", "steps = 10")
}

#[test]
fn a_run_with_the_tactical_planes_trains_them() {
    let run = temp_run("tactical");
    std::fs::create_dir_all(&run).unwrap();
    let path = run.join("tactical.toml");
    let config = one_small_iteration().replace("[net]\n", "[net]\ntactical-planes = true\n");
    assert!(config.contains("tactical-planes = true"), "the smoke config has a [net] table");
    std::fs::write(&path, config).unwrap();
    let out = tafl()
        .args(["train", "--config", path.to_str().unwrap(), "--run", run.join("r").to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The trained model reads the sixteen planes of encoding version 2, and says so.
    let model = run.join("r/models/m000001");
    let config = std::fs::read_to_string(model.join("config.json")).unwrap();
    assert!(config.contains("\"input_planes\":16") || config.contains("\"input_planes\": 16"), "{config}");
    let meta = std::fs::read_to_string(model.join("meta.json")).unwrap();
    assert!(meta.contains("\"encoding_version\":2") || meta.contains("\"encoding_version\": 2"), "{meta}");
    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn without_a_terminal_every_long_stage_logs_plain_progress_lines() {
    let run = temp_run("log");
    std::fs::create_dir_all(&run).unwrap();
    let path = run.join("log.toml");
    std::fs::write(&path, one_small_iteration()).unwrap();
    // Standard error is a pipe here, as under nohup, `| tee` or a batch job.
    let out = tafl()
        .args(["train", "--config", path.to_str().unwrap(), "--run", run.join("r").to_str().unwrap()])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    for line in [
        "warm start: alphabeta:depth=1 against itself: 0/8 games",
        "warm start: alphabeta:depth=1 against itself: 8/8 games (100%) in ",
        "selfplay m000000: 0/8 games",
        "optimize: 0/10 steps",
        "optimize: 1/10 steps (10%) in ",
        "optimize: 10/10 steps (100%) in ",
        "gate m000001 vs m000000: 4/4 games (100%) in ",
        "vs alphabeta:depth=1: 2/2 games (100%) in ",
    ] {
        assert!(log.contains(line), "no `{line}` in the log:\n{log}");
    }
    // A line per tenth at most (or per 30 s): the 10-step round logs 11 lines, not one per
    // progress call.
    assert_eq!(log.lines().filter(|l| l.starts_with("optimize: ") && l.contains(" steps")).count(), 11, "{log}");
    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn runs_take_file_urls_and_name_unknown_schemes() {
    let run = temp_run("url");
    let url = format!("file://{}", run.display());
    let out = tafl().args(["selfplay", "--config", SMOKE, "--run", &url, "--games", "2", "--quiet"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The same run as a plain path: its shards, models and config are where the URL put them.
    assert!(!files_with(&run.join("selfplay"), "bin").is_empty());
    assert_eq!(RunDir::open(&run).unwrap().models(), ["m000000"]);
    assert!(run.join("config.toml").is_file());
    let bad = tafl().args(["report", "--run", "gs://bucket/run"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("unknown storage scheme `gs://`"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    #[cfg(not(feature = "s3"))]
    {
        let s3 = tafl().args(["report", "--run", "s3://bucket/run"]).output().unwrap();
        assert_eq!(s3.status.code(), Some(1));
        assert!(
            String::from_utf8_lossy(&s3.stderr).contains("built without S3 support"),
            "{}",
            String::from_utf8_lossy(&s3.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&run);
}
