//! Runs in object storage against a real S3 server: `scripts/moto-server.sh test` starts moto on
//! localhost and runs these with `TAFL_TEST_S3_ENDPOINT` (and the `AWS_*` variables) set.
//! Without it every test prints why it is skipped and passes.
//!
//! Self-play workers (each with its own cache, as on its own machine), one trainer, gate,
//! report and export on `s3://`, then on `file://`; create-only names; the trainer's fence; a corrupt
//! shard; a wrong endpoint and a missing bucket; storage down for a while under a worker.
#![cfg(feature = "s3")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tafl_run::RunDir;
use tafl_run::storage::{Location, Put, Store, put_once};

const SMOKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/smoke.toml");

/// The server's endpoint, or `None` (and a message) when the tests are to be skipped.
fn endpoint(test: &str) -> Option<String> {
    match std::env::var("TAFL_TEST_S3_ENDPOINT") {
        Ok(e) if !e.is_empty() => Some(e),
        _ => {
            assert!(
                std::env::var_os("TAFL_TEST_S3_REQUIRED").is_none(),
                "TAFL_TEST_S3_REQUIRED is set but TAFL_TEST_S3_ENDPOINT is not"
            );
            println!("{test} skipped: TAFL_TEST_S3_ENDPOINT is unset (run scripts/moto-server.sh test)");
            None
        }
    }
}

