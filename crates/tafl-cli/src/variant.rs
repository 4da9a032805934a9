//! Turning `--variant NAME|FILE` into a variant.

use anyhow::Context;
use tafl_rules::{PRESETS, Variant};

/// A preset by name, or a variant TOML file by path.
pub fn load(spec: &str) -> anyhow::Result<&'static Variant> {
    if let Some(v) = Variant::preset(spec) {
        return Ok(v);
    }
    let path = std::path::Path::new(spec);
    if !path.exists() {
        anyhow::bail!("unknown variant `{spec}`: not a preset ({}) nor a file", PRESETS.join(", "));
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading variant file {spec}"))?;
    let variant = Variant::from_toml(&text).with_context(|| format!("in {spec}"))?;
    Ok(variant.leak())
}
