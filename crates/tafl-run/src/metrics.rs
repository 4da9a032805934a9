//! The run's metrics events and arena results, one type each: the stages write them through
//! [`RunDir::log`](crate::RunDir::log) and the result writers, and the pipeline, `tafl report`
//! and the dashboard read them back through the same types.
//!
//! On disk an event is one JSON object: its fields, `event` (its kind, kebab-case), `time`
//! (Unix seconds) and `writer`. Readers take what older runs wrote: a missing field reads as
//! its default, and a float written as `null` (serde_json's NaN and infinities) as NaN.

use serde::{Deserialize, Deserializer, Serialize};
use tafl_rules::Side;

/// One line of the run's metrics: when, by whom, and what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Unix seconds when it was written.
    #[serde(default, deserialize_with = "float")]
    pub time: f64,
    /// The process that wrote it (`TAFL_WORKER` or host-pid).
    #[serde(default)]
    pub writer: String,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

/// What a stage of training reports, by kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The warm start's imported sources.
    WarmStart(WarmStart),
    /// A self-play session.
    Selfplay(SelfPlayMetrics),
    /// A training round.
    Optimize(RoundReport),
    /// A gate's result.
    Gate(GateResult),
    /// One evaluation match of a model.
    Eval(EvalRow),
    /// The end of an iteration.
    Iteration(IterationSummary),
}

/// The warm start: every source imported before the first self-play game.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WarmStart {
    /// The sources, in order.
    pub sources: Vec<ImportedSource>,
}

/// Games imported from one source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ImportedSource {
    /// What was imported (`human`, `alphabeta:depth=3 against alphabeta:depth=1`).
    pub source: String,
    /// Games imported.
    pub games: u64,
    /// Samples they gave.
    pub samples: u64,
    /// The games by result.
    #[serde(flatten)]
    pub results: Results,
}

/// Games by result: won by either side, or drawn. Flattened into the events that carry it, so
/// that its three fields sit beside the others on disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Results {
    /// Games won by the attackers.
    pub attacker_wins: u64,
    /// Games won by the defenders.
    pub defender_wins: u64,
    /// Drawn games (the length cap included).
    pub draws: u64,
}

impl Results {
    /// Counts a game won by `winner` (`None`: drawn).
    pub fn add(&mut self, winner: Option<Side>) {
        match winner {
            Some(Side::Attackers) => self.attacker_wins += 1,
            Some(Side::Defenders) => self.defender_wins += 1,
            None => self.draws += 1,
        }
    }

    /// All the games counted.
    #[must_use]
    pub fn games(&self) -> u64 {
        self.attacker_wins + self.defender_wins + self.draws
    }
}

impl std::fmt::Display for Results {
    /// `12/40/3`: the attackers' wins, the defenders' and the draws.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.attacker_wins, self.defender_wins, self.draws)
    }
}

/// Results of the self-play games against one opponent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpponentTally {
    /// Games against it.
    pub games: u64,
    /// Of those, games the network's side won.
    pub net_wins: u64,
    /// Of those, drawn games.
    pub draws: u64,
}

/// A self-play session's totals and rates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SelfPlayMetrics {
    /// The model that played.
    pub model: String,
    /// Games finished.
    pub games: u64,
    /// Samples recorded.
    pub samples: u64,
    /// Moves played (every search, full or cheap).
    pub moves: u64,
    /// Positions evaluated by the network.
    pub evaluations: u64,
    /// Wall seconds.
    #[serde(deserialize_with = "float")]
    pub seconds: f64,
    /// Games per second.
    #[serde(deserialize_with = "float")]
    pub games_per_s: f64,
    /// Moves per second.
    #[serde(deserialize_with = "float")]
    pub moves_per_s: f64,
    /// Network evaluations per second.
    #[serde(deserialize_with = "float")]
    pub evals_per_s: f64,
    /// Samples per second.
    #[serde(deserialize_with = "float")]
    pub samples_per_s: f64,
    /// Positions per evaluator call.
    #[serde(deserialize_with = "float")]
    pub mean_batch: f64,
    /// Mean game length in plies.
    #[serde(deserialize_with = "float")]
    pub mean_plies: f64,
    /// The games by result.
    #[serde(flatten)]
    pub results: Results,
    /// Games ended by resignation.
    pub resignations: u64,
    /// Played-out games in which a side would have resigned.
    pub playouts_with_resign: u64,
    /// Of those, games the would-be resigner did not lose.
    pub false_resignations: u64,
    /// Games against the config's opponents, all together.
    pub opponent_games: u64,
    /// Of those, games the network's side won.
    pub opponent_net_wins: u64,
    /// Of those, drawn games.
    pub opponent_draws: u64,
    /// Results against each opponent, in the order of the config's `opponent`.
    pub opponents: Vec<OpponentTally>,
}

