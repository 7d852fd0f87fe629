//! The commented example osmroute.conf: every option of every engine and
//! of the dump section, with its default and help, generated from the
//! options themselves so that it cannot fall behind them. The Debian
//! package installs it as /etc/opensm/osmroute.conf.

use std::fmt::Write;

use crate::config::{OptionSpec, CONFIG_ENV, DEFAULT_CONFIG_PATH, DUMP_SECTION};
use crate::dumps::bundle;

use super::ENGINES;

/// Text wrapped to `width` columns behind `prefix`.
fn wrapped(out: &mut String, prefix: &str, text: &str, width: usize) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && prefix.len() + line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{prefix}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{prefix}{line}");
    }
}

fn section(
    out: &mut String,
    name: &str,
    summary: &str,
    options: impl Iterator<Item = &'static OptionSpec>,
) {
    let _ = writeln!(out, "\n## {name}");
    wrapped(out, "## ", summary, 76);
    for o in options {
        let _ = writeln!(out, "#");
        wrapped(out, "#   ", o.help, 76);
        let _ = writeln!(out, "#{name}.{} {}", o.key, o.default);
    }
}

/// The example file: every line commented out, so installing it changes
/// nothing; uncommenting a line and editing its value sets that option.
pub fn example_configuration() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# osmroute.conf: options of osmroute's routing engines for OpenSM."
    );
    let _ = writeln!(out, "#");
    wrapped(
        &mut out,
        "# ",
        &format!(
            "The plugin reads {DEFAULT_CONFIG_PATH}, or the file ${CONFIG_ENV} names, at every routing pass where \
             the file changed. One `engine.option value` per line; `#` starts a comment. Every option below is \
             shown commented out with its default: uncomment a line to change it. An engine whose lines have a \
             mistake declines (OpenSM then uses the next engine of routing_engine), and `osmroute doctor` names \
             the line."
        ),
        76,
    );
    for e in ENGINES {
        section(&mut out, e.name, e.summary, e.option_specs());
    }
    section(
        &mut out,
        DUMP_SECTION,
        "the files the plugin writes into OpenSM's dump_files_dir",
        bundle::OPTIONS.iter(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::engines::config_sections;

    #[test]
    fn the_example_names_every_option_and_uncommented_gives_the_defaults() {
        let text = example_configuration();
        assert!(
            text.lines().all(|l| l.is_empty() || l.starts_with('#')),
            "installing it must change nothing"
        );
        let uncommented: String = text
            .lines()
            .filter_map(|l| l.strip_prefix('#'))
            .filter(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|k| k.contains('.') && !k.ends_with('.'))
            })
            .filter(|l| !l.starts_with(' ') && !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let settings = Settings::parse(&uncommented, "example", &config_sections());
        assert!(settings.errors().is_empty(), "{:?}", settings.errors());
        let mut count = 0;
        for e in ENGINES {
            for o in e.option_specs() {
                assert!(
                    uncommented.contains(&format!("{}.{} {}\n", e.name, o.key, o.default)),
                    "{}.{}",
                    e.name,
                    o.key
                );
                count += 1;
            }
            assert!(
                (e.build)(&settings.section(e.name)).is_ok(),
                "{} reads its defaults",
                e.name
            );
        }
        assert_eq!(uncommented.lines().count(), count + bundle::OPTIONS.len());
    }
}
