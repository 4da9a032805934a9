//! Player specs in run configs: `[selfplay] opponent` ([`Opponents`]: one spec, an array of
//! them, or `""` for none) and optional specs such as `[warm-start] teacher` (`""` for none),
//! parsed where the TOML is read.

use serde::{Deserialize, Serialize};
use tafl_arena::PlayerSpec;

/// `opponent` of `[selfplay]`: the opponents' player specs, written as one string (`""` for
/// none, as older run configs say) or as an array of strings, one drawn per game.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opponents(pub Vec<PlayerSpec>);

impl Opponents {
    /// No opponent.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The specs, in the order written.
    #[must_use]
    pub fn specs(&self) -> &[PlayerSpec] {
        &self.0
    }
}

impl Serialize for Opponents {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [] => serializer.serialize_str(""),
            [one] => one.serialize(serializer),
            many => many.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Opponents {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Specs;
        impl<'de> serde::de::Visitor<'de> for Specs {
            type Value = Opponents;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a player spec or an array of player specs")
            }
            fn visit_str<E: serde::de::Error>(self, spec: &str) -> Result<Opponents, E> {
                Ok(Opponents(optional_spec_text(spec)?.into_iter().collect()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Opponents, A::Error> {
                let mut specs = Vec::new();
                while let Some(spec) = seq.next_element::<PlayerSpec>()? {
                    specs.push(spec);
                }
                Ok(Opponents(specs))
            }
        }
        deserializer.deserialize_any(Specs)
    }
}

/// A spec where `""` says "none" (as older run configs do).
fn optional_spec_text<E: serde::de::Error>(text: &str) -> Result<Option<PlayerSpec>, E> {
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|e| E::custom(format!("`{text}`: {e}")))
}

/// An optional player spec, written `""` when absent.
pub(super) mod optional_spec {
    use serde::{Deserialize, Deserializer, Serializer};
    use tafl_arena::PlayerSpec;

    pub fn serialize<S: Serializer>(spec: &Option<PlayerSpec>, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&spec.as_ref().map(ToString::to_string).unwrap_or_default())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<PlayerSpec>, D::Error> {
        super::optional_spec_text(&String::deserialize(deserializer)?)
    }
}