/// A training round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RoundReport {
    /// The new model.
    pub id: String,
    /// The model it continued from.
    pub parent: String,
    /// Its iteration.
    pub iteration: u32,
    /// Steps taken.
    pub steps: u32,
    /// Samples per step.
    pub batch_size: usize,
    /// The replay window (samples).
    pub window: u64,
    /// Samples loaded from the window's shards.
    pub loaded: u64,
    /// Wall seconds to list, fetch and decode the shards of the window (`loaded` samples).
    #[serde(deserialize_with = "float")]
    pub ingest_seconds: f64,
    /// Samples on disk.
    pub samples_total: u64,
    /// Samples new since the parent was trained.
    pub new_samples: u64,
    /// Mean losses over the round.
    #[serde(deserialize_with = "float32")]
    pub loss: f32,
    /// Mean policy loss.
    #[serde(deserialize_with = "float32")]
    pub policy_loss: f32,
    /// Mean value loss.
    #[serde(deserialize_with = "float32")]
    pub value_loss: f32,
    /// Mean squared error of the ownership head (0 for a net without one, and in older metrics).
    #[serde(default, deserialize_with = "float32")]
    pub ownership_loss: f32,
    /// Mean cross-entropy of the king's last square (ditto).
    #[serde(default, deserialize_with = "float32")]
    pub king_loss: f32,
    /// Mean losses over the last tenth of the round.
    #[serde(deserialize_with = "float32")]
    pub final_loss: f32,
    /// Learning rate at the last step.
    #[serde(deserialize_with = "float")]
    pub learning_rate: f64,
    /// Wall seconds of the training steps.
    #[serde(deserialize_with = "float")]
    pub seconds: f64,
    /// Samples per second through the training steps.
    #[serde(deserialize_with = "float")]
    pub samples_per_s: f64,
    /// The step the round resumed from (0: it ran from its start).
    pub resumed_from_step: u32,
    /// Self-play games of the run when the round began.
    pub games_total: u64,
    /// Samples the new model has trained on, its ancestors' included.
    pub samples_seen: u64,
}

/// A match's result for its first player: games, score, and Elo with its 95% interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatchScore {
    /// Games played.
    pub games: u64,
    /// Wins.
    pub wins: u64,
    /// Draws.
    pub draws: u64,
    /// Losses.
    pub losses: u64,
    /// The score (wins and half the draws, per game).
    #[serde(deserialize_with = "float")]
    pub score: f64,
    /// Elo over the opponent (pentanomial, by pairs).
    #[serde(deserialize_with = "float")]
    pub elo: f64,
    /// Lower end of its 95% interval.
    #[serde(deserialize_with = "float")]
    pub elo_lower: f64,
    /// Upper end.
    #[serde(deserialize_with = "float")]
    pub elo_upper: f64,
}

impl std::fmt::Display for MatchScore {
    /// `56.2% (9W 0D 7L) Elo +43 [-80, +170]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.1}% ({}W {}D {}L) Elo {:+.0} [{:+.0}, {:+.0}]",
            100.0 * self.score,
            self.wins,
            self.draws,
            self.losses,
            self.elo,
            self.elo_lower,
            self.elo_upper
        )
    }
}

/// A gate's result (the metrics event and `arena/gate-<id>.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GateResult {
    /// The candidate.
    pub candidate: String,
    /// The best model it played.
    pub best: String,
    /// The candidate's result against the best.
    #[serde(flatten)]
    pub result: MatchScore,
    /// The SPRT's decision, if one ran: `accept-h0`, `accept-h1`, `continue`.
    pub sprt: Option<String>,
    /// The candidate became the best.
    pub passed: bool,
    /// Gating was off: promoted without games.
    pub skipped: bool,
    /// Wall seconds.
    #[serde(deserialize_with = "float")]
    pub seconds: f64,
}

/// A model's match against one evaluation opponent (the metrics event, and a row of
/// [`EvalResult`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EvalRow {
    /// The model.
    pub model: String,
    /// Its iteration.
    pub iteration: u32,
    /// The opponent's name.
    pub opponent: String,
    /// The opponent is the first of the config's `evaluate.opponents`.
    pub baseline: bool,
    /// The model's result against it.
    #[serde(flatten)]
    pub result: MatchScore,
    /// Its score as the attackers.
    #[serde(deserialize_with = "float")]
    pub score_attacking: f64,
    /// Its score as the defenders.
    #[serde(deserialize_with = "float")]
    pub score_defending: f64,
    /// Samples the model has trained on.
    pub samples_seen: u64,
    /// Self-play games of the run when the model was trained.
    pub games_total: u64,
}

/// A model's evaluation (`arena/eval-<id>.json`): every match it played.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EvalResult {
    /// The model.
    pub model: String,
    /// Its iteration.
    pub iteration: u32,
    /// Wall seconds for all the matches.
    #[serde(deserialize_with = "float")]
    pub seconds: f64,
    /// One row per opponent.
    pub matches: Vec<EvalRow>,
}

