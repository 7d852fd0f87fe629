//! The documentation is checked against the code and against itself, so it
//! cannot fall behind: every option the engines read is listed with its
//! default in docs/configuration.md and on its engine's page, and every
//! relative link in the README and docs/ leads to a file (and heading) that
//! exists.

use osmroute_core::config::DUMP_SECTION;
use osmroute_core::dumps::bundle;
use osmroute_core::engines::ENGINES;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `(key, default)` of every row of the option tables in `text`
/// (rows look like ``| `dla.sl` | `0` | meaning |``).
fn option_rows(text: &str) -> BTreeSet<(String, String)> {
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let mut cells = l.split('|').skip(1).map(|c| c.trim().trim_matches('`'));
            let key = cells.next()?;
            let default = cells.next()?;
            (key.contains('.') && !key.contains(' ')).then(|| (key.into(), default.into()))
        })
        .collect()
}

/// `(key, default)` of every option `section`'s reader knows.
fn options_of(section: &str) -> BTreeSet<(String, String)> {
    let specs: Vec<_> = if section == DUMP_SECTION {
        bundle::OPTIONS.iter().collect()
    } else {
        ENGINES
            .iter()
            .filter(|e| e.name == section)
            .flat_map(|e| e.option_specs())
            .collect()
    };
    specs
        .into_iter()
        .map(|o| (format!("{section}.{}", o.key), o.default.to_string()))
        .collect()
}

#[test]
fn the_configuration_page_lists_every_option_with_its_default() {
    let documented = option_rows(&read(&Path::new(ROOT).join("docs/configuration.md")));
    let mut known = BTreeSet::new();
    for section in ENGINES.iter().map(|e| e.name).chain([DUMP_SECTION]) {
        known.extend(options_of(section));
    }
    assert!(known.len() >= 16, "{known:?}");
    assert_eq!(
        documented, known,
        "docs/configuration.md's table (left) must list exactly the options the engines read (right)"
    );
}

#[test]
fn every_engine_page_lists_exactly_its_options() {
    for engine in ENGINES {
        let page = Path::new(ROOT).join(format!("docs/engines/{}.md", engine.name));
        let documented = option_rows(&read(&page));
        assert_eq!(
            documented,
            options_of(engine.name),
            "{}'s option table (left) against its options (right)",
            page.display()
        );
    }
}

/// Every Markdown file of the documentation: README, CHANGELOG, docs/.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = Path::new(ROOT);
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    walk(&root.join("docs"), &mut files);
    files
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// to hyphens; repeated headings get `-1`, `-2`, ...
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 1;
        while seen.contains(&unique) {
            unique = format!("{slug}-{n}");
            n += 1;
        }
        seen.insert(unique);
    }
    seen
}

/// The targets of the Markdown links `[text](target)` in `markdown`.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = markdown;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].to_string());
        }
    }
    targets
}

#[test]
fn every_relative_link_leads_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = read(&file);
        let dir = file.parent().unwrap_or(Path::new(ROOT));
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            if !linked.exists() {
                broken.push(format!("{}: {target} (no such file)", file.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                if !anchors(&read(&linked)).contains(anchor) {
                    broken.push(format!("{}: {target} (no such heading)", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_stays_short() {
    let lines = read(&Path::new(ROOT).join("README.md")).lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: put details in docs/ and link them"
    );
}

#[test]
fn every_decline_and_error_code_is_explained() {
    use osmroute_core::error::{BAD_CONFIGURATION, INVALID_FABRIC, UNKNOWN_ENGINE};
    use osmroute_core::Decline;
    let page = read(&Path::new(ROOT).join("docs/codes.md"));
    let documented: BTreeSet<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| `osmroute-"))
        .filter_map(|l| l.split('`').next())
        .collect();
    let known: BTreeSet<String> = Decline::ALL
        .iter()
        .map(|d| d.code().to_string())
        .chain([INVALID_FABRIC, BAD_CONFIGURATION, UNKNOWN_ENGINE].map(String::from))
        .collect();
    let documented: BTreeSet<String> = documented
        .into_iter()
        .map(|c| format!("osmroute-{c}"))
        .collect();
    assert_eq!(
        documented, known,
        "docs/codes.md (left) against the codes (right)"
    );
    let distinct: BTreeSet<&str> = Decline::ALL.iter().map(|d| d.code()).collect();
    assert_eq!(distinct.len(), Decline::ALL.len(), "codes are unique");
}
