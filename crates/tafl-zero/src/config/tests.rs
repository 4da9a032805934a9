//! Tests of [`super`]: kept beside it in a file of their own so that `config.rs` stays a map of
//! the code.

use super::*;

#[test]
fn shipped_configs_parse() {
    for (name, text) in [
        ("cpu", DEFAULT_CONFIG),
        ("smoke", include_str!("../../../../configs/smoke.toml")),
        ("gpu", include_str!("../../../../configs/gpu.toml")),
        ("levers/surprise", include_str!("../../../../configs/levers/surprise.toml")),
        ("levers/tactical", include_str!("../../../../configs/levers/tactical.toml")),
        ("levers/spread", include_str!("../../../../configs/levers/spread.toml")),
        ("levers/ownership", include_str!("../../../../configs/levers/ownership.toml")),
        ("levers/sides", include_str!("../../../../configs/levers/sides.toml")),
        ("levers/b6c64", include_str!("../../../../configs/levers/b6c64.toml")),
        ("levers/past", include_str!("../../../../configs/levers/past.toml")),
        ("levers/abdefence", include_str!("../../../../configs/levers/abdefence.toml")),
    ] {
        let config = RunConfig::from_toml(text).unwrap_or_else(|e| panic!("configs/{name}.toml: {e}"));
        config.variant(None).unwrap_or_else(|e| panic!("configs/{name}.toml: {e}"));
    }
}

#[test]
fn unknown_keys_are_named() {
    let e = RunConfig::from_toml("[selfplay]\ngames-in-flite = 3\n").unwrap_err().to_string();
    assert!(e.contains("games-in-flite"), "{e}");
    let e = RunConfig::from_toml("[selfplay.search]\nvistis = 3\n").unwrap_err().to_string();
    assert!(e.contains("vistis"), "{e}");
    let e = RunConfig::from_toml("[nett]\n").unwrap_err().to_string();
    assert!(e.contains("nett"), "{e}");
}

#[test]
fn round_trips_through_toml() {
    let config = RunConfig::default_config();
    assert_eq!(RunConfig::from_toml(&config.to_toml()).unwrap(), config);
}

#[test]
fn bad_values_name_the_key() {
    let e = RunConfig::from_toml("[optimize]\nbatch-size = 0\n").unwrap_err().to_string();
    assert!(e.contains("optimize.batch-size"), "{e}");
    let e = RunConfig::from_toml("[optimize]\nresume-every-seconds = -1.0\n").unwrap_err().to_string();
    assert!(e.contains("optimize.resume-every-seconds"), "{e}");
    let e = RunConfig::from_toml("[warm-start]\nrecords = [\"human\"]\nsteps = 0\n").unwrap_err().to_string();
    assert!(e.contains("warm-start.steps"), "{e}");
    for scale in ["0.0", "-1.0", "nan", "inf", "2000.0"] {
        let e =
            RunConfig::from_toml(&format!("[selfplay]\nattacker-visits-scale = {scale}\n")).unwrap_err().to_string();
        assert!(e.contains("selfplay.attacker-visits-scale"), "{scale}: {e}");
    }
    assert_eq!(
        RunConfig::from_toml("[selfplay]\nattacker-visits-scale = 4.0\n").unwrap().selfplay.attacker_visits_scale,
        4.0
    );
    for spread in ["0.5", "-1.0", "nan", "inf", "2000.0"] {
        let e =
            RunConfig::from_toml(&format!("[selfplay]\nattacker-visits-spread = {spread}\n")).unwrap_err().to_string();
        assert!(e.contains("selfplay.attacker-visits-spread"), "{spread}: {e}");
    }
    for share in ["-0.1", "1.5", "nan"] {
        let e =
            RunConfig::from_toml(&format!("[selfplay]\npolicy-surprise-weight = {share}\n")).unwrap_err().to_string();
        assert!(e.contains("selfplay.policy-surprise-weight"), "{share}: {e}");
    }
    let config = RunConfig::from_toml("[selfplay]\npolicy-surprise-weight = 0.5\n").unwrap();
    assert_eq!(config.selfplay.policy_surprise_weight, 0.5);
}

/// Every float of `value` with its dotted key, tables walked in order.
fn float_keys(value: &toml::Value, path: &str, out: &mut Vec<String>) {
    match value {
        toml::Value::Float(_) => out.push(path.to_string()),
        toml::Value::Table(table) => {
            for (key, v) in table {
                float_keys(v, &if path.is_empty() { key.clone() } else { format!("{path}.{key}") }, out);
            }
        }
        _ => {}
    }
}

fn set(value: &mut toml::Value, path: &str, to: toml::Value) {
    let mut at = value;
    for part in path.split('.') {
        at = at.get_mut(part).unwrap_or_else(|| panic!("{path}"));
    }
    *at = to;
}