/// The end of an iteration: where the run stands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IterationSummary {
    /// The iteration.
    pub iteration: u32,
    /// Its model.
    pub model: String,
    /// The run's best model.
    pub best: String,
    /// Self-play games of the run.
    pub games_total: u64,
    /// Samples of the run.
    pub samples_total: u64,
    /// Samples the model has trained on.
    pub samples_seen: u64,
}

/// A kind of [`Event`], to pick its events out of the metrics with [`events`].
pub trait EventKind {
    /// The event as this kind, if it is one.
    fn of(event: &Event) -> Option<&Self>;
}

macro_rules! event_kind {
    ($($variant:ident($kind:ty)),*) => {$(
        impl EventKind for $kind {
            fn of(event: &Event) -> Option<&Self> {
                match event {
                    Event::$variant(e) => Some(e),
                    _ => None,
                }
            }
        }
    )*};
}

event_kind!(
    WarmStart(WarmStart),
    Selfplay(SelfPlayMetrics),
    Optimize(RoundReport),
    Gate(GateResult),
    Eval(EvalRow),
    Iteration(IterationSummary)
);

/// The events of one kind with their times, in the order of `metrics`:
/// `events::<GateResult>(&metrics)`.
pub fn events<'a, T: EventKind + 'a>(metrics: &'a [Metric]) -> impl DoubleEndedIterator<Item = (f64, &'a T)> {
    metrics.iter().filter_map(|m| T::of(&m.event).map(|e| (m.time, e)))
}

/// A float that may have been written as `null` (NaN, an infinity): NaN then.
fn float<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn float32<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.map_or(f32::NAN, |v| v as f32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_reads_back_as_written() {
        let metric = Metric {
            time: 1.5,
            writer: "host-1".into(),
            event: Event::Gate(GateResult {
                candidate: "m000002".into(),
                best: "m000001".into(),
                result: MatchScore { games: 16, wins: 9, score: 0.56, ..MatchScore::default() },
                sprt: Some("continue".into()),
                passed: true,
                ..GateResult::default()
            }),
        };
        let text = serde_json::to_string(&metric).expect("serialise");
        let value: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(value["event"], "gate");
        assert_eq!(value["candidate"], "m000002");
        assert_eq!(value["wins"], 9, "the score's fields sit beside the others: {value}");
        assert_eq!(value["time"], 1.5);
        assert_eq!(serde_json::from_str::<Metric>(&text).expect("parse"), metric);
    }

    #[test]
    fn older_and_odder_lines_still_read() {
        // An optimize line of an older run: no games_total, a NaN loss written as null, an
        // integer where a float is kept, and a field no longer written.
        let line = r#"{"event":"optimize","time":7,"writer":"w","id":"m000003","loss":null,"seconds":12,"gone":1}"#;
        let metric: Metric = serde_json::from_str(line).expect("parse");
        let Event::Optimize(round) = metric.event else { panic!("not an optimize event: {metric:?}") };
        assert_eq!(round.id, "m000003");
        assert!(round.loss.is_nan());
        assert!((round.seconds - 12.0).abs() < f64::EPSILON);
        assert_eq!(round.games_total, 0);
        assert!((metric.time - 7.0).abs() < f64::EPSILON);
        let warm = r#"{"event":"warm-start","time":1,"sources":[{"source":"human","games":860}]}"#;
        let Event::WarmStart(w) = serde_json::from_str::<Metric>(warm).expect("parse").event else {
            panic!("not a warm start")
        };
        assert_eq!(w.sources[0].games, 860);
    }

    #[test]
    fn a_selfplay_lines_results_sit_beside_its_other_fields() {
        // As every run has written it: the three counts at the top level, a rate as null.
        let line = r#"{"event":"selfplay","time":3,"model":"m000004","games":7,"moves_per_s":null,"attacker_wins":2,"defender_wins":4,"draws":1,"resignations":1}"#;
        let metric: Metric = serde_json::from_str(line).expect("parse");
        let Event::Selfplay(selfplay) = &metric.event else { panic!("not a selfplay event: {metric:?}") };
        assert_eq!(selfplay.results, Results { attacker_wins: 2, defender_wins: 4, draws: 1 });
        assert_eq!(selfplay.results.games(), selfplay.games);
        assert_eq!(selfplay.resignations, 1);
        assert!(selfplay.moves_per_s.is_nan());
        let value: serde_json::Value = serde_json::to_value(&metric).expect("serialise");
        assert_eq!(value["defender_wins"], 4, "written flat again: {value}");
        assert!(value.get("results").is_none(), "{value}");
        let mut results = Results::default();
        for winner in [Some(Side::Attackers), None, Some(Side::Defenders), Some(Side::Attackers)] {
            results.add(winner);
        }
        assert_eq!(results.to_string(), "2/1/1");
    }

    #[test]
    fn unknown_kinds_and_broken_lines_are_refused() {
        for line in [r#"{"event":"nonsense","time":1}"#, r#"{"time":1}"#, r#"{"event":"gate","#, "[]"] {
            assert!(serde_json::from_str::<Metric>(line).is_err(), "{line}");
        }
    }
}
