//! Engine options, read from one small file (`osmroute.conf`).
//!
//! The format follows opensm.conf: one `key value` per line (an `=` between
//! them is also accepted), `#` starts a comment. Keys are `ENGINE.option`
//! (`dla.sl 0`) or `dump.option`. Everything has a default, so no file is
//! needed at all. A bad line is reported with file, line and key; the engine
//! it belongs to then declines instead of guessing.

use std::fmt;
use std::path::Path;

/// Where the plugin looks for its configuration unless
/// `OSMROUTE_CONFIG` names another file: next to opensm.conf.
pub const DEFAULT_CONFIG_PATH: &str = "/etc/opensm/osmroute.conf";
/// Environment variable that overrides `DEFAULT_CONFIG_PATH`.
pub const CONFIG_ENV: &str = "OSMROUTE_CONFIG";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DlaConfig {
    /// The SL every path uses (the paper's single SL). Default 0.
    pub sl: u8,
    /// How dla finds the Dragonfly's groups.
    pub groups: GroupDiscovery,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupDiscovery {
    /// The DLA paper's stage 1: cliques of closed neighbourhoods; needs
    /// groups of one size.
    #[default]
    Neighbourhood,
    /// Link equivalence (direct-topologies paper §2.2): also finds groups
    /// that lost switches.
    Mapping,
}

/// Options of the virtual-layer deadlock removal (`deadlock::vl_layers`),
/// shared by the engines that use it under their own key prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VlLayeringConfig {
    /// Most VLs (= virtual layers = SLs) the deadlock removal may use; 0
    /// means what the fabric offers (its operational data VLs).
    pub max_vls: u8,
    /// Spread paths over the VLs left free after deadlock removal.
    pub balance_vls: bool,
    /// When the layers run out, route the remaining paths in the last one
    /// anyway (logging loudly that deadlock freedom is not guaranteed)
    /// instead of declining.
    pub best_effort: bool,
}

impl Default for VlLayeringConfig {
    fn default() -> Self {
        VlLayeringConfig { max_vls: 0, balance_vls: true, best_effort: false }
    }
}

