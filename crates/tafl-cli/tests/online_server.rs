//! `tafl online` against the real game server, `hnefatafl-server` 6.4.1 from crates.io, started
//! on localhost. Ignored by default: `scripts/hnefatafl-server.sh test` installs the server once
//! (cached) and runs them. The server binary is `$TAFL_HNEFATAFL_SERVER`, else the script's
//! cache path. The server always listens on port 49152, so the tests take turns.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

static ONE_SERVER: Mutex<()> = Mutex::new(());

fn server_binary() -> PathBuf {
    if let Ok(path) = std::env::var("TAFL_HNEFATAFL_SERVER") {
        return PathBuf::from(path);
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let cache = std::env::var("TAFL_CACHE").unwrap_or_else(|_| format!("{home}/.cache/tafl"));
    Path::new(&cache).join("hnefatafl-server-6.4.1/bin/hnefatafl-server")
}

/// A server on localhost:49152 for one test.
struct Server {
    child: Child,
    _turn: MutexGuard<'static, ()>,
}

impl Server {
    fn start() -> Server {
        let turn = ONE_SERVER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let binary = server_binary();
        assert!(binary.is_file(), "{} is missing: run scripts/hnefatafl-server.sh install", binary.display());
        let data = std::env::temp_dir().join(format!("tafl-online-server-{}", std::process::id()));
        std::fs::create_dir_all(&data).unwrap();
        let child = Command::new(&binary)
            .args(["--skip-the-data-file", "--skip-advertising-updates"])
            .current_dir(&data)
            .env("HOME", &data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut child = child;
        thread::sleep(Duration::from_millis(300));
        // A server that cannot bind the port exits; another one would answer in its place.
        assert!(child.try_wait().unwrap().is_none(), "the server exited: is another one listening on port 49152?");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect("127.0.0.1:49152").is_err() {
            assert!(Instant::now() < deadline, "the server does not listen on 49152");
            thread::sleep(Duration::from_millis(50));
        }
        Server { child, _turn: turn }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running `tafl online` with its log lines.
struct Online {
    child: Child,
    lines: Receiver<String>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Online {
    /// `tafl online` as `username` (password `pw`, the account created if new) on `host`.
    fn log_in(host: &str, username: &str, args: &[&str]) -> Online {
        let account = ["--host", host, "--username", username, "--password", "pw", "--create-account"];
        Online::start(&[&account[..], args].concat())
    }

    fn start(args: &[&str]) -> Online {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tafl"))
            .arg("online")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        let log = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&log);
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                keep.lock().unwrap().push(line.clone());
                let _ = tx.send(line);
            }
        });
        Online { child, lines, log }
    }

    /// Waits for `n` offers and returns their ids.
    fn offers(&self, n: usize) -> Vec<String> {
        let mut ids = Vec::new();
        while ids.len() < n {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no offer:\n{}", self.text()));
            if let Some(rest) = line.split("offered game ").nth(1) {
                ids.push(rest.split(':').next().unwrap().to_string());
            }
        }
        ids
    }

    fn finish(mut self, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                thread::sleep(Duration::from_millis(100));
                let text = self.text();
                assert!(status.success(), "tafl online failed ({status}):\n{text}");
                return text;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("tafl online did not finish in {limit:?}:\n{}", self.text());
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    fn text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }
}

fn records_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-online-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Every record in `dir` replays with `tafl replay` (exit code 0); returns how many.
fn replay_records(dir: &Path, size: u8) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let mut replay = Command::new(env!("CARGO_BIN_EXE_tafl"));
        replay.arg("replay");
        if size == 13 {
            replay.args(["--variant", "copenhagen-13"]);
        }
        let out = replay.arg(&path).output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}{}",
            path.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        n += 1;
    }
    n
}

