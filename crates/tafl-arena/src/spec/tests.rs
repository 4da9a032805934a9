use super::*;

fn spec(s: &str) -> PlayerSpec {
    s.parse().unwrap()
}

fn error(s: &str) -> SpecError {
    s.parse::<PlayerSpec>().unwrap_err()
}

#[test]
fn parses_kinds_and_settings() {
    let s = spec("alphabeta:depth=3,time=1s");
    let limits = Limits { depth: Some(3), time: Some(Duration::from_secs(1)), ..Limits::default() };
    assert_eq!(s.kind(), &PlayerKind::AlphaBeta(limits.clone()));
    assert_eq!(s.limits(), limits);
    assert_eq!(spec("random").kind(), &PlayerKind::Random { seed: 0 });
    assert_eq!(spec("random:seed=7,name=r7").name(), "r7");
    assert_eq!(spec("random:seed=7").name(), "random:seed=7");
    let mcts = spec("mcts:model=none,visits=8,gumbel=no,time=250ms");
    let search = NetSearch {
        visits: Some(8),
        gumbel: Some(false),
        time: Some(Duration::from_millis(250)),
        ..NetSearch::default()
    };
    assert_eq!(mcts.kind(), &PlayerKind::Mcts { model: None, search: search.clone() });
    assert_eq!(mcts.limits(), Limits { visits: Some(8), time: Some(Duration::from_millis(250)), ..Limits::default() });
    assert_eq!(
        spec("builtin:guard=2").kind(),
        &PlayerKind::Builtin(NetSearch { guard: Some(2), ..NetSearch::default() })
    );
}

#[test]
fn flags_take_yes_and_no_and_nothing_else() {
    let gumbel = |v: &str| format!("builtin:gumbel={v}").parse::<PlayerSpec>().map(|s| s.kind().net_search().cloned());
    for (text, value) in [("true", true), ("yes", true), ("1", true), ("false", false), ("no", false), ("0", false)] {
        assert_eq!(gumbel(text).unwrap().unwrap().gumbel, Some(value));
    }
    let e = gumbel("maybe").unwrap_err();
    assert!(e.to_string().contains("gumbel=maybe") && e.to_string().contains("true or false"), "{e}");
}

#[test]
fn a_spec_built_in_code_reads_back() {
    let search = NetSearch { visits: Some(8), time: Some(Duration::from_millis(1500)), ..NetSearch::default() };
    let made = PlayerSpec::new(PlayerKind::Mcts { model: Some("runs/a".into()), search }, "m1");
    assert_eq!(made.to_string(), "mcts:model=runs/a,visits=8,time=1500ms,name=m1");
    assert_eq!(made, spec(&made.to_string()));
    let comma =
        PlayerSpec::new(PlayerKind::Mcts { model: Some("runs/a,b".into()), search: NetSearch::default() }, "m2");
    assert_eq!(comma.kind(), &PlayerKind::Mcts { model: Some("runs/a,b".into()), search: NetSearch::default() });
    let depth_1 = PlayerSpec::from(PlayerKind::AlphaBeta(Limits { depth: Some(1), ..Limits::default() }));
    assert_eq!(depth_1, spec("alphabeta:depth=1"));
    assert_eq!(PlayerSpec::from(PlayerKind::Random { seed: 0 }), spec("random"));
    let renamed = spec("uci:movetime=250,cmd=engine --a 1,2").with_name("e");
    assert_eq!(renamed.to_string(), "uci:movetime=250ms,name=e,cmd=engine --a 1,2");
    assert_eq!(renamed, spec(&renamed.to_string()));
    for text in ["alphabeta:depth=3,time=1.5s", "random:seed=9", "htp:tcp=true,timeout=5s,cmd=x y", "builtin:visits=4"]
    {
        let renamed = spec(text).with_name("n");
        assert_eq!(renamed, spec(&renamed.to_string()), "{text}");
        assert_eq!(spec(text).to_string(), text);
    }
}

#[test]
fn specs_read_and_write_as_strings() {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Config {
        player: PlayerSpec,
    }
    let config: Config = toml::from_str("player = \"alphabeta:depth=2\"").unwrap();
    assert_eq!(config.player, spec("alphabeta:depth=2"));
    assert_eq!(toml::to_string(&config).unwrap().trim(), "player = \"alphabeta:depth=2\"");
    let e = toml::from_str::<Config>("player = \"alphabeta:dpeth=2\"").unwrap_err();
    assert!(e.to_string().contains("dpeth"), "{e}");
}

#[test]
fn cmd_takes_the_rest() {
    let s = spec("htp:timeout=5s,cmd=engine --a 1,2 --b");
    let htp = HtpSpec { cmd: "engine --a 1,2 --b".into(), timeout: Some(Duration::from_secs(5)), tcp: false };
    assert_eq!(s.kind(), &PlayerKind::Htp(htp));
}