impl VlLayeringConfig {
    /// Sets `option` (the part of the key after `ENGINE.`); `None` when it
    /// is not one of these options.
    fn set(&mut self, option: &str, value: &str) -> Option<Result<(), String>> {
        let result = match option {
            "max_vls" => parse_num(value, 0, 15).map(|v| self.max_vls = v as u8),
            "balance_vls" => parse_bool(value).map(|v| self.balance_vls = v),
            "best_effort" => parse_bool(value).map(|v| self.best_effort = v),
            _ => return None,
        };
        Some(result)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsspConfig {
    /// Assign paths to virtual layers so that no layer has a credit loop.
    pub deadlock_removal: bool,
    pub layering: VlLayeringConfig,
    /// Seed of the order in which destinations are routed (0: LID order).
    pub seed: u64,
}

impl Default for PsspConfig {
    fn default() -> Self {
        PsspConfig { deadlock_removal: true, layering: VlLayeringConfig::default(), seed: 0 }
    }
}

/// How `layered` makes its multipath routing deadlock-free (§5.2 of the
/// Slim Fly paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayeredDeadlock {
    /// The virtual-layer pass `pssp` uses (DFSSSP's scheme): as many VLs as
    /// the paths' dependencies need.
    VlLayers,
    /// Three VL classes by hop position (first, second, third inter-switch
    /// hop), told apart with a proper switch colouring carried in the SL;
    /// any number of routing layers, paths of at most 3 switch hops.
    HopPosition,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayeredConfig {
    pub deadlock: LayeredDeadlock,
    /// Options of the `VlLayers` scheme (`layered.max_vls` also bounds the
    /// VLs `HopPosition` spreads its three classes over).
    pub layering: VlLayeringConfig,
    /// Seed of the random order within a priority level (§B.1.2).
    pub seed: u64,
}

impl Default for LayeredConfig {
    fn default() -> Self {
        LayeredConfig { deadlock: LayeredDeadlock::VlLayers, layering: VlLayeringConfig::default(), seed: 1 }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HxdorConfig {
    /// Dimension orders (Mixed DOR), one VL each; 0: as many as there are
    /// dimensions, or VLs if fewer. 1 is plain DOR on one VL.
    pub orders: u8,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MlidConfig {
    /// When OpenSM's `lmc` is below what the tree needs, raise it and ask
    /// OpenSM for a heavy sweep that reassigns every LID (disruptive:
    /// every host's LIDs change once).
    pub raise_lmc: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpConfig {
    /// Upper bound on lines in `osmroute-path-sl.txt` (one per source CA and
    /// destination LID); above it the file is skipped with a warning, since
    /// a 16k-host fabric would need 270 million lines.
    pub max_path_sl_lines: u64,
}

impl Default for DumpConfig {
    fn default() -> Self {
        DumpConfig { max_path_sl_lines: 20_000_000 }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    pub dla: DlaConfig,
    pub pssp: PsspConfig,
    pub layered: LayeredConfig,
    pub mlid: MlidConfig,
    pub hxdor: HxdorConfig,
    pub dump: DumpConfig,
}

/// One bad line of a configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub key: String,
    /// The engine whose options the key belongs to; `None` when the key
    /// names no known section, which makes every engine decline.
    pub engine: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: key '{}': {}", self.file, self.line, self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Names of the engines whose options live in the file.
const ENGINE_SECTIONS: &[&str] = &["dla", "pssp", "layered", "mlid", "hxdor"];

/// What reading a configuration yields: the options (defaults where a line
/// was bad) and every problem found.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    pub config: Config,
    pub errors: Vec<ConfigError>,
}

impl Loaded {
    /// Problems that make `engine` decline.
    pub fn errors_for<'a>(&'a self, engine: &'a str) -> impl Iterator<Item = &'a ConfigError> + 'a {
        self.errors.iter().filter(move |e| e.engine.as_deref().is_none_or(|s| s == engine || s == "dump"))
    }
}

impl Config {
    /// Parses configuration text; `source` names it in messages.
    pub fn parse(text: &str, source: &str) -> Loaded {
        let mut loaded = Loaded::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (key, value) = match line.split_once(|c: char| c == '=' || c.is_whitespace()) {
                Some((k, v)) => (k.trim(), v.trim().trim_start_matches('=').trim()),
                None => (line, ""),
            };
            let section = key.split_once('.').map(|(s, _)| s.to_string());
            let engine = section.filter(|s| ENGINE_SECTIONS.contains(&s.as_str()) || s == "dump");
            let err = |message: String| ConfigError {
                file: source.to_string(),
                line: i + 1,
                key: key.to_string(),
                engine: engine.clone(),
                message,
            };
            if let Err(message) = loaded.config.set(key, value) {
                loaded.errors.push(err(message));
            }
        }
        loaded
    }

    /// Reads `path`; a missing file means defaults. Unreadable files are
    /// an error that makes every engine decline.
    pub fn load(path: &Path) -> Loaded {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Loaded::default(),
            Err(e) => Loaded {
                config: Config::default(),
                errors: vec![ConfigError {
                    file: path.display().to_string(),
                    line: 0,
                    key: String::new(),
                    engine: None,
                    message: format!("cannot read the file: {e}; fix its permissions or point {CONFIG_ENV} elsewhere"),
                }],
            },
        }
    }

    /// The file the plugin reads: `$OSMROUTE_CONFIG` or the default path.
    pub fn location() -> std::path::PathBuf {
        std::env::var_os(CONFIG_ENV).map(Into::into).unwrap_or_else(|| DEFAULT_CONFIG_PATH.into())
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let shared = match key.split_once('.') {
            Some(("pssp", option)) => self.pssp.layering.set(option, value),
            Some(("layered", option)) => self.layered.layering.set(option, value),
            _ => None,
        };
        if let Some(result) = shared {
            return result;
        }
        match key {
            "dla.sl" => self.dla.sl = parse_num(value, 0, 15)? as u8,
            "dla.groups" => {
                self.dla.groups = match value {
                    "neighbourhood" => GroupDiscovery::Neighbourhood,
                    "mapping" => GroupDiscovery::Mapping,
                    _ => return Err(format!("value '{value}' is not neighbourhood or mapping")),
                }
            }
            "pssp.deadlock_removal" => self.pssp.deadlock_removal = parse_bool(value)?,
            "pssp.seed" => self.pssp.seed = parse_num(value, 0, u64::MAX)?,
            "layered.deadlock" => {
                self.layered.deadlock = match value {
                    "vl_layers" => LayeredDeadlock::VlLayers,
                    "hop_position" => LayeredDeadlock::HopPosition,
                    _ => return Err(format!("value '{value}' is not vl_layers or hop_position")),
                }
            }
            "layered.seed" => self.layered.seed = parse_num(value, 0, u64::MAX)?,
            "mlid.raise_lmc" => self.mlid.raise_lmc = parse_bool(value)?,
            "hxdor.orders" => self.hxdor.orders = parse_num(value, 0, 15)? as u8,
            "dump.max_path_sl_lines" => self.dump.max_path_sl_lines = parse_num(value, 0, u64::MAX)?,
            _ => return Err(format!("unknown key; known keys are: {} (see README, section Configuration)", KEYS.join(", "))),
        }
        Ok(())
    }
}

/// Every key the file may set.
pub const KEYS: &[&str] = &[
    "dla.sl",
    "dla.groups",
    "pssp.max_vls",
    "pssp.deadlock_removal",
    "pssp.balance_vls",
    "pssp.seed",
    "pssp.best_effort",
    "layered.deadlock",
    "layered.max_vls",
    "layered.balance_vls",
    "layered.best_effort",
    "layered.seed",
    "mlid.raise_lmc",
    "hxdor.orders",
    "dump.max_path_sl_lines",
];

/// TRUE/FALSE as in opensm.conf; also yes/no, on/off, 1/0, any case.
fn parse_bool(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(format!("value '{value}' is not TRUE or FALSE")),
    }
}

fn parse_num(value: &str, min: u64, max: u64) -> Result<u64, String> {
    let parsed = if let Some(hex) = value.strip_prefix("0x") {
        u64::from_str_radix(hex, 16)
    } else {
        value.parse()
    };
    match parsed {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(format!("value '{value}' is not a number from {min} to {max}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_need_no_file() {
        let loaded = Config::load(Path::new("/nonexistent/osmroute.conf"));
        assert!(loaded.errors.is_empty());
        assert_eq!(loaded.config, Config::default());
    }

    #[test]
    fn both_separators_and_comments() {
        let loaded = Config::parse("# c\ndla.sl 3\n\ndla.sl = 4 # later wins\n", "t.conf");
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(loaded.config.dla.sl, 4);
    }

    #[test]
    fn bad_value_names_key_and_file_and_hits_only_its_engine() {
        let loaded = Config::parse("dla.sl 16\n", "/etc/x.conf");
        let e = &loaded.errors[0];
        assert_eq!(e.to_string(), "/etc/x.conf:1: key 'dla.sl': value '16' is not a number from 0 to 15");
        assert_eq!(loaded.errors_for("dla").count(), 1);
        assert_eq!(loaded.errors_for("pssp").count(), 0);
    }

    #[test]
    fn pssp_options() {
        let loaded = Config::parse("pssp.max_vls 4\npssp.deadlock_removal FALSE\npssp.best_effort yes\npssp.seed 9\n", "x");
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        let p = &loaded.config.pssp;
        let l = &p.layering;
        assert_eq!((l.max_vls, p.deadlock_removal, l.balance_vls, p.seed, l.best_effort), (4, false, true, 9, true));
        let bad = Config::parse("pssp.balance_vls maybe\n", "x");
        assert!(bad.errors[0].message.contains("TRUE or FALSE"));
        assert_eq!(bad.errors_for("pssp").count(), 1);
        assert_eq!(bad.errors_for("dla").count(), 0);
    }

    #[test]
    fn layered_options() {
        let loaded = Config::parse("layered.deadlock hop_position\nlayered.max_vls 6\nlayered.seed 3\n", "x");
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        let l = &loaded.config.layered;
        assert_eq!((l.deadlock, l.layering.max_vls, l.seed), (LayeredDeadlock::HopPosition, 6, 3));
        assert_eq!(loaded.config.pssp, PsspConfig::default(), "layered keys leave pssp alone");
        let bad = Config::parse("layered.deadlock dfsssp\n", "x");
        assert!(bad.errors[0].message.contains("vl_layers or hop_position"), "{:?}", bad.errors);
        assert_eq!(bad.errors_for("layered").count(), 1);
        assert_eq!(bad.errors_for("pssp").count(), 0);
    }

    #[test]
    fn unknown_section_hits_every_engine() {
        let loaded = Config::parse("dal.sl 1\n", "x");
        assert_eq!(loaded.errors_for("dla").count(), 1);
        assert_eq!(loaded.errors_for("other").count(), 1);
        assert!(loaded.errors[0].message.contains("unknown key"));
    }
}
