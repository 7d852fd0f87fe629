//! Engine options, read from one small file (`osmroute.conf`).
//!
//! The format follows opensm.conf: one `key value` per line (an `=` between
//! them is also accepted), `#` starts a comment. Keys are `SECTION.option`:
//! the section is an engine's name (`dla.sl 0`) or `dump`. Everything has a
//! default, so no file is needed at all.
//!
//! This module only splits the file into sections and finds what is wrong
//! with the file as a whole (bad lines, keys given twice, unknown
//! sections). Each engine owns its section: it lists its options
//! (`OptionSpec`) and reads them with `Section`, which reports a bad value
//! or an unknown key with file, line and key. An engine whose section has
//! a problem declines instead of guessing.

mod section;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use section::{OptionSpec, Section};

/// Where the plugin looks for its configuration unless
/// `OSMROUTE_CONFIG` names another file: next to opensm.conf.
pub const DEFAULT_CONFIG_PATH: &str = "/etc/opensm/osmroute.conf";
/// Environment variable that overrides `DEFAULT_CONFIG_PATH`.
pub const CONFIG_ENV: &str = "OSMROUTE_CONFIG";
/// Sections that belong to no engine.
pub const DUMP_SECTION: &str = "dump";

/// One bad line (or a file that cannot be used).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub key: String,
    /// The section the problem belongs to; `None` when it concerns the
    /// whole file (which makes every engine decline).
    pub section: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.key.is_empty()) {
            (0, _) => write!(f, "{}: {}", self.file, self.message),
            (line, true) => write!(f, "{}:{line}: {}", self.file, self.message),
            (line, false) => write!(
                f,
                "{}:{line}: key '{}': {}",
                self.file, self.key, self.message
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// One `key value` line of a section.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// The part after `SECTION.`.
    option: String,
    value: String,
    line: usize,
}

/// A configuration file split into sections, with the problems of the
/// file as a whole. Sections are read by their owners (`Section`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// The file, for messages ("" for built-in defaults).
    source: String,
    sections: BTreeMap<String, Vec<Entry>>,
    errors: Vec<ConfigError>,
}

impl Settings {
    /// No file: every option at its default.
    pub fn defaults() -> Self {
        Settings::default()
    }

