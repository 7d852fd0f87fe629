//! The few opensm.conf options that decide whether osmroute can route, as
//! OpenSM reads them: `key value` lines, `#` comments, the last of
//! repeated keys wins, `(null)` meaning unset.

use std::collections::HashMap;

/// One option's value and the line it is on (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub value: String,
    pub line: usize,
}

#[derive(Debug, Default)]
pub struct OpensmConf {
    /// Where it was read from, for messages.
    pub path: String,
    settings: HashMap<String, Setting>,
}

/// OpenSM's defaults for the options read here (`opensm -c FILE` writes
/// them).
pub const DEFAULT_QOS: bool = false;
pub const DEFAULT_LMC: u8 = 0;
pub const DEFAULT_MAX_OP_VLS: u8 = 5;

impl OpensmConf {
    pub fn parse(text: &str, path: &str) -> Self {
        let mut settings = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let value = value.trim();
            if value == "(null)" || value.is_empty() {
                settings.remove(key);
                continue;
            }
            settings.insert(
                key.to_string(),
                Setting {
                    value: value.to_string(),
                    line: i + 1,
                },
            );
        }
        OpensmConf {
            path: path.to_string(),
            settings,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.settings.get(key)
    }

    /// "FILE:LINE" of an option, or "FILE" when the option is not set.
    pub fn at(&self, key: &str) -> String {
        match self.get(key) {
            Some(s) => format!("{}:{}", self.path, s.line),
            None => self.path.clone(),
        }
    }

    /// `routing_engine`'s chain; empty when unset (OpenSM then uses minhop).
    pub fn routing_engines(&self) -> Vec<String> {
        self.get("routing_engine")
            .map(|s| {
                s.value
                    .split(',')
                    .map(|e| e.trim().to_string())
                    .filter(|e| !e.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `event_plugin_name`: OpenSM loads every name of the list.
    pub fn plugins(&self) -> Vec<String> {
        self.get("event_plugin_name")
            .map(|s| s.value.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// `qos`, OpenSM's way: TRUE (any case) is on, anything else off.
    pub fn qos(&self) -> bool {
        self.get("qos")
            .map_or(DEFAULT_QOS, |s| s.value.eq_ignore_ascii_case("true"))
    }

    /// A numeric option, or an error naming the line when it is not a
    /// number in `0..=max`.
    pub fn number(&self, key: &str, default: u8, max: u8) -> Result<u8, String> {
        match self.get(key) {
            None => Ok(default),
            Some(s) => match s.value.parse::<u8>() {
                Ok(v) if v <= max => Ok(v),
                _ => Err(format!(
                    "{}: {key} {} is not a number from 0 to {max}",
                    self.at(key),
                    s.value
                )),
            },
        }
    }

    /// Data VLs OpenSM programs with `max_op_vls` (its OperationalVLs code:
    /// 1 → VL0, 2 → VL0–1, 3 → VL0–3, 4 → VL0–7, 5 → VL0–14), before the
    /// ports' own capability caps it further.
    pub fn data_vls(&self) -> Result<u8, String> {
        let code = self.number("max_op_vls", DEFAULT_MAX_OP_VLS, 15)?;
        Ok(match code {
            0 | 1 => 1,
            2 => 2,
            3 => 4,
            4 => 8,
            _ => 15,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_options_with_their_lines_and_opensm_defaults() {
        let conf = OpensmConf::parse(
            "# comment\nrouting_engine dla, pssp\nqos TRUE\nlmc 2\nevent_plugin_name osmroute other\nroot_guid_file (null)\n",
            "o.conf",
        );
        assert_eq!(conf.routing_engines(), ["dla", "pssp"]);
        assert!(conf.qos());
        assert_eq!(conf.number("lmc", DEFAULT_LMC, 7), Ok(2));
        assert_eq!(conf.plugins(), ["osmroute", "other"]);
        assert_eq!(conf.at("qos"), "o.conf:3");
        assert!(conf.get("root_guid_file").is_none());
        assert_eq!(conf.data_vls(), Ok(15));
        let empty = OpensmConf::parse("", "e");
        assert!(!empty.qos() && empty.routing_engines().is_empty() && empty.plugins().is_empty());
        assert!(OpensmConf::parse("lmc nine\n", "x")
            .number("lmc", 0, 7)
            .unwrap_err()
            .contains("x:1"));
    }

    #[test]
    fn the_last_of_repeated_keys_wins() {
        let conf = OpensmConf::parse("qos TRUE\nqos FALSE\nmax_op_vls 2\n", "o");
        assert!(!conf.qos());
        assert_eq!(conf.at("qos"), "o:2");
        assert_eq!(conf.data_vls(), Ok(2));
    }
}
