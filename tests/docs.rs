//! The README documents every option the engines read, with its default:
//! the table under "Configuration" is checked against the options
//! themselves, so it cannot fall behind.

use osmroute_core::config::DUMP_SECTION;
use osmroute_core::dumps::bundle;
use osmroute_core::engines::ENGINES;

#[test]
fn the_readme_lists_every_option_with_its_default() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `")).collect();
    let options = ENGINES
        .iter()
        .flat_map(|e| e.option_specs().map(move |o| (e.name, o)))
        .chain(bundle::OPTIONS.iter().map(|o| (DUMP_SECTION, o)));
    let mut known = Vec::new();
    for (section, option) in options {
        let row = format!("| `{section}.{}` | `{}` |", option.key, option.default);
        assert!(
            rows.iter().any(|r| r.starts_with(&row)),
            "README's configuration table lacks `{row}`"
        );
        known.push(format!("{section}.{}", option.key));
    }
    // And no row for an option that does not exist (any more).
    for row in &rows {
        let first = row.split('|').nth(1).unwrap_or("").trim().trim_matches('`');
        if first.contains('.') && !first.contains(' ') {
            assert!(
                known.iter().any(|k| k == first),
                "README documents `{first}`, which no engine reads"
            );
        }
    }
    assert!(known.len() >= 16, "{known:?}");
}