    /// Parses configuration text; `source` names it in messages.
    /// `known_sections` are the names a key may start with.
    pub fn parse(text: &str, source: &str, known_sections: &[&str]) -> Self {
        let mut settings = Settings {
            source: source.to_string(),
            ..Settings::default()
        };
        let mut first_line: BTreeMap<String, usize> = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let (key, value) = match content.split_once(|c: char| c == '=' || c.is_whitespace()) {
                Some((k, v)) => (k.trim(), v.trim().trim_start_matches('=').trim()),
                None => (content, ""),
            };
            let error = |section: Option<&str>, message: String| ConfigError {
                file: source.to_string(),
                line,
                key: key.to_string(),
                section: section.map(str::to_string),
                message,
            };
            let Some((section, option)) = key
                .split_once('.')
                .filter(|(s, o)| !s.is_empty() && !o.is_empty())
            else {
                settings.errors.push(error(
                    None,
                    format!(
                        "keys are SECTION.option (e.g. dla.sl); sections are {}",
                        known_sections.join(", ")
                    ),
                ));
                continue;
            };
            if !known_sections.contains(&section) {
                settings.errors.push(error(
                    None,
                    format!(
                        "unknown section '{section}'; sections are {} (see docs/configuration.md)",
                        known_sections.join(", ")
                    ),
                ));
                continue;
            }
            if value.is_empty() {
                settings
                    .errors
                    .push(error(Some(section), "has no value".to_string()));
                continue;
            }
            if let Some(first) = first_line.insert(key.to_string(), line) {
                settings.errors.push(error(
                    Some(section),
                    format!("is set twice (first on line {first}); keep one line per key"),
                ));
                continue;
            }
            settings
                .sections
                .entry(section.to_string())
                .or_default()
                .push(Entry {
                    option: option.to_string(),
                    value: value.to_string(),
                    line,
                });
        }
        settings
    }

    /// Reads `path`. A missing file means defaults only when `explicit` is
    /// false (the built-in default location); a file someone named must
    /// exist. Anything but a regular file (a FIFO, a directory) is an
    /// error rather than something to block on.
    pub fn load(path: &Path, explicit: bool, known_sections: &[&str]) -> Self {
        let source = path.display().to_string();
        let fail = |message: String| Settings {
            source: source.clone(),
            sections: BTreeMap::new(),
            errors: vec![ConfigError {
                file: source.clone(),
                line: 0,
                key: String::new(),
                section: None,
                message,
            }],
        };
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => Settings::defaults(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => fail(format!(
                "no such file; {CONFIG_ENV} (or --config) names it: create it, or unset {CONFIG_ENV} for the defaults"
            )),
            Err(e) => fail(format!("cannot read the file: {e}; fix its permissions or point {CONFIG_ENV} elsewhere")),
            Ok(meta) if !meta.is_file() => {
                fail("is not a regular file; the configuration must be a plain text file".to_string())
            }
            Ok(_) => match std::fs::read_to_string(path) {
                Ok(text) => Settings::parse(&text, &source, known_sections),
                Err(e) => fail(format!("cannot read the file: {e}; fix its permissions or point {CONFIG_ENV} elsewhere")),
            },
        }
    }

    /// The file the plugin reads, and whether it was named explicitly
    /// (`$OSMROUTE_CONFIG`) rather than being the default location.
    pub fn location() -> (PathBuf, bool) {
        match std::env::var_os(CONFIG_ENV) {
            Some(p) => (p.into(), true),
            None => (DEFAULT_CONFIG_PATH.into(), false),
        }
    }

    /// The file this came from ("" for built-in defaults).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Problems of the file as a whole and of `section`'s lines that the
    /// file alone shows (duplicates, empty values); bad values and
    /// unknown options come from reading the section.
    pub fn errors_for<'a>(
        &'a self,
        section: &'a str,
    ) -> impl Iterator<Item = &'a ConfigError> + 'a {
        self.errors
            .iter()
            .filter(move |e| e.section.as_deref().is_none_or(|s| s == section))
    }

    /// Every problem the file itself shows.
    pub fn errors(&self) -> &[ConfigError] {
        &self.errors
    }

    /// The lines of `name`'s section, for its owner to read.
    pub fn section<'a>(&'a self, name: &'a str) -> Section<'a> {
        Section::new(
            &self.source,
            name,
            self.sections.get(name).map(Vec::as_slice).unwrap_or(&[]),
        )
    }

    /// Every key set in the file, as `SECTION.option`.
    pub fn keys(&self) -> impl Iterator<Item = String> + '_ {
        self.sections
            .iter()
            .flat_map(|(s, entries)| entries.iter().map(move |e| format!("{s}.{}", e.option)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["dla", "pssp", "dump"];

    #[test]
    fn defaults_need_no_file_but_a_named_one_must_exist() {
        let missing = Path::new("/nonexistent/osmroute.conf");
        assert_eq!(Settings::load(missing, false, KNOWN), Settings::defaults());
        let named = Settings::load(missing, true, KNOWN);
        assert!(
            named.errors()[0].to_string().contains("no such file"),
            "{:?}",
            named.errors()
        );
        assert_eq!(named.errors_for("dla").count(), 1, "every engine declines");
    }

    #[test]
    fn a_fifo_or_directory_is_refused_without_reading() {
        let dir = std::env::temp_dir().join(format!("osmroute-config-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = Settings::load(&dir, true, KNOWN);
        assert!(
            s.errors()[0].message.contains("not a regular file"),
            "{:?}",
            s.errors()
        );
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|st| st.success());
        assert!(made, "mkfifo {} failed", fifo.display());
        // Opening a FIFO for reading would block until a writer came.
        let s = Settings::load(&fifo, true, KNOWN);
        assert!(
            s.errors()[0].message.contains("not a regular file"),
            "{:?}",
            s.errors()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn both_separators_and_comments() {
        let s = Settings::parse(
            "# c\ndla.sl = 4 # trailing\n\npssp.seed 3\n",
            "t.conf",
            KNOWN,
        );
        assert!(s.errors().is_empty(), "{:?}", s.errors());
        assert_eq!(s.keys().collect::<Vec<_>>(), vec!["dla.sl", "pssp.seed"]);
    }

    #[test]
    fn duplicates_unknown_sections_and_bare_words_are_errors() {
        let s = Settings::parse(
            "dla.sl 3\ndla.sl 4\ndal.sl 1\nfoo\ndla.groups\n",
            "/etc/x.conf",
            KNOWN,
        );
        let messages: Vec<String> = s.errors().iter().map(ToString::to_string).collect();
        assert!(
            messages[0].starts_with("/etc/x.conf:2: key 'dla.sl': is set twice (first on line 1)"),
            "{messages:?}"
        );
        assert!(
            messages[1].contains("unknown section 'dal'"),
            "{messages:?}"
        );
        assert!(
            messages[2].contains("keys are SECTION.option"),
            "{messages:?}"
        );
        assert!(
            messages[3].contains("'dla.groups': has no value"),
            "{messages:?}"
        );
        // Unknown sections and bare words hit every engine; the rest theirs.
        assert_eq!(s.errors_for("dla").count(), 4);
        assert_eq!(s.errors_for("pssp").count(), 2);
    }
}
