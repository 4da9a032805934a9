#![no_main]
//! Run configs (`--config FILE`, a run's `config.toml`): parsing never panics; a config that
//! loads writes itself back as TOML that loads to the same config, and builds its net's config.
use libfuzzer_sys::fuzz_target;
use tafl_zero::RunConfig;

fuzz_target!(|text: &str| {
    let Ok(config) = RunConfig::from_toml(text) else { return };
    let written = config.to_toml();
    match RunConfig::from_toml(&written) {
        Ok(again) => assert_eq!(again, config, "a config changed through to_toml:\n{written}"),
        Err(e) => panic!("a config that loaded does not load once written back: {e}\n{written}"),
    }
    // A variant named by path would be read from disk: only presets here.
    if let Some(variant) = tafl_rules::Variant::preset(&config.run.variant) {
        let _ = config.net_config(variant.size());
    }
});
