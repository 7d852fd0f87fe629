//! Reading one section of the configuration: typed values with their
//! defaults, and the options a section's owner does not know.

use super::{ConfigError, Entry};

/// One option of a section: its key (without the section), its default as
/// it would be written in the file, and what it means. The lists of these
/// are the documentation of the file (docs/configuration.md, example file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    pub key: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

/// The lines of one section, as its owner reads them.
#[derive(Clone, Copy, Debug)]
pub struct Section<'a> {
    file: &'a str,
    name: &'a str,
    entries: &'a [Entry],
}

impl<'a> Section<'a> {
    pub(super) fn new(file: &'a str, name: &'a str, entries: &'a [Entry]) -> Self {
        Section {
            file,
            name,
            entries,
        }
    }

    /// A section with no lines: every option at its default.
    pub fn empty(name: &'a str) -> Self {
        Section {
            file: "",
            name,
            entries: &[],
        }
    }

    pub fn name(&self) -> &str {
        self.name
    }

    /// The value the file gives `spec` and its line, or the default (line 0).
    fn value(&self, spec: &OptionSpec) -> (&'a str, usize) {
        match self.entries.iter().find(|e| e.option == spec.key) {
            Some(e) => (e.value.as_str(), e.line),
            None => (spec.default, 0),
        }
    }

    fn error(&self, spec: &OptionSpec, line: usize, message: String) -> ConfigError {
        let file = if line == 0 {
            "built-in default"
        } else {
            self.file
        };
        ConfigError {
            file: file.to_string(),
            line,
            key: format!("{}.{}", self.name, spec.key),
            section: Some(self.name.to_string()),
            message,
        }
    }

    /// TRUE/FALSE as in opensm.conf; also yes/no, on/off, 1/0, any case.
    pub fn flag(&self, spec: &OptionSpec) -> Result<bool, ConfigError> {
        let (value, line) = self.value(spec);
        match value.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(true),
            "false" | "no" | "off" | "0" => Ok(false),
            _ => Err(self.error(spec, line, format!("value '{value}' is not TRUE or FALSE"))),
        }
    }

    /// A decimal or 0x-hexadecimal number in `min..=max`.
    pub fn number<T: TryFrom<u64>>(
        &self,
        spec: &OptionSpec,
        min: u64,
        max: u64,
    ) -> Result<T, ConfigError> {
        let (value, line) = self.value(spec);
        let parsed = match value.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => value.parse(),
        };
        parsed
            .ok()
            .filter(|v| (min..=max).contains(v))
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| {
                self.error(
                    spec,
                    line,
                    format!("value '{value}' is not a number from {min} to {max}"),
                )
            })
    }

    /// One of the named `choices`.
    pub fn choice<T: Copy>(
        &self,
        spec: &OptionSpec,
        choices: &[(&str, T)],
    ) -> Result<T, ConfigError> {
        let (value, line) = self.value(spec);
        choices
            .iter()
            .find(|(name, _)| *name == value)
            .map(|&(_, v)| v)
            .ok_or_else(|| {
                let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
                self.error(
                    spec,
                    line,
                    format!("value '{value}' is not one of {}", names.join(", ")),
                )
            })
    }

    /// The first option set in the file that none of `specs` names.
    pub fn check_known(&self, specs: &[&[OptionSpec]]) -> Result<(), ConfigError> {
        let known = || specs.iter().flat_map(|group| group.iter());
        match self
            .entries
            .iter()
            .find(|e| !known().any(|s| s.key == e.option))
        {
            None => Ok(()),
            Some(e) => {
                let keys: Vec<String> = known()
                    .map(|s| format!("{}.{}", self.name, s.key))
                    .collect();
                Err(ConfigError {
                    file: self.file.to_string(),
                    line: e.line,
                    key: format!("{}.{}", self.name, e.option),
                    section: Some(self.name.to_string()),
                    message: format!(
                        "unknown key; {}'s keys are {} (see docs/configuration.md)",
                        self.name,
                        if keys.is_empty() {
                            "none".to_string()
                        } else {
                            keys.join(", ")
                        }
                    ),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Settings;
    use super::*;

    const SL: OptionSpec = OptionSpec {
        key: "sl",
        default: "0",
        help: "",
    };
    const ON: OptionSpec = OptionSpec {
        key: "on",
        default: "TRUE",
        help: "",
    };
    const MODE: OptionSpec = OptionSpec {
        key: "mode",
        default: "a",
        help: "",
    };

    #[test]
    fn values_defaults_and_errors_name_file_line_and_key() {
        let s = Settings::parse(
            "x.sl 16\nx.on no\nx.mode b\nx.colour red\n",
            "/etc/x.conf",
            &["x"],
        );
        let sec = s.section("x");
        let e = sec.number::<u8>(&SL, 0, 15).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/etc/x.conf:1: key 'x.sl': value '16' is not a number from 0 to 15"
        );
        assert!(!sec.flag(&ON).unwrap());
        assert_eq!(sec.choice(&MODE, &[("a", 1), ("b", 2)]).unwrap(), 2);
        let unknown = sec.check_known(&[&[SL, ON, MODE]]).unwrap_err();
        assert!(unknown.to_string().starts_with(
            "/etc/x.conf:4: key 'x.colour': unknown key; x's keys are x.sl, x.on, x.mode"
        ));
        let empty = Section::empty("x");
        assert_eq!(empty.number::<u8>(&SL, 0, 15).unwrap(), 0);
        assert!(empty.flag(&ON).unwrap());
        assert_eq!(
            empty
                .number::<u8>(
                    &OptionSpec {
                        key: "hex",
                        default: "0x10",
                        help: ""
                    },
                    0,
                    255
                )
                .unwrap(),
            16
        );
    }
}
