//! `tafl train`, `tafl selfplay`, `tafl optimize`, `tafl gate` and `tafl report`: the training
//! pipeline of `tafl-zero` behind progress bars.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tafl_zero::config::DEFAULT_CONFIG;
use tafl_zero::{Observer, Run, RunConfig, TrainLimits};

use crate::bench::TrainConv;
use crate::{Failure, bad_input};

const TRAIN_HELP: &str = "The run directory (default data/runs/default):
  config.toml  models/<id>/  models/best  selfplay/<model>/*.bin,*.csv  selfplay/import/*.bin
  arena/  logs/metrics.jsonl  report/  resume/ (the round in progress)

Kill it at any moment (even kill -9) and start it again: it resumes from the files, a training
round from its last resumable point (every optimize.resume-every-seconds). Without a terminal
(nohup, | tee, a batch job) progress goes to standard error as a line per tenth of each stage,
and at least every 30 s.
Several `tafl selfplay --run DIR` processes (other machines too) may feed the same run; one
`tafl optimize` (or `tafl train`) trains it: a second one stops, naming the first.
--run also takes file:///path and, in a build with `--features s3`, s3://bucket/prefix (any
S3-compatible store; endpoint and credentials from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ALLOW_HTTP=true for plain http). TAFL_WORKER_ID names
this process in shard names and metrics (default host-pid); TAFL_CACHE_DIR holds the local
cache and upload spool of runs in object storage (default ~/.cache/tafl).

Examples:
  tafl train                                   # configs/cpu.toml into data/runs/default
  tafl train --config configs/smoke.toml --run /tmp/smoke
  tafl train --config configs/cpu.toml --run data/runs/cph --hours 8
  tafl train --init-from players/best --run data/runs/more   # go on from an exported net
  tafl train --init-from builtin --run data/runs/more        # go on from the net that ships with tafl
  tafl train --config configs/cpu.toml --variant tablut --run data/runs/tablut
  tafl selfplay --run data/runs/cph --games 200
  tafl optimize --run data/runs/cph
  tafl gate --run data/runs/cph
  tafl report --run data/runs/cph
  tafl selfplay --run s3://tafl-runs/cph            # a worker of a run in object storage
  tafl optimize --run s3://tafl-runs/cph --loop     # its one trainer";

/// Where the run is and which config it uses.
#[derive(Args, Clone)]
pub struct RunArgs {
    /// The run config (TOML; see configs/README.md). Default: the run's own config.toml, or
    /// configs/cpu.toml (built in) for a new run.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The run directory: a path, file:///path or s3://bucket/prefix.
    #[arg(long, default_value = "data/runs/default")]
    run: PathBuf,
    /// Play this variant instead of the config's: a preset or a variant TOML file.
    #[arg(long)]
    variant: Option<String>,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
}

/// Arguments of `tafl train`.
#[derive(Args)]
#[command(after_help = TRAIN_HELP)]
pub struct TrainArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Stop once the run has this many iterations (trained models) in all; 0 runs forever.
    #[arg(long)]
    iterations: Option<u32>,
    /// Stop after this many hours.
    #[arg(long)]
    hours: Option<f64>,
    /// Start a new run from a trained net instead of a random one and the warm start: a bundle
    /// (`tafl export`), a checkpoint, a run directory, or `builtin` (the net that ships with
    /// tafl). Ignored when the run has models already (the same command resumes).
    #[arg(long, value_name = "PLAYER")]
    init_from: Option<PathBuf>,
    /// The training step's convolutions and batch norms: `fast` (`tafl_nn::conv_train` and
    /// `norm_train` on the CPU) or `stock` (Burn's own, slower; to measure the fast path against).
    /// Both train the same net to within rounding.
    #[arg(long, value_enum, default_value = "fast")]
    train_conv: TrainConv,
}

/// Arguments of `tafl selfplay`.
#[derive(Args)]
#[command(after_help = TRAIN_HELP)]
pub struct SelfplayArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Games to play (default: until killed), with the best model, reloaded between chunks.
    #[arg(long)]
    games: Option<u64>,
}

/// Arguments of `tafl optimize`.
#[derive(Args)]
#[command(after_help = TRAIN_HELP)]
pub struct OptimizeArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Train a round even when fewer than games-per-iteration new games are on disk.
    #[arg(long)]
    force: bool,
    /// Take the run's trainer fence from a trainer that is gone but left it held (killed on
    /// another machine). Make sure it is gone: two trainers would fight over model ids.
    #[arg(long)]
    take_over: bool,
    /// Keep training: a round whenever enough new games are in, until killed (the trainer of a
    /// cluster run; `--gate` gates each new model too).
    #[arg(long = "loop")]
    keep_going: bool,
    /// With --loop: gate each new model against the best (promotes it on a pass).
    #[arg(long, requires = "keep_going")]
    gate: bool,
    /// With --loop: seconds to wait when there is nothing to train.
    #[arg(long, default_value_t = 30.0, requires = "keep_going")]
    poll_seconds: f64,
}

const IMPORT_HELP: &str = "Every position before a recorded ply becomes a sample: the ply is its policy target, the
game's result its value target. Games the rules do not end and whose record has no result
(`Ongoing`) are skipped, and so are repeats of a game already in the file (paired arena games
between deterministic players). The samples land in selfplay/import/ as shards; the next
`tafl train` or `tafl optimize` trains on them.

Examples:
  tafl import --run data/runs/warm ../shared/data/games/copenhagen-11x11-archive.csv
  tafl arena --a alphabeta:depth=3 --b alphabeta:depth=3,name=ab3b --games 2000 --opening-plies 8 --out data/arena/teacher
  tafl import --run data/runs/warm --skip-plies 8 data/arena/teacher/games.csv
  tafl train --run data/runs/warm";

/// Arguments of `tafl import`.
#[derive(Args)]
#[command(after_help = IMPORT_HELP)]
pub struct ImportArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Game records in the archive format (`tafl replay` reads them; an arena's games.csv).
    #[arg(required = true)]
    records: Vec<PathBuf>,
    /// Plies at the start of each game that give no sample (an arena's random opening plies).
    #[arg(long, default_value_t = 0)]
    skip_plies: usize,
    /// The samples' weight when the trainer draws from the replay window.
    #[arg(long, default_value_t = 1.0)]
    weight: f32,
}

/// Arguments of `tafl gate`.
#[derive(Args)]
#[command(after_help = TRAIN_HELP)]
pub struct GateArgs {
    #[command(flatten)]
    run: RunArgs,
    /// The candidate model id (default: the newest model).
    #[arg(long)]
    candidate: Option<String>,
    /// Instead of gating, evaluate the best model (or --candidate) against the ladder.
    #[arg(long)]
    evaluate: bool,
}

/// Arguments of `tafl report`.
#[derive(Args)]
pub struct ReportArgs {
    /// The run directory.
    #[arg(long, default_value = "data/runs/default")]
    run: PathBuf,
}

/// Without a terminal (`nohup`, `| tee`, a batch job) the bars draw nothing: a plain line every
/// tenth of a stage, and at least this often, shows in the log that the job is alive and how far
/// it is.
const LOG_EVERY: Duration = Duration::from_secs(30);

/// Progress bars and log lines on standard error.
struct Bars {
    quiet: bool,
    /// Standard error is not a terminal: progress goes out as plain lines.
    log_lines: bool,
    bar: Mutex<Option<ProgressBar>>,
    line: Mutex<Option<StageLog>>,
}

/// The stage whose progress goes out as plain lines.
struct StageLog {
    name: String,
    total: u64,
    unit: String,
    started: Instant,
    /// When the last line went out, and the tenth it reported.
    last: Instant,
    tenth: u64,
    /// The first progress reported: a resumed stage starts part-way.
    base: Option<u64>,
}

impl StageLog {
    /// The line for `done` units, when one is due.
    fn line(&mut self, done: u64, message: &str) -> Option<String> {
        let base = *self.base.get_or_insert(done);
        let tenth = (done.min(self.total) * 10).checked_div(self.total).unwrap_or(10);
        if tenth <= self.tenth && self.last.elapsed() < LOG_EVERY {
            return None;
        }
        self.tenth = self.tenth.max(tenth);
        self.last = Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = if done > base && done < self.total {
            format!(", about {} left", minutes(elapsed * (self.total - done) as f64 / (done - base) as f64))
        } else {
            String::new()
        };
        let percent = if self.total == 0 { 100.0 } else { 100.0 * done as f64 / self.total as f64 };
        let message = if message.is_empty() { String::new() } else { format!(": {message}") };
        Some(format!(
            "{}: {done}/{} {} ({percent:.0}%) in {}{eta}{message}",
            self.name,
            self.total,
            self.unit,
            minutes(elapsed)
        ))
    }
}

/// `42s`, `12m05s`, `2h03m`.
fn minutes(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

impl Bars {
    fn new(quiet: bool) -> Bars {
        let log_lines = !quiet && !std::io::stderr().is_terminal();
        Bars { quiet, log_lines, bar: Mutex::new(None), line: Mutex::new(None) }
    }
    fn with_bar(&self, f: impl FnOnce(&mut Option<ProgressBar>)) {
        let mut bar = self.bar.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut bar);
    }
    fn with_line(&self, f: impl FnOnce(&mut Option<StageLog>)) {
        let mut line = self.line.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut line);
    }
}

impl Observer for Bars {
    fn stage(&self, name: &str, total: u64, unit: &str) {
        if self.quiet {
            return;
        }
        let bar = ProgressBar::new(total);
        let template =
            format!("{{prefix:.bold}} {{bar:25}} {{pos}}/{{len}} {unit} [{{elapsed_precise}}<{{eta}}] {{msg}}");
        bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()));
        bar.set_prefix(name.to_string());
        self.with_bar(|b| {
            if let Some(old) = b.replace(bar) {
                old.finish_and_clear();
            }
        });
        if self.log_lines {
            let now = Instant::now();
            let log = StageLog {
                name: name.to_string(),
                total,
                unit: unit.to_string(),
                started: now,
                last: now,
                tenth: 0,
                base: None,
            };
            eprintln!("{}: 0/{total} {unit}", log.name);
            self.with_line(|l| *l = Some(log));
        }
    }
    fn progress(&self, done: u64, message: &str) {
        self.with_bar(|b| {
            if let Some(bar) = b {
                bar.set_position(done);
                bar.set_message(message.to_string());
            }
        });
        if self.log_lines {
            self.with_line(|l| {
                if let Some(line) = l.as_mut().and_then(|log| log.line(done, message)) {
                    eprintln!("{line}");
                }
            });
        }
    }
    fn finish(&self) {
        self.with_bar(|b| {
            if let Some(bar) = b.take() {
                bar.finish_and_clear();
            }
        });
        self.with_line(|l| *l = None);
    }
    fn info(&self, line: &str) {
        let mut printed = false;
        self.with_bar(|b| {
            // A hidden bar (no terminal) drops what it is asked to print.
            if let Some(bar) = b.as_ref().filter(|bar| !bar.is_hidden()) {
                bar.println(line);
                printed = true;
            }
        });
        if !printed {
            eprintln!("{line}");
        }
    }
    fn warn(&self, line: &str) {
        self.info(&format!("warning: {line}"));
    }
}

fn git_revision() -> Option<String> {
    let out = std::process::Command::new("git").args(["rev-parse", "--short", "HEAD"]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

/// Opens the run with the config the arguments name.
fn open(args: &RunArgs) -> Result<Run, Failure> {
    let own_config = args.run.join(tafl_run::rundir::CONFIG_FILE);
    let given = match &args.config {
        Some(path) => Some(
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display())).map_err(bad_input)?,
        ),
        None => None,
    };
    let fresh = !is_url(&args.run) && !own_config.exists();
    let mut text = match &args.variant {
        Some(variant) => {
            let base = given
                .unwrap_or_else(|| std::fs::read_to_string(&own_config).unwrap_or_else(|_| DEFAULT_CONFIG.to_string()));
            let mut config = RunConfig::from_toml(&base).map_err(bad_input)?;
            config.run.variant.clone_from(variant);
            Some(config.to_toml())
        }
        None if fresh => Some(given.unwrap_or_else(|| DEFAULT_CONFIG.to_string())),
        None => given,
    };
    // A new run records the revision that made it.
    if let Some(t) = &mut text
        && fresh
        && let Some(rev) = git_revision()
    {
        *t = format!("# git revision: {rev}\n{t}");
    }
    let base: Option<&Path> = args.config.as_deref().and_then(Path::parent);
    Run::open(&args.run, text.as_deref(), base).map_err(|e| match e {
        tafl_zero::ZeroError::Config(_) => {
            bad_input(anyhow!("{}: {e}", args.config.as_deref().unwrap_or(&own_config).display()))
        }
        e => Failure { code: 1, error: e.into() },
    })
}

/// `--run` names a URL (`s3://`, `file://`), not a plain path.
fn is_url(run: &Path) -> bool {
    run.to_string_lossy().contains("://")
}

fn failed(e: impl Into<tafl_zero::ZeroError>) -> Failure {
    let e: tafl_zero::ZeroError = e.into();
    Failure { code: 1, error: e.into() }
}

/// `tafl train`.
pub fn train(args: &TrainArgs) -> Result<u8, Failure> {
    let run = open(&args.run)?;
    let bars = Bars::new(args.run.quiet);
    // The switch holds for the calling thread, which runs the training rounds.
    tafl_nn::conv_train::set_enabled(args.train_conv.fast());
    if let Some(source) = &args.init_from {
        run.init_from(source, &bars).map_err(failed)?;
    }
    run.train(TrainLimits { iterations: args.iterations, hours: args.hours }, &bars).map_err(failed)?;
    Ok(0)
}

/// `tafl selfplay`.
pub fn selfplay(args: &SelfplayArgs) -> Result<u8, Failure> {
    let run = open(&args.run)?;
    let bars = Bars::new(args.run.quiet);
    run.selfplay_loop(args.games, &bars).map_err(failed)?;
    Ok(0)
}

/// `tafl optimize`.
pub fn optimize(args: &OptimizeArgs) -> Result<u8, Failure> {
    let mut run = open(&args.run)?;
    run.dir = run.dir.clone().with_take_over(args.take_over);
    let bars = Bars::new(args.run.quiet);
    if !args.keep_going {
        if run.optimize(&bars, args.force).map_err(failed)?.is_none() {
            bars.info(&format!(
                "nothing to train: fewer than {} new games since the newest model (use --force)",
                run.config.selfplay.games_per_iteration
            ));
        }
        return Ok(0);
    }
    let poll = std::time::Duration::from_secs_f64(args.poll_seconds.clamp(0.1, 3600.0));
    loop {
        match run.optimize(&bars, args.force).map_err(failed)? {
            Some(report) if args.gate => {
                run.gate(Some(&report.id), &bars).map_err(failed)?;
            }
            Some(_) => {}
            None => std::thread::sleep(poll),
        }
    }
}

/// `tafl import`.
pub fn import(args: &ImportArgs) -> Result<u8, Failure> {
    if !(args.weight.is_finite() && args.weight > 0.0) {
        return Err(bad_input(anyhow!("--weight must be a positive number, not {}", args.weight)));
    }
    let mut texts = Vec::new();
    for path in &args.records {
        texts.push(
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display())).map_err(bad_input)?,
        );
    }
    let run = open(&args.run)?;
    let options =
        tafl_zero::import::ImportOptions { skip_plies: args.skip_plies, weight: args.weight, ..Default::default() };
    for (path, text) in args.records.iter().zip(&texts) {
        let stats = tafl_zero::import::import_records(
            &run.dir.import_dir(),
            run.variant,
            text,
            &path.display().to_string(),
            &options,
        )
        .map_err(failed)?;
        for line in stats.skipped.iter().take(20) {
            eprintln!("warning: skipped {line}");
        }
        if stats.skipped.len() > 20 {
            eprintln!("warning: … and {} more lines skipped", stats.skipped.len() - 20);
        }
        println!("{}: {}", path.display(), stats.summary());
    }
    run.dir.publish_folder(&run.dir.import_dir()).map_err(failed)?;
    Ok(0)
}

/// `tafl gate`.
pub fn gate(args: &GateArgs) -> Result<u8, Failure> {
    let run = open(&args.run)?;
    let bars = Bars::new(args.run.quiet);
    if args.evaluate {
        run.evaluate(args.candidate.as_deref(), &bars).map_err(failed)?;
    } else if run.gate(args.candidate.as_deref(), &bars).map_err(failed)?.is_none() {
        bars.info("no model to gate");
    }
    Ok(0)
}

/// `tafl report`.
pub fn report(args: &ReportArgs) -> Result<u8, Failure> {
    if !is_url(&args.run) && !tafl_run::RunDir::holds_logs(&args.run) {
        return Err(bad_input(anyhow!("{} is not a run directory (no logs/)", args.run.display())));
    }
    let run = tafl_run::RunDir::open(&args.run).map_err(failed)?;
    let index = tafl_zero::report::render(&run).map_err(failed)?;
    println!("{}", index.display());
    Ok(0)
}