#[test]
fn errors_name_the_bad_key() {
    assert_eq!(error(""), SpecError::Empty);
    assert!(matches!(error("random:seed"), SpecError::NotKeyValue { .. }));
    assert!(matches!(error("random:seed=1,seed=2"), SpecError::Duplicate { .. }));
    assert!(error("alphabeta:dpeth=3").to_string().contains("dpeth"));
    assert!(error("alphabeta:depth=three").to_string().contains("depth=three"));
    assert!(error("alphabeta:depth=65").to_string().contains("depth=65"));
    assert!(error("mcts:batch=1025,model=none").to_string().contains("batch=1025"));
    assert!(error("builtin:guard=9").to_string().contains("guard=9"));
    assert!(matches!(error("nobody:depth=1"), SpecError::UnknownKind { .. }));
    assert!(matches!(error("mcts:visits=100"), SpecError::Missing { .. }));
    assert!(matches!(error("htp"), SpecError::Missing { .. }));
    assert!(matches!(error("htp:tcp=maybe,cmd=x"), SpecError::BadValue { .. }));
    let e = netless_player(&spec("mcts:model=none"), 0).err().unwrap();
    assert!(matches!(e, SpecError::UnknownKind { .. }), "{e}");
    let e = netless_player(&spec("htp:cmd=/nonexistent/engine"), 0).err().unwrap();
    assert!(matches!(e, SpecError::Build { .. }), "{e}");
}

#[test]
fn a_directory_is_a_bundle() {
    let dir = std::env::temp_dir();
    let s = spec(&format!("{}:visits=9", dir.display()));
    let search = NetSearch { visits: Some(9), ..NetSearch::default() };
    assert_eq!(s.kind(), &PlayerKind::Bundle { dir: dir.clone(), search });
    assert!(matches!(error(&format!("{}:model=x", dir.display())), SpecError::UnknownKey { .. }));
}

#[test]
fn durations() {
    assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
    assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
    assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
    assert_eq!(parse_duration("3"), Some(Duration::from_secs(3)));
    assert_eq!(parse_duration("-1s"), None);
    assert_eq!(parse_duration("soon"), None);
    // Finite but too long for a Duration (found by fuzzing): refused, not a panic.
    assert_eq!(parse_duration("1e300"), None);
    assert_eq!(parse_duration("1e30m"), None);
    assert!("alphabeta:time=1e300".parse::<PlayerSpec>().is_err());
    for d in [Duration::from_millis(1500), Duration::from_micros(1500), Duration::from_secs(7)] {
        assert_eq!(parse_duration(&duration_text(d)), Some(d), "{d:?}");
    }
}

#[test]
fn builds_netless_players() {
    assert!(netless_player(&spec("random:seed=7"), 3).unwrap().name().starts_with("random:seed="));
    assert!(netless_player(&spec("alphabeta:depth=2"), 0).is_ok());
}

#[test]
fn uci_specs_take_a_move_time_nodes_and_a_timeout() {
    let movetime = |v: &str| -> Result<Option<Duration>, SpecError> {
        match format!("uci:movetime={v},cmd=e").parse::<PlayerSpec>()?.kind {
            PlayerKind::Uci(uci) => Ok(uci.movetime),
            _ => unreachable!(),
        }
    };
    assert_eq!(movetime("250"), Ok(Some(Duration::from_millis(250))));
    assert_eq!(movetime("1.5s"), Ok(Some(Duration::from_millis(1500))));
    assert!(matches!(spec("uci:cmd=e").kind, PlayerKind::Uci(UciSpec { movetime: None, .. })));
    for bad in ["0", "0s", "soon", "3600001", "2h", "-5"] {
        let e = movetime(bad).unwrap_err();
        assert!(e.to_string().contains(&format!("movetime={bad}")), "{e}");
    }
    assert!(matches!(error("uci"), SpecError::Missing { .. }));
    assert!(matches!(error("uci:depth=3,cmd=e"), SpecError::UnknownKey { .. }));
    assert!(error(&format!("uci:nodes={},cmd=e", MAX_SEARCH_COUNT + 1)).to_string().contains("nodes="));
    assert!(error("uci:timeout=forever,cmd=e").to_string().contains("timeout=forever"));
    let e = netless_player(&spec("uci:movetime=100,cmd=/nonexistent/engine --net x"), 0).err().expect("an error");
    assert!(matches!(&e, SpecError::Build { message, .. } if message.contains("/nonexistent/engine")), "{e}");
}

#[test]
fn a_uci_spec_builds_an_engine_that_plays() {
    // A scripted engine (the `cmd` is split at spaces, so the script is a file).
    let dir = std::env::temp_dir().join(format!("tafl-spec-uci-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("engine.sh");
    let log = dir.join("log");
    let text = format!(
        "while read -r cmd rest; do echo \"$cmd $rest\" >> '{}'; case \"$cmd\" in uci) echo uciok;; isready) echo readyok;; go) echo 'bestmove d1d4';; quit) echo bye; exit 0;; esac; done\n",
        log.display()
    );
    std::fs::write(&script, text).unwrap();
    let s = spec(&format!("uci:movetime=50,nodes=7,timeout=5s,name=scripted,cmd=sh {}", script.display()));
    let mut p = netless_player(&s, 0).unwrap();
    assert_eq!(p.name(), "scripted");
    let game = tafl_rules::Game::new(tafl_rules::Variant::copenhagen());
    assert_eq!(p.choose(&game, &Limits::default()).unwrap().mv.to_string(), "d1-d4");
    drop(p);
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(sent.contains("go movetime 50 nodes 7"), "{sent}");
    let _ = std::fs::remove_dir_all(&dir);
}