/// Alpha-beta offers two games (one per side), random joins both; both finish.
fn two_games(board: &str, time: &str, ab: &str, limit: Duration) -> (String, String, PathBuf) {
    let _server = Server::start();
    let ab_records = records_dir(&format!("ab{board}"));
    let rnd_records = records_dir(&format!("rnd{board}"));
    let common = ["--games", "2", "--concurrent", "2"];
    let ab_dir = ab_records.to_string_lossy().to_string();
    let mut args: Vec<&str> = common.to_vec();
    args.extend(["--player", ab, "--create", "both", "--board", board, "--time", time, "--records", &ab_dir]);
    let alphabeta = Online::log_in("127.0.0.1", "ai-ab", &args);
    let ids = alphabeta.offers(2);
    let rnd_dir = rnd_records.to_string_lossy().to_string();
    let mut args: Vec<&str> = common.to_vec();
    args.extend(["--player", "random:seed=5", "--records", &rnd_dir, "--join", &ids[0], "--join", &ids[1]]);
    let random = Online::log_in("127.0.0.1", "ai-random", &args);
    let ab_log = alphabeta.finish(limit);
    let rnd_log = random.finish(Duration::from_secs(30));
    let size: u8 = board.parse().unwrap();
    assert_eq!(replay_records(&ab_records, size), 2, "{ab_log}");
    assert_eq!(replay_records(&rnd_records, size), 2, "{rnd_log}");
    assert!(ab_log.contains("we play the attackers against ai-random, rated"), "{ab_log}");
    assert!(ab_log.contains("we play the defenders against ai-random, rated"), "{ab_log}");
    assert!(ab_log.contains("2 games:"), "{ab_log}");
    let _ = std::fs::remove_dir_all(&rnd_records);
    (ab_log, rnd_log, ab_records)
}

#[test]
#[ignore = "needs hnefatafl-server (scripts/hnefatafl-server.sh test)"]
fn rated_games_both_colours_on_11x11() {
    let (ab, _, dir) = two_games("11", "15m+10s", "alphabeta:depth=1", Duration::from_secs(300));
    assert!(ab.contains("budget"), "{ab}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
#[ignore = "needs hnefatafl-server (scripts/hnefatafl-server.sh test)"]
fn rated_games_both_colours_on_13x13() {
    let (_, _, dir) = two_games("13", "15m+10s", "alphabeta:depth=1", Duration::from_secs(300));
    let _ = std::fs::remove_dir_all(dir);
}

/// No game of the log was lost, and our clock before every move of both games stayed above zero.
fn assert_two_games_never_lost_on_time(log: &str) {
    assert!(!log.contains(": lost as"), "{log}");
    let lowest: Vec<f64> =
        log.split("our lowest clock ").skip(1).map(|t| t.split('s').next().unwrap().parse().unwrap()).collect();
    assert_eq!(lowest.len(), 2, "{log}");
    assert!(lowest.iter().all(|&s| s > 0.0), "{lowest:?}");
}

#[test]
#[ignore = "needs hnefatafl-server (scripts/hnefatafl-server.sh test)"]
fn a_short_clock_is_never_lost_on_time() {
    // Alpha-beta without a depth: the clock alone decides how long each move takes.
    let (ab, _, dir) = two_games("11", "30s+1s", "alphabeta", Duration::from_secs(600));
    // A loss on time would show as a lost game (random never beats alpha-beta otherwise), and
    // our clock before every move stays above zero.
    assert_two_games_never_lost_on_time(&ab);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
#[ignore = "needs hnefatafl-server (scripts/hnefatafl-server.sh test)"]
fn the_shipped_net_plays_both_colours_on_a_short_clock() {
    // The trained player of `builtin` (MCTS over the net), its time per move from the clock.
    let (log, _, dir) = two_games("11", "30s+1s", "builtin", Duration::from_secs(600));
    assert_two_games_never_lost_on_time(&log);
    let _ = std::fs::remove_dir_all(dir);
}

/// Forwards connections to the server and cuts them all once, after the server has sent
/// `cut_after` `generate_move` lines.
fn cutting_proxy(cut_after: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(AtomicUsize::new(0));
    let cuts = Arc::new(AtomicUsize::new(0));
    let cuts_out = Arc::clone(&cuts);
    thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect("127.0.0.1:49152") else { return };
            let (mut c_read, mut s_write) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            thread::spawn(move || {
                let _ = std::io::copy(&mut c_read, &mut s_write);
                let _ = s_write.shutdown(Shutdown::Both);
            });
            let (seen, cuts) = (Arc::clone(&seen), Arc::clone(&cuts));
            thread::spawn(move || {
                let mut to_client = client;
                for line in BufReader::new(server.try_clone().unwrap()).lines().map_while(Result::ok) {
                    if to_client.write_all(format!("{line}\n").as_bytes()).is_err() {
                        break;
                    }
                    if line.contains("generate_move") && seen.fetch_add(1, Ordering::SeqCst) + 1 == cut_after {
                        cuts.fetch_add(1, Ordering::SeqCst);
                        break;
                    }
                }
                let _ = to_client.shutdown(Shutdown::Both);
                let _ = server.shutdown(Shutdown::Both);
            });
        }
    });
    (address, cuts_out)
}

