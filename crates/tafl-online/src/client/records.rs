//! The end of a game: the summary `run` returns, the log line, and the record written to
//! `game-ID.csv` in the archive format (so `tafl replay` can check it).

use std::path::PathBuf;

use tafl_rules::Side;

use super::{Active, Client, GameSummary, time_text};
use crate::protocol::GameId;

impl Client {
    pub(super) fn finish(&mut self, id: GameId, winner: Option<Side>) {
        let Some(mut a) = self.active.remove(&id) else { return };
        a.referee.server_ended(winner, a.resigned);
        for note in &a.referee.notes {
            self.log.line(&format!("game {id}: referee: {note}"));
        }
        let record = self.write_record(id, &a, winner);
        let result = match winner {
            Some(w) if w == a.side => "won",
            Some(_) => "lost",
            None => "drawn",
        };
        let lowest =
            a.lowest_ms.map_or_else(String::new, |ms| format!(", our lowest clock {:.1}s", ms as f64 / 1000.0));
        let path = record.as_ref().map_or_else(String::new, |p| format!(", record {}", p.display()));
        self.say(&format!(
            "game {id}: over after {} plies: {result} as the {} against {}{lowest}{path}",
            a.referee.ply(),
            a.side,
            a.opponent
        ));
        self.finished.push(GameSummary {
            id,
            side: a.side,
            opponent: a.opponent.clone(),
            winner,
            plies: a.referee.ply(),
            record,
            notes: a.referee.notes.clone(),
            lowest_clock_ms: a.lowest_ms,
        });
    }

    fn write_record(&self, id: GameId, a: &Active, winner: Option<Side>) -> Option<PathBuf> {
        let dir = self.options.records.as_ref()?;
        let variant = if a.size == 13 { " --variant copenhagen-13" } else { "" };
        let (attacker, defender) = if a.side == Side::Attackers {
            (&self.options.username, &a.opponent)
        } else {
            (&a.opponent, &self.options.username)
        };
        let mut text = format!(
            "# tafl online: game {id} on {}, {attacker} (attackers) against {defender} (defenders), {}, {}, {}x{}\n# check it with: tafl replay{variant} FILE\n",
            self.options.address,
            if a.rated { "rated" } else { "unrated" },
            time_text(a.time),
            a.size,
            a.size
        );
        for note in &a.referee.notes {
            text.push_str(&format!("# referee: {note}\n"));
        }
        text.push_str(&a.referee.archive_line(Some(winner)));
        text.push('\n');
        let path = dir.join(format!("game-{id}.csv"));
        let written = std::fs::create_dir_all(dir).and_then(|()| tafl_files::write_atomic(&path, text.as_bytes()));
        match written {
            Ok(()) => Some(path),
            Err(e) => {
                self.say(&format!("game {id}: cannot write its record to {}: {e}", path.display()));
                None
            }
        }
    }
}