/// A new bucket on the server (moto takes an unsigned PUT).
fn bucket(endpoint: &str, name: &str) -> String {
    let bucket = format!("tafl-{name}-{}", std::process::id());
    let status = Command::new("curl")
        .args(["-sf", "-X", "PUT", &format!("{endpoint}/{bucket}")])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "creating bucket {bucket}");
    bucket
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-s3-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `tafl` as a process of its own machine: its worker id and its own cache.
fn tafl(worker: &str, cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tafl"));
    c.env("TAFL_WORKER_ID", worker).env("TAFL_CACHE_DIR", cache.join(worker));
    c
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The smoke config, without the warm start (a cluster run's trainer does not play games).
fn config(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(SMOKE).unwrap().replace("teacher = \"alphabeta:depth=1\"", "teacher = \"\"");
    let path = dir.join("smoke.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn keys(store: &dyn Store, prefix: &str, suffix: &str) -> Vec<String> {
    let mut keys: Vec<String> = store.list(prefix).unwrap().into_iter().filter(|k| k.ends_with(suffix)).collect();
    keys.sort();
    keys
}

/// Three workers, one trainer, gate and report on `run`; checks what the store then holds.
fn workers_and_a_trainer(run: &str, dir: &Path) {
    let config = config(dir);
    let config = config.to_str().unwrap();
    // The first process sets the run's config; the others read it from the store.
    let first = tafl("w0", dir)
        .args(["selfplay", "--config", config, "--run", run, "--games", "8", "--quiet"])
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let workers: Vec<_> = (1..=3)
        .map(|i| {
            tafl(&format!("w{i}"), dir)
                .args(["selfplay", "--run", run, "--games", "16", "--quiet"])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let opt = tafl("trainer", dir).args(["optimize", "--run", run, "--force", "--quiet"]).output().unwrap();
    assert!(opt.status.success(), "{}", stderr(&opt));
    assert!(stderr(&opt).contains("optimize m000001 (from m000000)"), "{}", stderr(&opt));
    let gate = tafl("trainer", dir).args(["gate", "--run", run, "--quiet"]).output().unwrap();
    assert!(gate.status.success(), "{}", stderr(&gate));
    assert!(stderr(&gate).contains("gate m000001"), "{}", stderr(&gate));
    // Workers play the best model after the gate, whichever it is.
    let after = tafl("w1", dir).args(["selfplay", "--run", run, "--games", "8", "--quiet"]).output().unwrap();
    assert!(after.status.success(), "{}", stderr(&after));
    let report = tafl("reader", dir).args(["report", "--run", run]).output().unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let index = PathBuf::from(String::from_utf8_lossy(&report.stdout).trim());
    let html = std::fs::read_to_string(&index).unwrap();
    // 8 + 3 x 16 + 8 games, from five writers' metrics merged.
    assert!(html.contains("64 self-play games"), "{html}");
    // A bundle of the run's best model, read wherever the run lies; it names the run, not where.
    let name = run.trim_end_matches('/').rsplit('/').next().unwrap();
    let bundle = dir.join(format!("bundle-{name}-{}", if run.starts_with("s3://") { "s3" } else { "file" }));
    let export = tafl("exporter", dir)
        .args(["export", "--run", run, "--out", bundle.to_str().unwrap(), "--visits", "8"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let manifest = std::fs::read_to_string(bundle.join("player.toml")).unwrap();
    assert!(
        manifest.contains(&format!("run = \"{name}\"")) && !manifest.contains(&*dir.to_string_lossy()),
        "{manifest}"
    );
    assert!(bundle.join("weights/weights.bpk").is_file() && bundle.join("net.onnx").is_file());
    // The run's best model as a player, wherever the run lies.
    let spec = format!("mcts:model={run},visits=8");
    let analyse = tafl("analyser", dir)
        .args(["analyse", "--variant", "brandubh", "--player", &spec, "3a3/3a3/3d3/aadkdaa/3d3/3a3/3a3", "a"])
        .output()
        .unwrap();
    assert!(analyse.status.success(), "{}", stderr(&analyse));

    let store = Location::parse(run).unwrap().open().unwrap();
    let shards = keys(store.as_ref(), "selfplay/", ".bin");
    for worker in ["w0", "w1", "w2", "w3"] {
        assert!(shards.iter().any(|k| k.contains(&format!("-{worker}-"))), "no shard of {worker}: {shards:?}");
    }
    assert!(keys(store.as_ref(), "models/", "meta.json").len() >= 2);
    assert_eq!(keys(store.as_ref(), "arena/", "gate-m000001.json").len(), 1);
    let writers: std::collections::BTreeSet<String> = keys(store.as_ref(), "logs/metrics/", ".json")
        .iter()
        .filter_map(|k| k.split('/').nth(2).map(str::to_string))
        .collect();
    if run.starts_with("s3://") {
        assert!(writers.len() >= 5, "{writers:?}");
    }
    // The trainer let go of its fence when it finished.
    let trainer = keys(store.as_ref(), "trainer/", "");
    assert_eq!(
        trainer.iter().filter(|k| k.contains("/fence-")).count(),
        trainer.iter().filter(|k| k.contains("/release-")).count(),
        "{trainer:?}"
    );
}

#[test]
fn workers_and_one_trainer_share_a_run_in_s3_and_in_a_file_url() {
    let Some(endpoint) = endpoint("workers_and_one_trainer_share_a_run_in_s3_and_in_a_file_url") else { return };
    let bucket = bucket(&endpoint, "share");
    let dir = scratch("share");
    workers_and_a_trainer(&format!("s3://{bucket}/runs/smoke"), &dir);
    let local = dir.join("local-run");
    workers_and_a_trainer(&format!("file://{}", local.display()), &dir);
    assert!(local.join("models/m000001/meta.json").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_are_create_only_and_a_retried_upload_is_done() {
    let Some(endpoint) = endpoint("names_are_create_only_and_a_retried_upload_is_done") else { return };
    let bucket = bucket(&endpoint, "names");
    let store = Location::parse(&format!("s3://{bucket}/p")).unwrap().open().unwrap();
    assert_eq!(store.put_if_absent("selfplay/m000000/a.bin", b"one").unwrap(), Put::Created);
    assert_eq!(store.put_if_absent("selfplay/m000000/a.bin", b"two").unwrap(), Put::Exists, "create-only");
    assert_eq!(store.get("selfplay/m000000/a.bin").unwrap().as_deref(), Some(&b"one"[..]));
    assert_eq!(
        put_once(store.as_ref(), "selfplay/m000000/a.bin", b"one").unwrap(),
        Put::Created,
        "the same bytes again: done"
    );
    assert_eq!(put_once(store.as_ref(), "selfplay/m000000/a.bin", b"two").unwrap(), Put::Exists);
    assert_eq!(store.list("selfplay/").unwrap(), ["selfplay/m000000/a.bin"]);
    assert_eq!(store.get("selfplay/none.bin").unwrap(), None);
    store.delete("selfplay/m000000/a.bin").unwrap();
    store.delete("selfplay/m000000/a.bin").unwrap();
    assert!(store.list("").unwrap().is_empty());
}

#[test]
fn a_second_trainer_is_refused_and_named() {
    let Some(endpoint) = endpoint("a_second_trainer_is_refused_and_named") else { return };
    let bucket = bucket(&endpoint, "fence");
    let dir = scratch("fence");
    let run = format!("s3://{bucket}/r");
    // This test process holds the fence (its worker id is its host and pid).
    let holder = RunDir::open(Path::new(&run)).unwrap();
    holder.claim_trainer().unwrap();
    let second = tafl("second", &dir).args(["optimize", "--run", &run, "--quiet"]).output().unwrap();
    assert_eq!(second.status.code(), Some(1));
    let message = stderr(&second);
    assert!(
        message.contains("has a trainer already") && message.contains(&format!("pid {}", std::process::id())),
        "{message}"
    );
    // Once the first lets go, the second trains (nothing to train here: it says so).
    holder.release_trainer();
    let third = tafl("second", &dir).args(["optimize", "--run", &run, "--quiet"]).output().unwrap();
    assert!(third.status.success(), "{}", stderr(&third));
    assert!(stderr(&third).contains("nothing to train"), "{}", stderr(&third));
    // A trainer that took over fences off the one before it.
    let old = RunDir::open(Path::new(&run)).unwrap();
    old.claim_trainer().unwrap();
    let taken = tafl("third", &dir).args(["optimize", "--run", &run, "--quiet", "--take-over"]).output().unwrap();
    assert!(taken.status.success(), "{}", stderr(&taken));
    let e = old.check_fence().unwrap_err().to_string();
    assert!(e.contains("took over") && e.contains("`third`"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupt_shard_is_named_and_skipped() {
    let Some(endpoint) = endpoint("a_corrupt_shard_is_named_and_skipped") else { return };
    let bucket = bucket(&endpoint, "corrupt");
    let dir = scratch("corrupt");
    let run = format!("s3://{bucket}/r");
    let config = config(&dir);
    let play = tafl("w", &dir)
        .args(["selfplay", "--config", config.to_str().unwrap(), "--run", &run, "--games", "8", "--quiet"])
        .output()
        .unwrap();
    assert!(play.status.success(), "{}", stderr(&play));
    let store = Location::parse(&run).unwrap().open().unwrap();
    store.put_if_absent("selfplay/m000000/0000000000000-evil-0001.bin", b"TAFLSHRD not really a shard").unwrap();
    let opt = tafl("trainer", &dir).args(["optimize", "--run", &run, "--force", "--quiet"]).output().unwrap();
    let message = stderr(&opt);
    assert!(opt.status.success(), "{message}");
    assert!(message.contains(&format!("s3://{bucket}/r/selfplay/m000000/0000000000000-evil-0001.bin")), "{message}");
    assert!(message.contains("optimize m000001"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `tafl selfplay` against a store that cannot work; it must fail, once, soon.
fn fails_clearly(env: &[(&str, &str)], run: &str, dir: &Path) -> String {
    let mut command = tafl("w", dir);
    command.args(["selfplay", "--run", run, "--games", "1", "--quiet"]).stdout(Stdio::null()).stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().unwrap();
    // A liveness bound, not a speed test: an endless retry loop would never end.
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(300), "still retrying after 5 minutes");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    stderr(&out)
}

#[test]
fn a_wrong_endpoint_or_bucket_is_one_clear_error() {
    let Some(endpoint) = endpoint("a_wrong_endpoint_or_bucket_is_one_clear_error") else { return };
    let dir = scratch("wrong");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let message = fails_clearly(&[("AWS_ENDPOINT_URL", &closed)], "s3://any/r", &dir);
    assert!(message.contains("cannot open the run") && message.contains("AWS_ENDPOINT_URL"), "{message}");
    assert_eq!(message.matches("cannot open the run").count(), 1, "{message}");
    let message = fails_clearly(&[("AWS_ENDPOINT_URL", &endpoint)], "s3://no-such-bucket-here/r", &dir);
    assert!(message.contains("cannot open the run") && message.contains("no-such-bucket-here"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The files in the local spools under `dir` (the workers' caches), as paths.
fn spooled(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, in_spool: bool, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let spool = in_spool || entry.file_name() == ".spool";
            if path.is_dir() {
                walk(&path, spool, out);
            } else if spool {
                out.push(path.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, false, &mut out);
    out
}

#[test]
fn storage_down_for_a_while_keeps_workers_playing() {
    let Some(endpoint) = endpoint("storage_down_for_a_while_keeps_workers_playing") else { return };
    let Ok(restart) = std::env::var("TAFL_TEST_S3_RESTART") else {
        println!("storage_down_for_a_while_keeps_workers_playing skipped: TAFL_TEST_S3_RESTART is unset");
        return;
    };
    let helper = |args: &str| {
        let status = Command::new("sh").arg("-c").arg(format!("{restart} {args}")).status().unwrap();
        assert!(status.success(), "{restart} {args}");
    };
    let bucket = bucket(&endpoint, "down");
    let dir = scratch("down");
    let run = format!("s3://{bucket}/r");
    let config = config(&dir);
    // Small shards from few games at once, so that shards keep coming rather than in bursts.
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("shard-games = 8", "shard-games = 2")
        .replace("games-in-flight = 32", "games-in-flight = 4");
    std::fs::write(&config, text).unwrap();
    let mut worker = tafl("w", &dir)
        .args(["selfplay", "--config", config.to_str().unwrap(), "--run", &run, "--games", "100000", "--quiet"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The worker's messages, read as they come (a full pipe would stop it).
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let (log, mut pipe) = (log.clone(), worker.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut pipe, &mut buf) {
                log.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let store = Location::parse(&run).unwrap().open().unwrap();
    // Liveness bounds, not speed tests: each waits for something the worker must do.
    let wait_for = |what: &str, f: &dyn Fn() -> bool| {
        let started = Instant::now();
        while !f() {
            assert!(
                started.elapsed() < Duration::from_secs(300),
                "waited 5 minutes for {what}: {}",
                log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let millis = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    wait_for("a first shard", &|| !keys(store.as_ref(), "selfplay/", ".bin").is_empty());
    // The storage stays down until the worker has played a shard it could not upload: a fixed
    // outage would hold no shard on a slow machine.
    helper("stop");
    let stopped_at = millis();
    let played_while_down = |names: Vec<String>, back_at: u64| {
        names.iter().filter(|k| k.ends_with(".bin")).any(|k| {
            let stem = k.rsplit('/').next().unwrap_or("");
            stem.split('-')
                .next()
                .and_then(|ms| ms.parse::<u64>().ok())
                .is_some_and(|ms| ms > stopped_at && ms < back_at)
        })
    };
    // Both the shard in the spool and the worker's warning: the shard reaches the spool before
    // the upload is tried, and storage back too early lets that upload succeed.
    wait_for("the worker to keep a shard played after the stop in its spool", &|| {
        played_while_down(spooled(&dir), u64::MAX) && log.lock().unwrap().contains("wait in the local spool")
    });
    let back_at = millis();
    helper(&format!("start {bucket}"));
    wait_for("a shard played while the storage was down", &|| {
        played_while_down(store.list("selfplay/").unwrap_or_default(), back_at)
    });
    assert!(worker.try_wait().unwrap().is_none(), "the worker stopped: {}", log.lock().unwrap());
    worker.kill().unwrap();
    worker.wait().unwrap();
    reader.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tafl_train_runs_and_resumes_in_s3() {
    let Some(endpoint) = endpoint("tafl_train_runs_and_resumes_in_s3") else { return };
    let bucket = bucket(&endpoint, "train");
    let dir = scratch("train");
    let run = format!("s3://{bucket}/t");
    // The whole smoke run, warm start included, stopped after one iteration and resumed by
    // another machine (its own cache).
    let first = tafl("m1", &dir)
        .args(["train", "--config", SMOKE, "--run", &run, "--iterations", "1", "--quiet"])
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let second = tafl("m2", &dir).args(["train", "--run", &run, "--quiet"]).output().unwrap();
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(stderr(&second).contains("done: 2 iterations"), "{}", stderr(&second));
    let store = Location::parse(&run).unwrap().open().unwrap();
    assert!(!keys(store.as_ref(), "selfplay/import/", ".bin").is_empty(), "the warm start's shards are in the store");
    assert_eq!(keys(store.as_ref(), "arena/", "gate-m000002.json").len(), 1);
    let report = tafl("m3", &dir).args(["report", "--run", &run]).output().unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Three `tafl optimize` started at the same moment on `run`: the one that claims the fence
/// trains; each other stops with a message that names a trainer, or trains after the first let go
/// (from its model). Two models with one parent would be two trainers at once, the second
/// throwing away the first's round.
fn trainers_at_once(run: &str, dir: &Path) {
    let config = config(dir);
    let play = tafl("w", dir)
        .args(["selfplay", "--config", config.to_str().unwrap(), "--run", run, "--games", "8", "--quiet"])
        .output()
        .unwrap();
    assert!(play.status.success(), "{}", stderr(&play));
    let trainers: Vec<_> = (1..=3)
        .map(|i| {
            tafl(&format!("t{i}"), dir)
                .args(["optimize", "--run", run, "--force", "--quiet"])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = trainers.into_iter().map(|t| t.wait_with_output().unwrap()).collect();
    let trained = outs.iter().filter(|o| o.status.success()).count();
    assert!(trained >= 1, "no trainer trained: {:?}", outs.iter().map(stderr).collect::<Vec<_>>());
    for refused in outs.iter().filter(|o| !o.status.success()) {
        let message = stderr(refused);
        assert_eq!(refused.status.code(), Some(1), "{message}");
        let named = ["`t1`", "`t2`", "`t3`"].iter().any(|t| message.contains(t));
        assert!(
            named
                && (message.contains("has a trainer already")
                    || message.contains("claimed the trainer's fence at the same moment")),
            "{message}"
        );
    }
    let store = Location::parse(run).unwrap().open().unwrap();
    let parents: Vec<String> = keys(store.as_ref(), "models/", "meta.json")
        .iter()
        .filter_map(|k| {
            let meta: serde_json::Value = serde_json::from_slice(&store.get(k).unwrap().unwrap()).unwrap();
            meta["parent"].as_str().map(str::to_string)
        })
        .collect();
    let distinct: std::collections::BTreeSet<&String> = parents.iter().collect();
    assert_eq!(parents.len(), trained, "one model per trainer that succeeded: {parents:?}");
    assert_eq!(distinct.len(), parents.len(), "two models from one parent: {parents:?}");
    let fences = keys(store.as_ref(), "trainer/", "");
    assert_eq!(fences.iter().filter(|k| k.contains("/fence-")).count(), trained, "{fences:?}");
    assert_eq!(fences.iter().filter(|k| k.contains("/release-")).count(), trained, "each let go: {fences:?}");
}

#[test]
fn trainers_started_at_once_never_fork_the_run() {
    let dir = scratch("at-once");
    // Local storage has the same create-only fence: this half runs without a server too.
    trainers_at_once(&format!("file://{}", dir.join("local-run").display()), &dir);
    if let Some(endpoint) = endpoint("trainers_started_at_once_never_fork_the_run (s3)") {
        trainers_at_once(&format!("s3://{}/r", bucket(&endpoint, "at-once")), &dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A TCP proxy in front of the S3 server that passes requests through until one uploads a shard
/// (`PUT …/selfplay/….bin`): of that one it forwards the headers and half the body, then nothing,
/// and sends the object's path. That upload is then in flight, neither done nor failed.
fn stalling_proxy(upstream: &str) -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = upstream.trim_start_matches("http://").to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(&upstream) else { continue };
            let (mut from_server, mut to_client) = (server.try_clone().unwrap(), client.try_clone().unwrap());
            std::thread::spawn(move || std::io::copy(&mut from_server, &mut to_client));
            let tx = tx.clone();
            std::thread::spawn(move || forward_requests(client, server, &tx));
        }
    });
    (format!("http://{addr}"), rx)
}

/// Forwards HTTP/1.1 requests (headers, then `Content-Length` bytes of body) from `client` to
/// `server`, and stalls the first shard upload half-way (see [`stalling_proxy`]).
fn forward_requests(
    mut client: std::net::TcpStream,
    mut server: std::net::TcpStream,
    stalled: &std::sync::mpsc::Sender<String>,
) {
    use std::io::{Read, Write};
    let mut pending = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut read_more = |pending: &mut Vec<u8>, client: &mut std::net::TcpStream| match client.read(&mut buf) {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            pending.extend_from_slice(&buf[..n]);
            true
        }
    };
    loop {
        let Some(head_end) = find(&pending, b"\r\n\r\n").map(|i| i + 4) else {
            if read_more(&mut pending, &mut client) {
                continue;
            }
            break;
        };
        let head = String::from_utf8_lossy(&pending[..head_end]).into_owned();
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .map(|(_, v)| v.trim().to_string())
            })
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
        let shard = head.starts_with("PUT ") && path.contains("/selfplay/") && path.ends_with(".bin");
        let forward = if shard { length / 2 } else { length };
        while pending.len() < head_end + forward {
            if !read_more(&mut pending, &mut client) {
                return;
            }
        }
        if server.write_all(&pending[..head_end + forward]).is_err() {
            return;
        }
        pending.drain(..head_end + forward);
        if shard {
            let _ = stalled.send(path);
            // Hold the upload until the worker dies, then drop the connection half-way.
            while read_more(&mut pending, &mut client) {
                pending.clear();
            }
            let _ = server.shutdown(std::net::Shutdown::Both);
            return;
        }
    }
    let _ = server.shutdown(std::net::Shutdown::Both);
}

#[test]
fn a_worker_killed_mid_upload_leaves_no_object_and_uploads_it_when_restarted() {
    let Some(endpoint) = endpoint("a_worker_killed_mid_upload_leaves_no_object_and_uploads_it_when_restarted") else {
        return;
    };
    let bucket = bucket(&endpoint, "midupload");
    let dir = scratch("midupload");
    let run = format!("s3://{bucket}/r");
    let config = config(&dir);
    let text = std::fs::read_to_string(&config).unwrap().replace("shard-games = 8", "shard-games = 2");
    std::fs::write(&config, text).unwrap();
    let (proxy, stalled) = stalling_proxy(&endpoint);
    let mut worker = tafl("w", &dir)
        .args(["selfplay", "--config", config.to_str().unwrap(), "--run", &run, "--games", "100000", "--quiet"])
        .env("AWS_ENDPOINT_URL", &proxy)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let path = stalled.recv_timeout(Duration::from_secs(300)).expect("a shard upload within 5 minutes");
    worker.kill().unwrap(); // SIGKILL, mid-upload
    let out = worker.wait_with_output().unwrap();
    let key = path
        .strip_prefix(&format!("/{bucket}/r/"))
        .unwrap_or_else(|| panic!("{path}: not in the run; {}", stderr(&out)))
        .to_string();
    let store = Location::parse(&run).unwrap().open().unwrap();
    // The server saw half a body and no end: no object, neither partial nor empty.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(store.get(&key).unwrap(), None, "{key} is visible after an upload cut half-way");
    assert!(!store.list("selfplay/").unwrap().contains(&key));
    // The same worker started again (its machine, its cache) uploads the shard from its spool.
    let again = tafl("w", &dir).args(["selfplay", "--run", &run, "--games", "1", "--quiet"]).output().unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let bytes = store.get(&key).unwrap().unwrap_or_else(|| panic!("{key} never arrived from the spool"));
    let shard = dir.join("uploaded.bin");
    std::fs::write(&shard, &bytes).unwrap();
    let expect = tafl_run::shard::ShardExpect { variant: "brandubh".into(), encoding_version: tafl_nn::POLICY_VERSION };
    assert!(tafl_run::shard::read_shard(&shard, &expect).is_ok(), "{key} arrived damaged");
    let _ = std::fs::remove_dir_all(&dir);
}