#[test]
#[ignore = "needs hnefatafl-server (scripts/hnefatafl-server.sh test)"]
fn a_dropped_connection_mid_game_resumes() {
    let _server = Server::start();
    let (proxy, cuts) = cutting_proxy(6);
    let records = records_dir("drop");
    let dir = records.to_string_lossy().to_string();
    let alphabeta = Online::log_in(
        &proxy,
        "ai-ab",
        &[
            "--player",
            "alphabeta:depth=2",
            "--create",
            "attacker",
            "--games",
            "1",
            "--time",
            "5m+5s",
            "--records",
            &dir,
        ],
    );
    let ids = alphabeta.offers(1);
    let random = Online::log_in(
        "127.0.0.1",
        "ai-random",
        &["--player", "random:seed=9", "--join", &ids[0], "--games", "1", "--records", &dir],
    );
    let ab = alphabeta.finish(Duration::from_secs(300));
    random.finish(Duration::from_secs(30));
    assert_eq!(cuts.load(Ordering::SeqCst), 1, "{ab}");
    assert!(ab.contains("connection lost"), "{ab}");
    assert!(ab.contains("resumed:"), "{ab}");
    assert!(ab.contains("1 games:"), "{ab}");
    assert_eq!(replay_records(&records, 11), 1, "{ab}");
    let _ = std::fs::remove_dir_all(&records);
}

/// `tafl online` refuses bad input before connecting (exit 2), and gives up on a server that is
/// not there when told to (exit 1). No server needed.
#[test]
fn bad_options_and_no_server_fail_clearly() {
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_tafl")).arg("online").args(args).output().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["--username", "ai--x", "--create", "both"], "--username"),
        (&["--username", "ai-x"], "nothing to play"),
        (&["--username", "ai-x", "--create", "both", "--time", "soon"], "--time soon"),
        (&["--username", "ai-x", "--create", "both", "--board", "9"], "--board"),
        (&["--username", "ai-x", "--create", "kings"], "--create kings"),
    ];
    for (args, says) in cases {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let host = format!("127.0.0.1:{port}");
    let out =
        run(&["--host", &host, "--username", "ai-x", "--create", "both", "--player", "random", "--max-retries", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot reach"), "{err}");
    let help = Command::new(env!("CARGO_BIN_EXE_tafl")).args(["online", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Examples:"));
}

#[test]
#[ignore = "needs hnefatafl-server (scripts/hnefatafl-server.sh test)"]
fn ctrl_c_resigns_the_game_in_progress_when_asked() {
    let _server = Server::start();
    let records = records_dir("stop");
    let dir = records.to_string_lossy().to_string();
    // Slow moves (a quarter of a minute each), so that the game is surely in progress.
    let alphabeta = Online::log_in(
        "127.0.0.1",
        "ai-ab",
        &["--player", "alphabeta:depth=30", "--create", "defender", "--on-stop", "resign", "--records", &dir],
    );
    let ids = alphabeta.offers(1);
    let random = Online::log_in(
        "127.0.0.1",
        "ai-random",
        &["--player", "random", "--join", &ids[0], "--games", "1", "--records", &dir],
    );
    loop {
        let line = alphabeta.lines.recv_timeout(Duration::from_secs(60)).unwrap();
        if line.contains("started:") {
            break;
        }
    }
    let sent = Command::new("kill").args(["-INT", &alphabeta.child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let ab = alphabeta.finish(Duration::from_secs(60));
    let rnd = random.finish(Duration::from_secs(30));
    assert!(ab.contains("stop requested: resigning"), "{ab}");
    assert!(ab.contains("lost as the defenders"), "{ab}");
    assert!(rnd.contains("won as the attackers"), "{rnd}");
    let _ = std::fs::remove_dir_all(&records);
}
