//! What surrounds a topology when an operator saves it from a terminal or
//! a tool: a UTF-8 byte-order mark, CRLF line ends, the shell prompt and
//! command line above it, a banner or the next prompt below it.
//!
//! The readers find the span from the first to the last line that belongs
//! to their format and skip what lies outside it, each skipped line
//! reported (number and text) so the caller can warn. Inside the span
//! every line must parse: an unknown line between two records is a damaged
//! file, not decoration, and stays an error with its line number.

/// A line outside the topology that was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// 1-based line number in the file.
    pub line: usize,
    pub text: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: skipped, not part of the topology: {:?}",
            self.line, self.text
        )
    }
}

/// The text without a leading UTF-8 byte-order mark.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The file's lines (CRLF or LF ends), numbered from 1, and the index range
/// `[first, last]` of lines `is_record` accepts; the non-blank lines outside
/// it that are not `#` comments are returned as skipped. No record at all
/// gives an empty range and skips nothing (the reader then reports an empty
/// topology in its own words).
pub struct Span<'a> {
    pub lines: Vec<&'a str>,
    pub first: usize,
    /// One past the last record line.
    pub end: usize,
    pub skipped: Vec<Skipped>,
}

impl<'a> Span<'a> {
    /// The lines from the first record to the last, with their 1-based
    /// line numbers in the file.
    pub fn topology_lines(&self) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        self.lines[self.first..self.end]
            .iter()
            .enumerate()
            .map(|(i, &line)| (self.first + i + 1, line))
    }
}

pub fn span<'a>(text: &'a str, is_record: impl Fn(&str) -> bool) -> Span<'a> {
    let lines: Vec<&str> = without_bom(text).lines().collect();
    let records: Vec<usize> = (0..lines.len())
        .filter(|&i| is_record(lines[i].trim()))
        .collect();
    let (first, end) = match (records.first(), records.last()) {
        (Some(&a), Some(&z)) => (a, z + 1),
        _ => (0, 0),
    };
    let no_record = records.is_empty();
    let skipped = lines
        .iter()
        .enumerate()
        .filter(|&(i, _)| !no_record && !(first..end).contains(&i))
        .filter(|(_, l)| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#')
        })
        .map(|(i, l)| Skipped {
            line: i + 1,
            text: l.trim().to_string(),
        })
        .collect();
    Span {
        lines,
        first,
        end,
        skipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_runs_from_the_first_to_the_last_record() {
        let text = "\u{feff}user@head:~$ tool\r\n# comment\r\nR 1\r\nnoise\r\nR 2\r\n\r\nuser@head:~$ \r\n";
        let s = span(text, |l| l.starts_with('R'));
        assert_eq!((s.first, s.end), (2, 5));
        assert_eq!(s.lines[2], "R 1");
        let skipped: Vec<_> = s
            .skipped
            .iter()
            .map(|k| (k.line, k.text.as_str()))
            .collect();
        assert_eq!(skipped, [(1, "user@head:~$ tool"), (7, "user@head:~$")]);
        assert_eq!(
            s.skipped[0].to_string(),
            "line 1: skipped, not part of the topology: \"user@head:~$ tool\""
        );
    }

    #[test]
    fn no_record_skips_nothing() {
        let s = span("hello\nworld\n", |_| false);
        assert_eq!((s.first, s.end), (0, 0));
        assert!(s.skipped.is_empty());
    }
}