#[test]
fn every_float_must_be_finite_and_names_its_key() {
    let mut config = RunConfig::default_config();
    config.gate.sprt = Some(Sprt { elo0: 0.0, elo1: 30.0, alpha: 0.05, beta: 0.05 });
    let base: toml::Value = toml::from_str(&config.to_toml()).unwrap();
    let mut keys = Vec::new();
    float_keys(&base, "", &mut keys);
    // Every float key of the config is walked (the search's and the SPRT's too).
    assert_eq!(keys.len(), config.floats().len(), "{keys:?}");
    for key in &keys {
        assert!(config.floats().iter().any(|(k, _)| k == key), "{key} is not checked");
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut value = base.clone();
            set(&mut value, key, toml::Value::Float(bad));
            let text = toml::to_string(&value).unwrap();
            let e = RunConfig::from_toml(&text).map(|_| ()).unwrap_err().to_string();
            assert!(e.contains(key.as_str()) && e.contains("finite"), "{key} = {bad}: {e}");
        }
    }
    let e = RunConfig::from_toml("[optimize]\nlearning-rate = nan\n").unwrap_err().to_string();
    assert_eq!(e, "`optimize.learning-rate`: must be a finite number, found NaN");
}

#[test]
fn sizes_are_bounded_and_the_bound_itself_is_accepted() {
    let mut config = RunConfig::default_config();
    // The attackers' own visits are bounded apart (below).
    config.selfplay.attacker_visits_scale = 1.0;
    let base: toml::Value = toml::from_str(&config.to_toml()).unwrap();
    for (key, _, max) in config.sizes() {
        let with = |n: u64| {
            let mut value = base.clone();
            let n = toml::Value::Integer(i64::try_from(n).unwrap());
            set(&mut value, key, n.clone());
            // The bound of a minimum is the bound of its maximum too.
            for (low, high) in
                [("optimize.window-min", "optimize.window-max"), ("optimize.min-steps", "optimize.max-steps")]
            {
                if key == low {
                    set(&mut value, high, n.clone());
                }
            }
            RunConfig::from_toml(&toml::to_string(&value).unwrap())
        };
        with(max).unwrap_or_else(|e| panic!("{key} = {max}: {e}"));
        let e = with(max + 1).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(&format!("at most {max}")), "{key} = {}: {e}", max + 1);
    }
    // The two aborts, refused by key.
    let e = RunConfig::from_toml("[selfplay]\nfull-visits = 4294967295\n").unwrap_err().to_string();
    assert_eq!(e, "`selfplay.full-visits`: must be at most 1000000, found 4294967295");
    let e = RunConfig::from_toml("[net]\nchannels = 1000000\n").unwrap_err().to_string();
    assert_eq!(e, "`net.channels`: must be at most 1024, found 1000000");
    // The attackers' visits are the full visits scaled: bounded too.
    assert!(RunConfig::from_toml("[selfplay]\nfull-visits = 1000\nattacker-visits-scale = 1000.0\n").is_ok());
    let e = RunConfig::from_toml("[selfplay]\nfull-visits = 1001\nattacker-visits-scale = 1000.0\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("selfplay.attacker-visits-scale") && e.contains("1000000"), "{e}");
}

#[test]
fn a_selfplay_opponent_is_checked_by_key() {
    let config = RunConfig::from_toml(
        "[selfplay]\nopponent = \"alphabeta:depth=3\"\nopponent-fraction = 0.25\nopponent-side = \"defenders\"\n",
    )
    .unwrap();
    assert_eq!((config.selfplay.opponent_fraction, config.selfplay.opponent_side), (0.25, OpponentSide::Defenders));
    for (text, key) in [
        ("opponent = \"alphabeta:depth=3\"\nopponent-fraction = 1.5", "selfplay.opponent-fraction"),
        ("opponent-fraction = 0.5", "selfplay.opponent-fraction"),
        // A spec is read with the config: TOML's message shows the line and says what is wrong.
        ("opponent = \":depth=3\"\nopponent-fraction = 0.5", "empty player spec"),
        ("opponent-side = \"kings\"", "opponent-side"),
        ("opponent = [\"alphabeta:depth=1\", \":depth=3\"]\nopponent-fraction = 0.5", "opponent = ["),
        ("opponent = \"alphabeta:dpeth=3\"\nopponent-fraction = 0.5", "no key `dpeth`"),
        ("opponent = 3", "opponent"),
    ] {
        let e = RunConfig::from_toml(&format!("[selfplay]\n{text}\n")).unwrap_err().to_string();
        assert!(e.contains(key), "{text}: {e}");
    }
}

#[test]
fn opponents_are_one_spec_or_an_array_and_round_trip() {
    let one = RunConfig::from_toml("[selfplay]\nopponent = \"alphabeta:depth=3\"\nopponent-fraction = 0.5\n").unwrap();
    let texts = |c: &RunConfig| c.selfplay.opponent.specs().iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(texts(&one), ["alphabeta:depth=3"]);
    let none = RunConfig::from_toml("[selfplay]\nopponent = \"\"\n").unwrap();
    assert!(none.selfplay.opponent.is_empty());
    let many = RunConfig::from_toml(
        "[selfplay]\nopponent = [\"alphabeta:depth=1\", \"alphabeta:depth=3\"]\nopponent-fraction = 0.5\n",
    )
    .unwrap();
    assert_eq!(texts(&many), ["alphabeta:depth=1", "alphabeta:depth=3"]);
    for config in [one, none, many] {
        assert_eq!(RunConfig::from_toml(&config.to_toml()).unwrap(), config);
    }
}
