//! `tafl report`: SVG plots of a run's `logs/metrics.jsonl` and an `index.html` that shows them.
//!
//! Plots: losses per iteration; Elo against each evaluation opponent over iterations, hours and
//! training samples; mean self-play game length; wins by side; self-play speed.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use tafl_run::metrics::{EvalRow, GateResult, RoundReport, SelfPlayMetrics, events};
use tafl_run::rundir::RunDir;

use crate::ZeroError;

/// A named series of points.
pub type Series = (String, Vec<(f64, f64)>);

const COLOURS: [RGBColor; 6] = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];

/// Draws `series` as lines with points into an SVG file, written whole or not at all.
///
/// # Errors
/// The plot cannot be drawn or the file cannot be written.
pub fn line_chart(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Result<(), ZeroError> {
    let mut svg = String::new();
    draw_lines(&mut svg, title, x_label, y_label, series)
        .map_err(|message| ZeroError::Plot { path: path.to_path_buf(), message })?;
    tafl_files::write_atomic(path, svg.as_bytes()).map_err(|e| ZeroError::io(path, e))
}

fn draw_lines(svg: &mut String, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let points = || series.iter().flat_map(|(_, p)| p.iter()).filter(|(x, y)| x.is_finite() && y.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points() {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let pad_x = ((x1 - x0) * 0.05).max(0.5);
    let pad_y = ((y1 - y0) * 0.1).max(0.05);
    let root = SVGBackend::with_string(svg, (800, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((x0 - pad_x)..(x1 + pad_x), (y0 - pad_y)..(y1 + pad_y))
        .map_err(|e| err(&e))?;
    chart.configure_mesh().x_desc(x_label).y_desc(y_label).draw().map_err(|e| err(&e))?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let pts: Vec<(f64, f64)> = pts.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled()))).map_err(|e| err(&e))?;
    }
    if !series.is_empty() {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// A plot's file name in `report/` and its caption on the page.
type Plot = (&'static str, &'static str);

/// Renders the plots and `index.html` into `report/`; returns the path of `index.html`.
///
/// # Errors
/// The folder or a file cannot be written.
pub fn render(run: &RunDir) -> Result<PathBuf, ZeroError> {
    let out = run.report_dir();
    fs::create_dir_all(&out).map_err(|e| ZeroError::io(&out, e))?;
    let metrics = run.metrics();
    let rounds: Vec<&RoundReport> = events(&metrics).map(|(_, r)| r).collect();
    let evals: Vec<(f64, &EvalRow)> = events(&metrics).collect();
    let selfplay: Vec<&SelfPlayMetrics> = events(&metrics).map(|(_, m)| m).collect();
    // Hours since the run's first event: the wall-clock learning curve (stops and restarts
    // included, as a user lived them).
    let start = metrics.iter().map(|m| m.time).filter(|t| t.is_finite()).fold(f64::INFINITY, f64::min);
    let hours = |time: f64| (time - start) / 3600.0;
    let mut plots = vec![loss_plot(&out, &rounds)?];
    plots.extend(elo_plots(&out, &evals, &hours)?);
    plots.extend(selfplay_plots(&out, &selfplay)?);

    let mut html = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>tafl run report</title>\n<style>body{font-family:sans-serif;max-width:860px;margin:auto}img{width:100%;border:1px solid #ccc}td,th{padding:2px 8px;text-align:right}</style></head><body>\n",
    );
    let _ = writeln!(html, "<h1>Run {}</h1>", escape(&run.location()));
    let _ = writeln!(
        html,
        "<p>{} iterations, {} self-play games, best model {}</p>",
        rounds.len(),
        selfplay.iter().map(|m| m.games).sum::<u64>(),
        escape(&run.best_model().unwrap_or_default())
    );
    if let Some((_, last)) = events::<GateResult>(&metrics).next_back() {
        let _ = writeln!(
            html,
            "<p>Last gate: {} vs {}: score {:.3}, passed {}</p>",
            escape(&last.candidate),
            escape(&last.best),
            last.result.score,
            last.passed
        );
    }
    for (file, caption) in &plots {
        let _ = writeln!(html, "<h2>{caption}</h2>\n<img src=\"{file}\" alt=\"{caption}\">");
    }
    html += &evaluation_table(&evals, &hours);
    html += "</body></html>\n";
    let index = out.join("index.html");
    tafl_files::write_atomic(&index, html.as_bytes()).map_err(|e| ZeroError::io(&index, e))?;
    Ok(index)
}

/// The training losses per iteration.
fn loss_plot(out: &Path, rounds: &[&RoundReport]) -> Result<Plot, ZeroError> {
    let series = |loss: fn(&RoundReport) -> f32, label: &str| -> Series {
        (label.to_string(), rounds.iter().map(|r| (f64::from(r.iteration), f64::from(loss(r)))).collect())
    };
    line_chart(
        &out.join("losses.svg"),
        "Training loss per iteration",
        "iteration",
        "loss",
        &[series(|r| r.loss, "total"), series(|r| r.policy_loss, "policy"), series(|r| r.value_loss, "value")],
    )?;
    Ok(("losses.svg", "Training losses (mean over each round)"))
}

/// Elo against each evaluation opponent by iteration, by hours and by samples trained on.
fn elo_plots(out: &Path, evals: &[(f64, &EvalRow)], hours: &dyn Fn(f64) -> f64) -> Result<Vec<Plot>, ZeroError> {
    let mut opponents: Vec<&str> = Vec::new();
    for (_, e) in evals {
        if !opponents.contains(&e.opponent.as_str()) {
            opponents.push(&e.opponent);
        }
    }
    let elo_series = |x: &dyn Fn(f64, &EvalRow) -> f64| -> Vec<Series> {
        opponents
            .iter()
            .map(|&o| {
                let rows = evals.iter().filter(|(_, e)| e.opponent == o);
                (format!("vs {o}"), rows.map(|&(t, e)| (x(t, e), e.result.elo.clamp(-800.0, 800.0))).collect())
            })
            .collect()
    };
    let by_iteration = |_: f64, e: &EvalRow| f64::from(e.iteration);
    let by_hours = |t: f64, _: &EvalRow| hours(t);
    let by_samples = |_: f64, e: &EvalRow| e.samples_seen as f64;
    // An evaluation's x coordinate from its time and row.
    type XOf<'a> = &'a dyn Fn(f64, &EvalRow) -> f64;
    // (file, title, x axis, x of a row, caption)
    let elo_plots: [(&str, &str, &str, XOf, &str); 3] = [
        (
            "elo.svg",
            "Elo of the best model against each opponent",
            "iteration",
            &by_iteration,
            "Elo against the evaluation opponents, by iteration (clamped to ±800)",
        ),
        (
            "elo-hours.svg",
            "Elo against hours of training",
            "hours since the run started",
            &by_hours,
            "Elo against the evaluation opponents, by wall-clock hours",
        ),
        (
            "elo-samples.svg",
            "Elo against training samples",
            "samples seen in training",
            &by_samples,
            "Elo against the evaluation opponents, by samples trained on",
        ),
    ];
    let mut plots = Vec::new();
    for (file, title, x_label, x, caption) in elo_plots {
        line_chart(&out.join(file), title, x_label, "Elo", &elo_series(x))?;
        plots.push((file, caption));
    }
    Ok(plots)
}

/// Self-play's game length, wins by side and speed, along the games played.
fn selfplay_plots(out: &Path, selfplay: &[&SelfPlayMetrics]) -> Result<Vec<Plot>, ZeroError> {
    let mut games = 0;
    let xs: Vec<f64> = selfplay
        .iter()
        .map(|m| {
            games += m.games;
            games as f64
        })
        .collect();
    let along = |f: &dyn Fn(&SelfPlayMetrics) -> f64| -> Vec<(f64, f64)> {
        selfplay.iter().zip(&xs).map(|(m, &x)| (x, f(m))).collect()
    };
    line_chart(
        &out.join("game-length.svg"),
        "Self-play game length",
        "self-play games",
        "mean plies",
        &[("mean plies".into(), along(&|m| m.mean_plies))],
    )?;
    let share = |count: fn(&SelfPlayMetrics) -> u64| move |m: &SelfPlayMetrics| count(m) as f64 / m.games.max(1) as f64;
    line_chart(
        &out.join("sides.svg"),
        "Self-play results by side",
        "self-play games",
        "share of games",
        &[
            ("attackers win".into(), along(&share(|m| m.results.attacker_wins))),
            ("defenders win".into(), along(&share(|m| m.results.defender_wins))),
            ("draw".into(), along(&share(|m| m.results.draws))),
        ],
    )?;
    line_chart(
        &out.join("speed.svg"),
        "Self-play speed",
        "self-play games",
        "per second",
        &[
            ("net evaluations/s".into(), along(&|m| m.evals_per_s)),
            ("moves/s x 10".into(), along(&|m| 10.0 * m.moves_per_s)),
            ("games/min x 10".into(), along(&|m| 600.0 * m.games_per_s)),
        ],
    )?;
    Ok(vec![
        ("game-length.svg", "Mean self-play game length"),
        ("sides.svg", "Self-play wins by side"),
        ("speed.svg", "Self-play speed"),
    ])
}

/// The evaluations as an HTML table (nothing when there are none).
fn evaluation_table(evals: &[(f64, &EvalRow)], hours: &dyn Fn(f64) -> f64) -> String {
    if evals.is_empty() {
        return String::new();
    }
    let mut html = String::from(
        "<h2>Evaluations</h2>\n<table><tr><th>hours</th><th>model</th><th>iteration</th><th>opponent</th><th>games</th><th>score</th><th>Elo</th><th>95%</th></tr>\n",
    );
    for &(time, e) in evals {
        let _ = writeln!(
            html,
            "<tr><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:+.0}</td><td>[{:+.0}, {:+.0}]</td></tr>",
            hours(time),
            escape(&e.model),
            e.iteration,
            escape(&e.opponent),
            e.result.games,
            e.result.score,
            e.result.elo,
            e.result.elo_lower,
            e.result.elo_upper
        );
    }
    html + "</table>\n"
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
